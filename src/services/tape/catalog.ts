/**
 * Tapes for a person to browse (the viewer's Tapes screen, a session's tapes): the tapes of several folders as one
 * list, newest file first, paged; and one tape's events a page at a time, each trimmed to what a timeline shows.
 * Tapes are write-once and named by their content's hash, so what is read of one is kept in memory: a tape's meta
 * (its first event, read from the head of the file) while its file keeps its size and mtime, and the last few tapes
 * read whole.
 * @module
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { EngramError } from '../../core/index.js';
import type { LineRange, LoadedTape, MetaEvent, TapeEvent } from './events.js';
import { readTape, readTapeMeta, tapeIdOf } from './store.js';

/** One tape file and what its first event says. */
export interface TapeEntry {
  tape_id: string;
  path: string;
  /** The tapes folder it is in. */
  dir: string;
  /** Compressed size in bytes. */
  size: number;
  /** When the file was written (tapes are write-once): the list's order. */
  written_at: string;
  /** Time of the first event. */
  time: string | null;
  harness: string | null;
  session_id: string | null;
  /** The subagent whose transcript it records, else null. */
  agent: string | null;
  cwd: string | null;
  model: string | null;
  previous_tape: string | null;
  /** The transcript lines it holds. */
  lines: LineRange | null;
  coverage: string | null;
}

/** Options for {@link listTapePage}. */
export interface TapePageOptions {
  /** Only tapes of this agent session. */
  session?: string;
  /** @default 50 */
  limit?: number;
  /** @default 0 */
  offset?: number;
}

interface TapeFileStat {
  tape_id: string;
  path: string;
  dir: string;
  size: number;
  mtimeMs: number;
}

/** Metas kept in memory, by path (bounded: a store with more tapes reads the rest again). */
const META_CACHE_LIMIT = 50_000;
const metaCache = new Map<string, { size: number; mtimeMs: number; meta: MetaEvent | null }>();

function metaOf(file: TapeFileStat): MetaEvent | null {
  const cached = metaCache.get(file.path);
  if (cached && cached.size === file.size && cached.mtimeMs === file.mtimeMs) return cached.meta;
  const meta = readTapeMeta(file.path);
  if (metaCache.size >= META_CACHE_LIMIT) metaCache.clear();
  metaCache.set(file.path, { size: file.size, mtimeMs: file.mtimeMs, meta });
  return meta;
}

/** The tape files of these folders (missing folders have none), newest file first, then by id. */
function tapeFiles(dirs: readonly string[]): TapeFileStat[] {
  const files: TapeFileStat[] = [];
  for (const dir of new Set(dirs)) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const tapeId = tapeIdOf(name);
      if (tapeId === null) continue;
      const path = join(dir, name);
      try {
        const stat = statSync(path);
        files.push({ tape_id: tapeId, path, dir, size: stat.size, mtimeMs: stat.mtimeMs });
      } catch {
        // Removed while listing.
      }
    }
  }
  return files.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.tape_id < b.tape_id ? -1 : 1));
}

function entryOf(file: TapeFileStat): TapeEntry {
  const meta = metaOf(file);
  return {
    tape_id: file.tape_id,
    path: file.path,
    dir: file.dir,
    size: file.size,
    written_at: new Date(file.mtimeMs).toISOString(),
    time: meta?.t ?? null,
    harness: meta?.source.harness ?? null,
    session_id: meta?.source.session_id ?? null,
    agent: meta?.agent ?? null,
    cwd: meta?.cwd ?? null,
    model: meta?.model ?? null,
    previous_tape: meta?.previous_tape ?? null,
    lines: meta?.lines ?? null,
    coverage: meta?.coverage?.grade ?? null,
  };
}

const checkPage = (limit: number, offset: number, max: number): void => {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw new EngramError('INVALID_INPUT', `limit must be an integer from 1 to ${max}, got ${limit}`);
  if (!Number.isInteger(offset) || offset < 0) throw new EngramError('INVALID_INPUT', `offset must be a non-negative integer, got ${offset}`);
};

/**
 * A page of the tapes in these folders, newest file first. Only the page's tapes are read (their first event),
 * except with `session`, which reads every tape's first event once (then kept) to find that session's.
 */
export function listTapePage(dirs: readonly string[], options: TapePageOptions = {}): { tapes: TapeEntry[]; total: number; limit: number; offset: number } {
  const limit = options.limit ?? 50;
  const offset = options.offset ?? 0;
  checkPage(limit, offset, 500);
  let files = tapeFiles(dirs);
  if (options.session !== undefined) files = files.filter((file) => metaOf(file)?.source.session_id === options.session);
  return { tapes: files.slice(offset, offset + limit).map(entryOf), total: files.length, limit, offset };
}

/** A tape of these folders by id (or an id prefix of at least 8 hex characters). */
export function findTape(dirs: readonly string[], ref: string): TapeEntry {
  const prefix = ref.trim().toLowerCase();
  if (!/^[0-9a-f]{8,64}$/.test(prefix)) throw new EngramError('INVALID_INPUT', `a tape is named by its id or an id prefix of at least 8 hex characters, got '${ref}'`);
  const matches = tapeFiles(dirs).filter((file) => file.tape_id.startsWith(prefix));
  // One tape may be in two folders (a repository opted in after its tapes were recorded in the home): same content.
  const ids = new Set(matches.map((file) => file.tape_id));
  if (ids.size === 0) throw new EngramError('NOT_FOUND', `no tape ${prefix} in the known tape folders`);
  if (ids.size > 1) throw new EngramError('INVALID_INPUT', `tape prefix ${prefix} is ambiguous (${ids.size} tapes): give more characters`);
  return entryOf(matches[0] as TapeFileStat);
}

/** Characters of one field of an event a timeline shows (the whole event is in the tape: `engram show`). */
export const TIMELINE_FIELD_CHARS = 4_000;

/** One event as a timeline shows it: its offset, kind, time and its fields with long texts cut. */
export interface TimelineEvent {
  offset: number;
  k: TapeEvent['k'];
  t: string | null;
  agent: string | null;
  /** msg.in / msg.out text, tool.result output, a compaction summary, a link's note. */
  text: string | null;
  tool: string | null;
  call_id: string | null;
  /** tool.call arguments as JSON. */
  args: string | null;
  is_error: boolean | null;
  exit: number | null;
  file: string | null;
  /** code.edit's operation. */
  op: string | null;
  /** code.read's range, or code.edit's range after the edit (else before it). */
  range: LineRange | null;
  before_range: LineRange | null;
  before_text: string | null;
  after_text: string | null;
  /** span.link's target. */
  to_file: string | null;
  to_range: LineRange | null;
  /** Some field was cut to {@link TIMELINE_FIELD_CHARS}. */
  truncated: boolean;
}

/** A page of a tape's events. */
export interface TimelinePage {
  tape: TapeEntry;
  /** Events in the tape. */
  total: number;
  offset: number;
  limit: number;
  /** Events of each kind in the whole tape. */
  kinds: Record<string, number>;
  events: TimelineEvent[];
}

/** Tapes read whole, newest use last (a timeline pages through one tape). */
const LOADED_LIMIT = 4;
const loaded = new Map<string, LoadedTape>();

function load(path: string): LoadedTape {
  const hit = loaded.get(path);
  if (hit) {
    loaded.delete(path);
    loaded.set(path, hit);
    return hit;
  }
  const tape = readTape(path);
  loaded.set(path, tape);
  while (loaded.size > LOADED_LIMIT) loaded.delete(loaded.keys().next().value as string);
  return tape;
}

function timelineEvent(event: TapeEvent, offset: number): TimelineEvent {
  let truncated = false;
  const cut = (text: string | null | undefined): string | null => {
    if (text === null || text === undefined) return null;
    if (text.length <= TIMELINE_FIELD_CHARS) return text;
    truncated = true;
    // Never half of a surrogate pair (an emoji at the cut): a lone surrogate is not text.
    let end = TIMELINE_FIELD_CHARS - 1;
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end--;
    return `${text.slice(0, end)}…`;
  };
  const view: TimelineEvent = {
    offset,
    k: event.k,
    t: event.t,
    agent: event.agent ?? null,
    text: null,
    tool: null,
    call_id: null,
    args: null,
    is_error: null,
    exit: null,
    file: null,
    op: null,
    range: null,
    before_range: null,
    before_text: null,
    after_text: null,
    to_file: null,
    to_range: null,
    truncated: false,
  };
  switch (event.k) {
    case 'meta':
      view.text = cut(event.label === 'compaction' ? (event.summary ?? 'context compacted') : `session start${event.cwd ? ` in ${event.cwd}` : ''}${event.model ? ` · ${event.model}` : ''}`);
      break;
    case 'msg.in':
    case 'msg.out':
      view.text = cut(event.text);
      break;
    case 'tool.call':
      view.tool = event.tool;
      view.call_id = event.call_id;
      view.args = cut(JSON.stringify(event.args ?? null));
      break;
    case 'tool.result':
      view.tool = event.tool;
      view.call_id = event.call_id;
      view.text = cut([event.stdout, event.stderr ?? ''].filter(Boolean).join('\n'));
      view.is_error = event.is_error;
      view.exit = event.exit ?? null;
      break;
    case 'code.read':
      view.file = event.file;
      view.range = event.range;
      view.text = cut(event.text);
      break;
    case 'code.edit':
      view.file = event.file;
      view.op = event.op;
      view.range = event.after_range ?? event.before_range;
      view.before_range = event.before_range;
      view.before_text = cut(event.before_text);
      view.after_text = cut(event.after_text);
      view.call_id = event.call_id;
      break;
    case 'span.link':
      view.file = event.from_file;
      view.range = event.from_range;
      view.to_file = event.to_file;
      view.to_range = event.to_range;
      view.text = cut(event.note);
      break;
  }
  view.truncated = truncated;
  return view;
}

/**
 * A page of one tape's events: from `offset`, or the page of `limit` events that holds `around` (the viewer opens a
 * tape at the moment an edit happened).
 */
export function tapeTimeline(entry: TapeEntry, options: { offset?: number; limit?: number; around?: number } = {}): TimelinePage {
  const limit = options.limit ?? 200;
  checkPage(limit, options.offset ?? 0, 1_000);
  const tape = load(entry.path);
  const total = tape.events.length;
  if (options.around !== undefined && (!Number.isInteger(options.around) || options.around < 0 || options.around >= total)) {
    throw new EngramError('INVALID_INPUT', `event ${options.around} is not in tape ${entry.tape_id.slice(0, 12)}, which has ${total} events`);
  }
  const offset = options.around !== undefined ? Math.floor(options.around / limit) * limit : (options.offset ?? 0);
  const kinds: Record<string, number> = {};
  for (const event of tape.events) kinds[event.k] = (kinds[event.k] ?? 0) + 1;
  const events = tape.events.slice(offset, offset + limit).map((event, index) => timelineEvent(event, offset + index));
  return { tape: entry, total, offset, limit, kinds, events };
}
