import type { Engram } from '../../core/index.js';
import { INJECT } from './tuning.js';

/** The markers around every injected block: extraction strips them so injected memories are never re-learned. */
export const BLOCK_OPEN = '[ENGRAM]';
export const BLOCK_CLOSE = '[/ENGRAM]';

/** One rendered memory and what it cost. */
export interface RenderedItem {
  id: number;
  chars: number;
}

/** A block ready to inject, and what did not fit. */
export interface RenderedBlock {
  text: string;
  items: RenderedItem[];
  dropped: number[];
}

/** An engram's text cannot close or open our block early, and stays on one line. */
const flatten = (value: string): string =>
  value
    .replace(/\[\/?ENGRAM\]/gi, (marker) => marker.replace(/\[/, '(').replace(/\]/, ')'))
    .replace(/\s+/g, ' ')
    .trim();

/** `- EG#12 [development/payments] Title: text` — the id first, so the agent can cite it. */
export function renderItem(engram: Pick<Engram, 'id' | 'category' | 'title' | 'text'>): string {
  const title = engram.title ? `${flatten(engram.title)}: ` : '';
  let body = `${title}${flatten(engram.text)}`;
  if (body.length > INJECT.itemChars) body = `${body.slice(0, INJECT.itemChars - 1)}…`;
  return `- EG#${engram.id} [${engram.category}] ${body}`;
}

/**
 * One clearly marked block, factual in tone (imperative "system" text trips prompt-injection defences), within
 * `budget` characters in total. Items are taken in order; one that does not fit is dropped and named in a last line,
 * so the agent knows more exists.
 */
export function renderBlock(
  engrams: ReadonlyArray<Pick<Engram, 'id' | 'category' | 'title' | 'text'>>,
  options: { heading: string; budget: number },
): RenderedBlock | null {
  const head = `${BLOCK_OPEN} ${options.heading} (ids are citable as EG#<id>)`;
  const fixed = head.length + BLOCK_CLOSE.length + 2;
  const reserve = 60; // room for the "not shown" line
  const items: RenderedItem[] = [];
  const lines: string[] = [];
  const dropped: number[] = [];
  let used = fixed;
  for (const engram of engrams) {
    const line = renderItem(engram);
    if (used + line.length + 1 + reserve > options.budget) {
      dropped.push(engram.id);
      continue;
    }
    lines.push(line);
    items.push({ id: engram.id, chars: line.length + 1 });
    used += line.length + 1;
  }
  if (items.length === 0) return null;
  if (dropped.length > 0) {
    const shown = dropped.slice(0, 5).map((id) => `EG#${id}`).join(', ');
    lines.push(`(${dropped.length} more not shown for space: ${shown}${dropped.length > 5 ? ', …' : ''})`);
  }
  return { text: [head, ...lines, BLOCK_CLOSE].join('\n'), items, dropped };
}
