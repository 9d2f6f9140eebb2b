/**
 * What every screen of the page shares: the per-launch secret, the API call that carries it, the status line, errors,
 * and the hash routes (`#screen?key=value`).
 */
import { el } from './dom.js';

const SECRET_KEY = 'engram-ui-secret';
export const SCREENS = ['engrams', 'search', 'review', 'sessions', 'tapes', 'health'] as const;
export type Screen = (typeof SCREENS)[number];

// The launch URL is /ui/#<secret>: keep the secret for this tab and take it out of the address bar and history.
const fragment = location.hash.slice(1);
if (fragment && !(SCREENS as readonly string[]).includes(fragment.split('?')[0] ?? '')) {
  sessionStorage.setItem(SECRET_KEY, fragment);
  history.replaceState(null, '', `${location.pathname}#engrams`);
}
const secret = sessionStorage.getItem(SECRET_KEY) ?? '';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`/ui/api${path}`, {
    method,
    headers: { 'x-engram-ui': secret, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await response.json().catch(() => ({}))) as { error?: string; code?: string };
  if (!response.ok) throw new ApiError(response.status, json.code ?? 'HTTP_ERROR', json.error ?? `HTTP ${response.status}`);
  return json as T;
}

export const main = document.getElementById('main') as HTMLElement;
const statusLine = document.getElementById('status') as HTMLElement;
export const say = (text: string): void => {
  statusLine.textContent = text;
};

export function showError(error: unknown, into: HTMLElement = main): void {
  const message = error instanceof ApiError && error.status === 401 ? 'This page has no valid secret: run `engram ui` again and open the link it prints.' : (error as Error).message;
  into.replaceChildren(el('p', { class: 'error', role: 'alert' }, message));
}

/** The screen and parameters of the address: `#tapes?tape=…&at=12`. */
export function route(): { screen: Screen; params: URLSearchParams } {
  const [name = '', query = ''] = location.hash.slice(1).split('?');
  return { screen: (SCREENS as readonly string[]).includes(name) ? (name as Screen) : 'engrams', params: new URLSearchParams(query) };
}

/** The address of a screen with parameters. */
export function href(screen: Screen, params: Record<string, string | number | undefined> = {}): string {
  const query = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string | number] => entry[1] !== undefined).map(([k, v]) => [k, String(v)]));
  const text = query.toString();
  return `#${screen}${text ? `?${text}` : ''}`;
}

/** A pager: Previous / position / Next. */
export function pager(info: string, previous: (() => void) | null, next: (() => void) | null, id?: string): HTMLElement {
  const prev = el('button', { type: 'button', class: 'prev', ...(previous ? {} : { disabled: '' }) }, '← Previous');
  const nextButton = el('button', { type: 'button', class: 'next', ...(next ? {} : { disabled: '' }) }, 'Next →');
  if (previous) prev.addEventListener('click', previous);
  if (next) nextButton.addEventListener('click', next);
  return el('div', { class: 'pager', ...(id ? { id } : {}) }, prev, el('span', { class: 'page-info' }, info), nextButton);
}

/** A table row that opens something on click and Enter, and takes part in j/k moves. */
export function navRow(key: string, open: () => void, ...cells: HTMLElement[]): HTMLTableRowElement {
  const row = el('tr', { 'data-key': key, class: 'nav-row', tabindex: '0', 'aria-selected': 'false' }, ...cells);
  row.addEventListener('click', open);
  row.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') open();
  });
  return row;
}

/** Marks the row of this key selected in its table. */
export function markSelected(container: ParentNode, key: string): void {
  container.querySelectorAll<HTMLElement>('tr.nav-row').forEach((row) => row.setAttribute('aria-selected', String(row.dataset.key === key)));
}
