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

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element (inline charts: no library, nothing fetched). */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Record<string, string | number> = {}, ...children: Array<SVGElement | string>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
}

export const fmtBytes = (n: number): string => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);

export const short = (text: string | null | undefined, max: number): string => {
  if (!text) return '';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
};
