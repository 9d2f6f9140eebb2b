/** Tiny DOM helpers: elements from attributes and children (text is always set as text, never parsed as HTML). */
export type Child = Node | string | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
    if (name === 'style') node.style.cssText = value;
    else if (name === 'value' && (node instanceof HTMLInputElement || node instanceof HTMLTextAreaElement)) node.value = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

export const fmtNum = (n: number): string => n.toLocaleString('en-US');

export function fmtDate(iso: string | null | undefined): string {
  if (!iso) return 'never';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().slice(0, 16).replace('T', ' ');
}

export function statusChip(status: string): HTMLElement {
  return el('span', { class: `chip st-${status}`, 'data-status': status }, status);
}
