// What the index reads from each tape event: the text to fingerprint (split into parts) and where in the code it is.
import type { LineRange, LoadedTape, TapeEvent } from './events.js';

/** Which text of an event a fingerprint came from. */
export const PART = {
  /** Messages, tool input and output, read code, compaction summaries, link notes. */
  text: 0,
  /** The text an edit replaced (the old span). */
  before: 1,
  /** The text an edit wrote (the new span: a lineage node). */
  after: 2,
} as const;
export type Part = (typeof PART)[keyof typeof PART];

/** The indexable facts of one event. */
export interface EventContent {
  kind: TapeEvent['k'];
  file: string | null;
  /** For edits the new range, for reads the range read, for links the target range. */
  range: LineRange | null;
  /** For edits the replaced range. */
  beforeRange: LineRange | null;
  op: string | null;
  /** Texts to fingerprint, by part. */
  texts: Array<{ part: Part; text: string }>;
  /** Counts towards conversation continuation (messages and compaction summaries). */
  conversational: boolean;
}

/** String leaves of a tool call's arguments (a command, a pattern, a path), joined by line breaks. */
function argumentText(args: unknown, into: string[] = []): string[] {
  if (typeof args === 'string') into.push(args);
  else if (Array.isArray(args)) for (const item of args) argumentText(item, into);
  else if (args && typeof args === 'object') for (const value of Object.values(args)) argumentText(value, into);
  return into;
}

/** The tool calls whose content the adapter already gave as `code.edit` events (their arguments would only repeat it). */
export function editCallIds(tape: LoadedTape): Set<string> {
  const ids = new Set<string>();
  for (const event of tape.events) if (event.k === 'code.edit' && event.call_id) ids.add(event.call_id);
  return ids;
}

/** What the index keeps of one event, or null when it has neither text nor a location. */
export function eventContent(event: TapeEvent, editCalls: ReadonlySet<string>): EventContent | null {
  const base = { kind: event.k, file: null, range: null, beforeRange: null, op: null, conversational: false };
  switch (event.k) {
    case 'meta':
      return event.summary ? { ...base, texts: [{ part: PART.text, text: event.summary }], conversational: true } : null;
    case 'msg.in':
    case 'msg.out':
      return { ...base, texts: [{ part: PART.text, text: event.text }], conversational: true };
    case 'tool.call': {
      if (editCalls.has(event.call_id)) return null;
      const text = argumentText(event.args).join('\n');
      return text.trim() ? { ...base, texts: [{ part: PART.text, text }] } : null;
    }
    case 'tool.result': {
      const text = event.stderr ? `${event.stdout}\n${event.stderr}` : event.stdout;
      return text.trim() ? { ...base, texts: [{ part: PART.text, text }] } : null;
    }
    case 'code.read':
      return { ...base, file: event.file, range: event.range, texts: event.text ? [{ part: PART.text, text: event.text }] : [] };
    case 'code.edit': {
      const texts: EventContent['texts'] = [];
      if (event.before_text) texts.push({ part: PART.before, text: event.before_text });
      if (event.after_text) texts.push({ part: PART.after, text: event.after_text });
      return { ...base, file: event.file, range: event.after_range, beforeRange: event.before_range, op: event.op, texts };
    }
    case 'span.link':
      return { ...base, file: event.to_file, range: event.to_range, texts: event.note ? [{ part: PART.text, text: event.note }] : [] };
  }
}

/** Milliseconds since the epoch of an ISO time, or null when absent or unreadable. */
export function timeMs(time: string | null): number | null {
  if (!time) return null;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? null : ms;
}

/** True when an edit removed its span: op `delete`, or an edit whose new text is empty. */
export function isDeletion(event: Extract<TapeEvent, { k: 'code.edit' }>): boolean {
  return event.op === 'delete' || (event.after_text !== null && event.after_text.trim() === '' && event.op === 'edit');
}

/** The time of a tape's first event that has a readable one (tapes are indexed oldest first), or null. */
export function firstMs(tape: LoadedTape): number | null {
  for (const event of tape.events) {
    const ms = timeMs(event.t);
    if (ms !== null) return ms;
  }
  return null;
}
