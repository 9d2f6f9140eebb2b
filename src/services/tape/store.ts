import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Decompress, decompress } from 'fzstd';
import { EngramError, redactDeep } from '../../core/index.js';
import { MetaEventSchema, TapeEventSchema, type LoadedTape, type MetaEvent, type TapeEvent } from './events.js';

/**
 * The tape store: JSONL (one event per line, keys in schema order), zstd-compressed, content-addressed, write-once.
 *
 * Library choice. Node 20 has no zstd in zlib (it arrived in 22.15), so a package is needed, and it must install
 * from the npm registry alone — no install scripts, no prebuilt binaries fetched from GitHub (zstd-napi and
 * @mongodb-js/zstd run prebuild-install, which downloads from GitHub and falls back to a compiler):
 * - writing: `@bokuweb/zstd-wasm` (MIT, no dependencies, the reference C zstd compiled to WebAssembly and shipped in
 *   the package). Its init is asynchronous, so writing is async; esbuild keeps it external because it reads its
 *   `zstd.wasm` beside itself.
 * - reading: `fzstd` (MIT, no dependencies, pure JavaScript, by the author of fflate) decompresses synchronously, so
 *   `readTape` is a plain function the index and the CLI can call anywhere, and it bundles.
 * Both read and write standard zstd frames: `zstd -d` opens a tape.
 */

/** zstd level: tapes are written once and read many times; 12 is a good size/speed point for the wasm build. */
const COMPRESSION_LEVEL = 12;
const TAPE_FILE = /^([0-9a-f]{64})\.jsonl\.zst$/;
/** Temp files younger than this may belong to a write in progress; `gc` leaves them. */
export const STALE_TEMP_MS = 10 * 60 * 1000;

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

type ZstdWasm = { init(): Promise<void>; compress(buffer: Uint8Array, level?: number): Uint8Array };
let zstdWasm: Promise<ZstdWasm> | undefined;

/** Loads and initialises the wasm compressor once per process. */
function compressor(): Promise<ZstdWasm> {
  zstdWasm ??= (async () => {
    const module = (await import('@bokuweb/zstd-wasm')) as unknown as ZstdWasm & { default?: ZstdWasm };
    const api = typeof module.compress === 'function' ? module : (module.default as ZstdWasm);
    await api.init();
    return api;
  })();
  return zstdWasm;
}

export async function compressText(text: string): Promise<Buffer> {
  const api = await compressor();
  return Buffer.from(api.compress(Buffer.from(text, 'utf8'), COMPRESSION_LEVEL));
}

export function decompressBytes(bytes: Uint8Array): string {
  return Buffer.from(decompress(bytes)).toString('utf8');
}

/**
 * Redacts every string of every event (secrets and `<private>` spans never reach a tape), recomputes edit hashes from
 * the redacted text (a hash always describes the text beside it), validates, and serialises with the schema's key order.
 */
export function serializeTape(events: readonly TapeEvent[]): { tape_id: string; jsonl: string; events: TapeEvent[] } {
  const clean = events.map((event, offset) => {
    const redacted = redactDeep(event);
    if (redacted.k === 'code.edit') {
      redacted.before_hash = redacted.before_text === null ? null : sha256(redacted.before_text);
      redacted.after_hash = redacted.after_text === null ? null : sha256(redacted.after_text);
    }
    const parsed = TapeEventSchema.safeParse(redacted);
    if (!parsed.success) {
      throw new EngramError('INVALID_INPUT', `tape event ${offset} (${event.k}) is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, {
        details: { offset, kind: event.k },
      });
    }
    return parsed.data;
  });
  const jsonl = clean.map((event) => `${JSON.stringify(event)}\n`).join('');
  return { tape_id: sha256(jsonl), jsonl, events: clean };
}

export const tapeFileName = (tapeId: string): string => `${tapeId}.jsonl.zst`;

/** What {@link writeTape} did. */
export interface WrittenTape {
  tape_id: string;
  path: string;
  /** False when a tape with this id already existed (nothing was touched). */
  written: boolean;
  /** Compressed size on disk. */
  bytes: number;
  events: number;
}

/**
 * Writes a tape once: compressed into a temp file in the same folder, then hard-linked to `<id>.jsonl.zst` (link fails
 * when the name exists, so two writers never clobber each other) and made read-only. An existing id is a no-op.
 */
export async function writeTape(dir: string, events: readonly TapeEvent[]): Promise<WrittenTape> {
  const { tape_id, jsonl, events: clean } = serializeTape(events);
  const path = join(dir, tapeFileName(tape_id));
  if (existsSync(path)) return { tape_id, path, written: false, bytes: statSync(path).size, events: clean.length };
  const bytes = await compressText(jsonl);
  const temporary = join(dir, `.${tape_id.slice(0, 16)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(temporary, bytes, { flag: 'wx', mode: 0o644 });
    chmodSync(temporary, 0o444);
    let written = true;
    try {
      linkSync(temporary, path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') written = false;
      // File systems without hard links: rename, still never over an existing tape.
      else if (existsSync(path)) written = false;
      else renameSync(temporary, path);
    }
    return { tape_id, path, written, bytes: statSync(path).size, events: clean.length };
  } catch (error) {
    throw new EngramError('IO', `could not write tape ${path}: ${(error as Error).message}`, { cause: error });
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** The tape id a file name carries, or null for anything that is not a tape. */
export function tapeIdOf(fileName: string): string | null {
  return TAPE_FILE.exec(fileName)?.[1] ?? null;
}

/** Reads a tape's JSONL text, checking it still hashes to its id. */
export function readTapeText(path: string): string {
  const name = path.split(/[\\/]/).at(-1) ?? '';
  const tapeId = tapeIdOf(name);
  if (tapeId === null) throw new EngramError('INVALID_INPUT', `${path} is not a tape file (<sha256>.jsonl.zst)`);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new EngramError('NOT_FOUND', `no tape at ${path}`);
    throw new EngramError('IO', `cannot read tape ${path}: ${(error as Error).message}`, { cause: error });
  }
  let text: string;
  try {
    text = decompressBytes(bytes);
  } catch (error) {
    throw new EngramError('INVALID_INPUT', `tape ${path} is not valid zstd: ${(error as Error).message}`, { cause: error });
  }
  if (sha256(text) !== tapeId) {
    throw new EngramError('INVALID_INPUT', `tape ${path} is corrupt: its content does not hash to its id`, { details: { tape_id: tapeId } });
  }
  return text;
}

/** How much of a tape file {@link readTapeMeta} reads first: a meta event is well under 1 KB compressed. */
const HEAD_BYTES = 64 * 1024;

/**
 * A tape's first event (its meta), decompressing only the start of the file; null when the file is not a readable
 * tape or does not start with a valid meta event. The content hash is not checked (that needs the whole tape):
 * callers use this for bookkeeping (which session a tape holds), never as evidence.
 */
export function readTapeMeta(path: string): MetaEvent | null {
  try {
    const fd = openSync(path, 'r');
    let text = '';
    try {
      const size = fstatSync(fd).size;
      const head = Buffer.alloc(Math.min(size, HEAD_BYTES));
      readSync(fd, head, 0, head.length, 0);
      const chunks: Uint8Array[] = [];
      const stream = new Decompress((chunk) => chunks.push(chunk));
      stream.push(head, head.length === size);
      text = Buffer.concat(chunks).toString('utf8');
    } finally {
      closeSync(fd);
    }
    if (!text.includes('\n')) text = readTapeText(path); // a first event longer than the head: read it all
    const parsed = MetaEventSchema.safeParse(JSON.parse(text.slice(0, text.indexOf('\n'))));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Reads and validates a tape. */
export function readTape(path: string): LoadedTape {
  const text = readTapeText(path);
  const events = text
    .split('\n')
    .filter((line) => line !== '')
    .map((line, offset) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new EngramError('INVALID_INPUT', `tape ${path} event ${offset} is not JSON`, { cause: error, details: { offset } });
      }
      const parsed = TapeEventSchema.safeParse(value);
      if (!parsed.success) {
        throw new EngramError('INVALID_INPUT', `tape ${path} event ${offset} does not match the tape schema: ${parsed.error.issues[0]?.message ?? ''}`, {
          details: { offset },
        });
      }
      return parsed.data;
    });
  return { tape_id: tapeIdOf(path.split(/[\\/]/).at(-1) ?? '') as string, path, events };
}

/** A tape file in a folder. */
export interface TapeFile {
  tape_id: string;
  path: string;
  /** Compressed size in bytes. */
  size: number;
}

/** The tapes in a folder, sorted by id; a missing folder has none. */
export function listTapes(dir: string): TapeFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((name) => ({ name, tapeId: tapeIdOf(name) }))
    .filter((entry): entry is { name: string; tapeId: string } => entry.tapeId !== null)
    .sort((a, b) => (a.tapeId < b.tapeId ? -1 : 1))
    .map(({ name, tapeId }) => {
      const path = join(dir, name);
      return { tape_id: tapeId, path, size: statSync(path).size };
    });
}

/** Finds a tape by id or by an id prefix of at least 8 hex characters. */
export function resolveTape(dir: string, ref: string): TapeFile {
  const prefix = ref.trim().toLowerCase();
  if (!/^[0-9a-f]{8,64}$/.test(prefix)) {
    throw new EngramError('USAGE', `a tape is named by its id or an id prefix of at least 8 hex characters, got '${ref}'`);
  }
  const matches = listTapes(dir).filter((tape) => tape.tape_id.startsWith(prefix));
  if (matches.length === 0) throw new EngramError('NOT_FOUND', `no tape ${prefix} in ${dir}`);
  if (matches.length > 1) {
    throw new EngramError('INVALID_INPUT', `tape prefix ${prefix} is ambiguous (${matches.length} tapes): give more characters`, {
      details: { candidates: matches.map((tape) => tape.tape_id) },
    });
  }
  return matches[0] as TapeFile;
}

/** One line of `engram tapes`. */
export interface TapeSummary {
  tape_id: string;
  session: { agent: string; id: string };
  /** Time of the first event. */
  time: string | null;
  agent: string;
  /** The subagent that wrote the tape (a `subagents/` transcript), else null. */
  subagent: string | null;
  model: string | null;
  repo_head: string | null;
  previous_tape: string | null;
  events: number;
  /** Compressed size in bytes. */
  size: number;
  coverage: string | null;
}

export function summarizeTape(file: TapeFile): TapeSummary {
  const tape = readTape(file.path);
  const first = tape.events[0];
  const meta = first?.k === 'meta' ? first : undefined;
  const subagent = tape.events.find((event) => event.k !== 'meta' && event.agent !== undefined)?.agent ?? null;
  return {
    tape_id: file.tape_id,
    session: { agent: first?.source.harness ?? 'unknown', id: first?.source.session_id ?? 'unknown' },
    time: first?.t ?? null,
    agent: first?.source.harness ?? 'unknown',
    subagent,
    model: meta?.model ?? null,
    repo_head: meta?.repo_head ?? null,
    previous_tape: meta?.previous_tape ?? null,
    events: tape.events.length,
    size: file.size,
    coverage: meta?.coverage?.grade ?? null,
  };
}

/** What `gc` removed. */
export interface GcReport {
  removed: string[];
  /** Tapes seen (never touched). */
  tapes: number;
}

/**
 * Removes temp files left by interrupted writes (`*.tmp` older than {@link STALE_TEMP_MS}) from the tapes folder and,
 * recursively, the cache folder. Tapes are never touched: only names ending in `.tmp` are candidates.
 */
export function collectGarbage(dirs: { tapes_dir: string; cache_dir: string }, now: Date = new Date()): GcReport {
  const removed: string[] = [];
  const sweep = (dir: string, recursive: boolean): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (recursive) sweep(path, true);
      } else if (entry.isFile() && entry.name.endsWith('.tmp') && tapeIdOf(entry.name) === null) {
        try {
          if (now.getTime() - statSync(path).mtimeMs >= STALE_TEMP_MS) {
            rmSync(path, { force: true });
            removed.push(path);
          }
        } catch {
          // Vanished meanwhile: another gc or the writer finished.
        }
      }
    }
  };
  sweep(dirs.tapes_dir, false);
  sweep(dirs.cache_dir, true);
  return { removed, tapes: listTapes(dirs.tapes_dir).length };
}
