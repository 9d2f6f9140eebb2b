/**
 * The moment an engram was learned, in its session's tape: the event that holds the quoted evidence, widened to the
 * exchange around it (from the person's message to the last event before their next one), the files read and edited
 * then, and — only when the engram names them — the code spans it is about (what liveness follows).
 * @module
 */
import { basename } from 'node:path';
import type { CodeEditEvent, LoadedTape, TapeEvent } from '../tape/index.js';
import { listTapes, readTape, tapeLocation } from '../tape/index.js';
import type { EngramSource, SourceFile, SourceSpan } from '../governance/index.js';

/** Bounds of a moment, with the reason for each. */
export const MOMENT = {
  /** Events kept after the quoted one: one exchange rarely needs more, and `engram why` prints them. */
  maxAfter: 60,
  /** Events kept before it, back to the person's message that started the exchange. */
  maxBefore: 20,
  /** Characters of the quote compared (extraction checks quotes the same way). */
  quoteChars: 120,
} as const;

const squash = (text: string): string => text.replace(/\s+/g, ' ').trim().toLowerCase();

/** The text of an event a quote can come from. */
export function eventText(event: TapeEvent): string {
  switch (event.k) {
    case 'msg.in':
    case 'msg.out':
      return event.text;
    case 'tool.result':
      return `${event.stdout}\n${event.stderr ?? ''}`;
    case 'meta':
      return event.summary ?? '';
    default:
      return '';
  }
}

/** Where a quote is in a tape: `[from, to]` (inclusive event offsets) and the event that holds it; null if absent. */
export function findMoment(tape: LoadedTape, quote: string): { from: number; to: number; at: number } | null {
  const needle = squash(quote).replace(/^["'“”]+|["'“”]+$/g, '').slice(0, MOMENT.quoteChars);
  if (needle.length < 8) return null;
  const at = tape.events.findIndex((event) => squash(eventText(event)).includes(needle));
  if (at < 0) return null;
  let from = at;
  while (from > 0 && at - from < MOMENT.maxBefore && tape.events[from]?.k !== 'msg.in') from--;
  let to = at;
  while (to + 1 < tape.events.length && to - at < MOMENT.maxAfter && tape.events[to + 1]?.k !== 'msg.in') to++;
  return { from, to, at };
}

/** Names a text may use for the code an edit wrote: the file's name and the declarations in the new text. */
export function codeNames(edit: Pick<CodeEditEvent, 'file' | 'after_text'>): string[] {
  const names = new Set<string>([basename(edit.file)]);
  const declaration = /\b(?:function|class|interface|type|enum|def|fn|struct|trait|module|export\s+(?:const|let|var|default\s+function|async\s+function))\s+([A-Za-z_$][\w$]{3,})/g;
  for (const match of (edit.after_text ?? '').matchAll(declaration)) names.add(match[1] as string);
  return [...names];
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** True when the text names one of the code's names (whole word). */
export function namesCode(text: string, names: readonly string[]): boolean {
  return names.some((name) => new RegExp(`(^|[^\\w$.])${escape(name)}($|[^\\w$])`).test(text));
}

/** The moment of a quote in these tapes, as an engram source; null when no tape holds the quote. */
export function momentSource(
  tapes: readonly LoadedTape[],
  quote: string,
  engramText: string,
  context: { sessionId: string | null; cwd: string | null },
): EngramSource | null {
  for (const tape of tapes) {
    const moment = findMoment(tape, quote);
    if (!moment) continue;
    const files: SourceFile[] = [];
    const spans: SourceSpan[] = [];
    for (let offset = moment.from; offset <= moment.to; offset++) {
      const event = tape.events[offset] as TapeEvent;
      if (event.k === 'code.read') files.push({ file: event.file, kind: 'read', start: event.range?.[0] ?? null, end: event.range?.[1] ?? null });
      if (event.k !== 'code.edit') continue;
      const range = event.after_range ?? event.before_range;
      files.push({ file: event.file, kind: 'edit', start: range?.[0] ?? null, end: range?.[1] ?? null });
      // Liveness follows code the engram is about, not every file the session happened to touch then (a convention
      // learned while editing a file is not about that file: its truth does not die with the code).
      if (event.after_range && event.after_text && namesCode(engramText, codeNames(event))) {
        spans.push({ file: event.file, start: event.after_range[0], end: event.after_range[1], tape_id: tape.tape_id, offset });
      }
    }
    const unique = [...new Map(files.map((file) => [`${file.kind}:${file.file}:${file.start}:${file.end}`, file])).values()];
    return {
      session_id: context.sessionId,
      tape_id: tape.tape_id,
      cwd: context.cwd,
      event_from: moment.from,
      event_to: moment.to,
      quote: quote.slice(0, 500),
      files: unique,
      spans,
    };
  }
  return null;
}

/** Reads the tapes with these ids from a folder's tape location (missing ones are skipped). */
export function loadTapes(cwd: string, home: string, ids: readonly string[]): LoadedTape[] {
  if (ids.length === 0) return [];
  const wanted = new Set(ids);
  const tapes: LoadedTape[] = [];
  for (const file of listTapes(tapeLocation(cwd, home).tapes_dir)) {
    if (!wanted.has(file.tape_id)) continue;
    try {
      tapes.push(readTape(file.path));
    } catch {
      // A damaged tape gives no provenance; the engram is still learned.
    }
  }
  return tapes;
}

/** The tapes of one session in a folder's tape location (for `engram extract`, which has no list of tape ids). */
export function tapesOfSession(cwd: string, home: string, sessionId: string): LoadedTape[] {
  const tapes: LoadedTape[] = [];
  for (const file of listTapes(tapeLocation(cwd, home).tapes_dir)) {
    try {
      const tape = readTape(file.path);
      if (tape.events[0]?.source.session_id === sessionId) tapes.push(tape);
    } catch {
      // A damaged tape gives no provenance.
    }
  }
  return tapes;
}
