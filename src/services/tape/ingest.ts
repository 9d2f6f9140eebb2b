import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import * as z from 'zod';
import { EngramError, homePaths, isEngramError, type EngramEnv } from '../../core/index.js';
import { adaptTranscript, detectHarness } from './adapters/index.js';
import { HarnessSchema, RangeSchema, type Coverage, type Harness, type MetaEvent } from './events.js';
import { tapeLocation } from './location.js';
import { subagentTranscripts } from './record.js';
import { listTapes, readTapeMeta, writeTape } from './store.js';

/**
 * Incremental ingest: finds this repository's sessions in the agents' log folders and turns what is new in each
 * transcript into a tape. Per-source cursors (`<cache>/cursors/*.json`) remember how many complete lines were
 * consumed, a hash of those bytes, and the last tape, so a second run adds nothing and a grown transcript yields a
 * tape of only its new lines whose meta names the previous tape. A line without its final `\n` is still being written
 * and waits for the next run.
 *
 * The cursors are a cache (the cache folder is documented as rebuildable): without one, ingest continues a transcript
 * from the tapes themselves — each tape's meta says which session (and subagent file) it holds and which transcript
 * lines — so a lost cache never records the same moments twice. `<cache>/tape-spans.json` remembers those metas by
 * tape id (derived too: rebuilt from the tapes' first events).
 */

export interface IngestOptions {
  /** A folder inside the repository whose sessions are ingested. */
  cwd: string;
  /** Engram's home and the agents' folders, as core/env reads them. */
  env: Pick<EngramEnv, 'home' | 'claudeConfigDir' | 'codexHome'>;
  /** Only this agent's sessions. */
  agent?: Harness;
  /** Ingest this transcript only (skips discovery). */
  file?: string;
  /** Reject versions outside the adapters' matrices (the source reports UNSUPPORTED_VERSION and is left for later). */
  strict?: boolean;
}

export interface IngestSource {
  path: string;
  /** Null for a file that is neither agent's transcript (reported as an `error`). */
  harness: Harness | null;
  session_id: string | null;
  /** The tape written (or found already written) for the new lines; null when nothing new made one. */
  tape_id: string | null;
  /** `written`, `existing` (same tape already on disk), `unchanged` (no new complete line), `empty` (new lines held nothing to record), `error`. */
  status: 'written' | 'existing' | 'unchanged' | 'empty' | 'error';
  new_lines: number;
  coverage: Coverage | null;
  error?: { code: string; message: string };
}

export interface IngestReport {
  root: string;
  opted_in: boolean;
  tapes_dir: string;
  tapes_written: number;
  tapes_existing: number;
  sources: IngestSource[];
}

const CursorSchema = z
  .object({
    path: z.string(),
    harness: HarnessSchema,
    /** Bytes of complete lines consumed. */
    bytes: z.number().int().min(0),
    /** Complete lines consumed. */
    lines: z.number().int().min(0),
    /** SHA-256 of those bytes: a rewritten transcript is read again from its start. */
    prefix_sha256: z.string(),
    last_tape_id: z.string().nullable(),
    session_id: z.string().nullable(),
    /** The file's size and mtime when it was last read: unchanged, it is not read again. */
    size: z.number().int().min(0).optional(),
    mtime: z.number().optional(),
  })
  .strict();
type Cursor = z.infer<typeof CursorSchema>;

const cursorPath = (cacheDir: string, source: string): string =>
  join(cacheDir, 'cursors', `${createHash('sha256').update(source).digest('hex').slice(0, 24)}.json`);

function readCursor(cacheDir: string, source: string): Cursor | null {
  try {
    const parsed = CursorSchema.safeParse(JSON.parse(readFileSync(cursorPath(cacheDir, source), 'utf8')));
    // A damaged cursor only costs a re-read: the same tapes come out and are found already written.
    return parsed.success && parsed.data.path === source ? parsed.data : null;
  } catch {
    return null;
  }
}

function writeCursor(cacheDir: string, cursor: Cursor): void {
  const path = cursorPath(cacheDir, cursor.path);
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(join(cacheDir, 'cursors'), { recursive: true });
    writeFileSync(temporary, `${JSON.stringify(cursor, null, 2)}\n`);
    renameSync(temporary, path);
  } catch (error) {
    throw new EngramError('IO', `could not save the ingest cursor ${path}: ${(error as Error).message}`, { cause: error });
  }
}

const inside = (root: string, path: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);

/** The first `maxBytes` of a file as text (enough for the first lines of a transcript). */
function readHead(path: string, maxBytes: number): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(maxBytes);
    const read = readSync(fd, buffer, 0, maxBytes, 0);
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * How much of a transcript's start discovery reads to find its cwd: usually the first line or two, so 64 KB first
 * (discovery looks at every session the agents ever logged, on every `engram ingest` and pre-commit), and 4 MB only
 * when a long first record (Codex's session_meta carries the base instructions) hides it.
 */
const HEAD_BYTES = [64 * 1024, 4 * 1024 * 1024] as const;

/** The session cwd a transcript declares in its first lines (Claude `cwd`, Codex `session_meta.payload.cwd`). */
function transcriptCwd(path: string): string | null {
  let total: number;
  try {
    total = statSync(path).size;
  } catch {
    return null;
  }
  for (const size of HEAD_BYTES) {
    let head: string;
    try {
      head = readHead(path, size);
    } catch {
      return null;
    }
    for (const line of head.split('\n').slice(0, 200)) {
      try {
        const record = JSON.parse(line) as { cwd?: unknown; type?: unknown; payload?: { cwd?: unknown } };
        if (typeof record.cwd === 'string') return record.cwd;
        if (record.type === 'session_meta' && typeof record.payload?.cwd === 'string') return record.payload.cwd;
      } catch {
        // A cut or damaged line: keep looking.
      }
    }
    if (total <= size) return null; // The whole file was read.
  }
  return null;
}

/**
 * The folder each transcript declares, remembered between runs by path, size and mtime:
 * discovery looks at every session the agents ever logged, and a finished session never changes, so a repeated
 * ingest (every commit, with the git hook) stats them instead of reading them. One file per Engram home
 * (`$ENGRAM_HOME/cache/discovery.json`), never in a repository: it names other projects' folders. A damaged cache
 * is only a re-read.
 */
const DiscoveryCacheSchema = z.record(z.string(), z.object({ size: z.number(), mtime: z.number(), cwd: z.string().nullable() }));

class CwdCache {
  private readonly entries: z.infer<typeof DiscoveryCacheSchema>;
  private changed = false;

  constructor(private readonly file: string) {
    let entries: z.infer<typeof DiscoveryCacheSchema> = {};
    try {
      const parsed = DiscoveryCacheSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
      if (parsed.success) entries = parsed.data;
    } catch {
      // Absent or damaged: start empty.
    }
    this.entries = entries;
  }

  cwdOf(path: string): string | null {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      return null;
    }
    const known = this.entries[path];
    if (known && known.size === stat.size && known.mtime === stat.mtimeMs) return known.cwd;
    const cwd = transcriptCwd(path);
    this.entries[path] = { size: stat.size, mtime: stat.mtimeMs, cwd };
    this.changed = true;
    return cwd;
  }

  save(): void {
    if (!this.changed) return;
    try {
      mkdirSync(dirname(this.file), { recursive: true });
      const temporary = `${this.file}.${process.pid}.tmp`;
      writeFileSync(temporary, JSON.stringify(this.entries));
      renameSync(temporary, this.file);
    } catch {
      // A cache that cannot be written costs a re-read next time, nothing else.
    }
  }
}

const listDir = (dir: string): string[] => {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
};

/**
 * Claude Code keeps a project's sessions in `<config>/projects/<cwd with every non-alphanumeric character → ->/`.
 * Sessions started in a subfolder get their own folder, so every folder whose name starts with the root's encoding
 * is a candidate, and each transcript's own `cwd` decides (which also rejects `/repo-other` for `/repo`).
 */
export function claudeProjectFolderName(path: string): string {
  return path.replace(/[^A-Za-z0-9]/g, '-');
}

/** Which sessions discovery keeps: a cwd test, and a cheap test on Claude's project folder names before any file is read. */
export interface SessionMatch {
  cwd(cwd: string): boolean;
  claudeFolder(name: string): boolean;
  /** A transcript whose cwd cannot be read is kept when its folder is exactly this one. */
  claudeExactFolder?: string;
}

/** The sessions of one repository: started in it or in a folder inside it. */
export const repositoryMatch = (root: string): SessionMatch => {
  const encoded = claudeProjectFolderName(root);
  return {
    cwd: (cwd) => inside(root, resolve(cwd)),
    claudeFolder: (folder) => folder === encoded || folder.startsWith(`${encoded}-`),
    claudeExactFolder: encoded,
  };
};

function discoverClaude(match: SessionMatch, claudeConfigDir: string, cache: CwdCache): string[] {
  const projects = join(claudeConfigDir, 'projects');
  const found: string[] = [];
  for (const folder of listDir(projects)) {
    if (!match.claudeFolder(folder)) continue;
    for (const name of listDir(join(projects, folder))) {
      if (!name.endsWith('.jsonl')) continue;
      const path = join(projects, folder, name);
      const cwd = cache.cwdOf(path);
      if (cwd !== null ? match.cwd(cwd) : folder === match.claudeExactFolder) found.push(path, ...subagentTranscripts(path));
    }
  }
  return found;
}

/** Codex rollouts under `sessions/YYYY/MM/DD/` (and `archived_sessions/`) whose session_meta cwd is in the repo. */
function discoverCodex(match: SessionMatch, codexHome: string, cache: CwdCache): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    for (const name of listDir(dir)) {
      const path = join(dir, name);
      if (name.startsWith('rollout-') && name.endsWith('.jsonl')) {
        const cwd = cache.cwdOf(path);
        if (cwd !== null && match.cwd(cwd)) found.push(path);
      } else if (depth < 4) {
        try {
          if (statSync(path).isDirectory()) walk(path, depth + 1);
        } catch {
          // Vanished or unreadable: skip.
        }
      }
    }
  };
  walk(join(codexHome, 'sessions'), 0);
  walk(join(codexHome, 'archived_sessions'), 0);
  return found;
}

/**
 * Transcripts in the agents' log folders (Claude Code's projects, Codex's sessions) whose session folder passes
 * `match` — by default the sessions of one repository. Knowledge docs pass their own `project_match` substrings.
 */
export function discoverTranscripts(options: {
  env: Pick<EngramEnv, 'home' | 'claudeConfigDir' | 'codexHome'>;
  match: SessionMatch;
  agent?: Harness;
}): Array<{ path: string; harness: Harness }> {
  const cache = new CwdCache(join(homePaths(options.env.home).cache, 'discovery.json'));
  const found: Array<{ path: string; harness: Harness }> = [];
  if (options.agent !== 'codex') for (const path of discoverClaude(options.match, options.env.claudeConfigDir, cache)) found.push({ path, harness: 'claude' });
  if (options.agent !== 'claude') for (const path of discoverCodex(options.match, options.env.codexHome, cache)) found.push({ path, harness: 'codex' });
  cache.save();
  return found;
}

/** A tape's bookkeeping, from its meta event: which transcript of which session, and which of its lines. */
const TapeSpanSchema = z.object({
  harness: HarnessSchema,
  session_id: z.string(),
  /** The subagent file's agent id (Claude Code `subagents/`), null for a main transcript. */
  agent: z.string().nullable(),
  /** Null for a tape written before tapes carried their lines. */
  lines: RangeSchema.nullable(),
});
const TapeSpansFileSchema = z.record(z.string(), TapeSpanSchema.nullable());

const spanKey = (harness: Harness, sessionId: string, agent: string | null): string => `${harness}\u0000${sessionId}\u0000${agent ?? ''}`;

/**
 * The sessions the tapes of one folder hold, and how far each transcript is recorded: what ingest continues from when a
 * transcript has no cursor. Loaded once per ingest run, on first need; tapes it has not seen are read up to their
 * first event.
 */
class TapeSpans {
  private spans: Record<string, z.infer<typeof TapeSpanSchema> | null> | null = null;
  private changed = false;

  constructor(private readonly dirs: { tapes_dir: string; cache_dir: string }) {}

  private file(): string {
    return join(this.dirs.cache_dir, 'tape-spans.json');
  }

  private load(): Record<string, z.infer<typeof TapeSpanSchema> | null> {
    if (this.spans) return this.spans;
    let known: Record<string, z.infer<typeof TapeSpanSchema> | null> = {};
    try {
      const parsed = TapeSpansFileSchema.safeParse(JSON.parse(readFileSync(this.file(), 'utf8')));
      if (parsed.success) known = parsed.data;
    } catch {
      // Absent or damaged: rebuilt from the tapes.
    }
    const spans: Record<string, z.infer<typeof TapeSpanSchema> | null> = {};
    for (const tape of listTapes(this.dirs.tapes_dir)) {
      if (tape.tape_id in known) {
        spans[tape.tape_id] = known[tape.tape_id] ?? null;
      } else {
        spans[tape.tape_id] = spanOf(readTapeMeta(tape.path));
        this.changed = true;
      }
    }
    if (Object.keys(known).some((id) => !(id in spans))) this.changed = true;
    this.spans = spans;
    return spans;
  }

  /** The tape that recorded the furthest line of this transcript, or null (none, or only tapes without lines). */
  furthest(harness: Harness, sessionId: string, agent: string | null): { tape_id: string; end: number } | null {
    const key = spanKey(harness, sessionId, agent);
    let best: { tape_id: string; end: number } | null = null;
    for (const [tapeId, span] of Object.entries(this.load())) {
      if (!span?.lines || spanKey(span.harness, span.session_id, span.agent) !== key) continue;
      if (!best || span.lines[1] > best.end) best = { tape_id: tapeId, end: span.lines[1] };
    }
    return best;
  }

  /** A tape just written (or found written) by this run. */
  add(tapeId: string, meta: MetaEvent | undefined): void {
    if (!this.spans) return; // Not loaded: the next load reads it from the folder.
    this.spans[tapeId] = spanOf(meta ?? null);
    this.changed = true;
  }

  save(): void {
    if (!this.changed || !this.spans) return;
    try {
      mkdirSync(this.dirs.cache_dir, { recursive: true });
      const temporary = `${this.file()}.${process.pid}.tmp`;
      writeFileSync(temporary, JSON.stringify(this.spans));
      renameSync(temporary, this.file());
    } catch {
      // Unwritable: the tapes are read again next time, nothing else.
    }
  }
}

function spanOf(meta: MetaEvent | null): z.infer<typeof TapeSpanSchema> | null {
  if (!meta) return null;
  return { harness: meta.source.harness, session_id: meta.source.session_id, agent: meta.agent ?? null, lines: meta.lines ?? null };
}

/** Ingests one transcript from its cursor, or, without one, from the tapes that already hold part of it. */
async function ingestSource(
  path: string,
  harnessHint: Harness | null,
  dirs: { tapes_dir: string; cache_dir: string },
  strict: boolean,
  spans: TapeSpans,
): Promise<IngestSource> {
  let bytes: Buffer;
  let stat: { size: number; mtimeMs: number };
  let cursor = readCursor(dirs.cache_dir, path);
  try {
    stat = statSync(path);
    // A finished session is looked at on every ingest (every commit, with the git hook): unchanged, it is not read.
    if (cursor && cursor.size === stat.size && cursor.mtime === stat.mtimeMs) {
      return { path, harness: cursor.harness, session_id: cursor.session_id, tape_id: null, status: 'unchanged', new_lines: 0, coverage: null };
    }
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new EngramError(code === 'ENOENT' ? 'NOT_FOUND' : 'IO', `cannot read transcript ${path}: ${(error as Error).message}`);
  }
  // Only complete lines: the agent may be writing the last one right now.
  const complete = bytes.subarray(0, bytes.lastIndexOf(10) + 1);
  const text = complete.toString('utf8');
  const harness = harnessHint ?? detectHarness(text);
  const cursorLost = cursor === null;
  if (cursor && (cursor.bytes > complete.length || createHash('sha256').update(complete.subarray(0, cursor.bytes)).digest('hex') !== cursor.prefix_sha256)) {
    cursor = null; // Rewritten or replaced: read it again from the start.
  }
  const base: IngestSource = { path, harness, session_id: cursor?.session_id ?? null, tape_id: null, status: 'unchanged', new_lines: 0, coverage: null };
  if (cursor && cursor.bytes === complete.length) return base;

  const totalLines = text === '' ? 0 : text.split('\n').length - 1;
  let fromLine = cursor?.lines ?? 0;
  let previousTape = cursor?.last_tape_id ?? null;
  const source: IngestSource = { ...base, new_lines: totalLines - fromLine };
  if (totalLines === 0) return source;
  let adapted;
  try {
    // Without a hint or a recognisable line, adaptTranscript refuses the text (INVALID_INPUT), reported below.
    adapted = adaptTranscript(text, { ...(harness ? { harness } : {}), strict, fromLine, previousTape });
    if (cursorLost) {
      // No cursor (a new transcript, or a lost cache): the tapes say how far this transcript is recorded already.
      const meta = adapted.events[0]?.k === 'meta' ? adapted.events[0] : undefined;
      const recorded = spans.furthest(adapted.harness, adapted.session_id, meta?.agent ?? null);
      if (recorded && recorded.end <= totalLines) {
        fromLine = recorded.end;
        previousTape = recorded.tape_id;
        source.new_lines = totalLines - fromLine;
        adapted = adaptTranscript(text, { harness: adapted.harness, strict, fromLine, previousTape });
      }
    }
  } catch (error) {
    if (!isEngramError(error, 'UNSUPPORTED_VERSION', 'INVALID_INPUT')) throw error;
    return { ...source, status: 'error', error: { code: error.code, message: error.message } };
  }
  source.session_id = adapted.session_id;
  source.coverage = adapted.coverage;
  let lastTapeId = previousTape;
  // A tape of nothing but its meta event says nothing: the new lines were hook chatter or token counts (or, without a
  // cursor, everything was on tape already).
  if (adapted.events.length <= 1) {
    source.status = fromLine === totalLines ? 'unchanged' : 'empty';
  } else {
    const written = await writeTape(dirs.tapes_dir, adapted.events);
    source.tape_id = written.tape_id;
    source.status = written.written ? 'written' : 'existing';
    lastTapeId = written.tape_id;
    spans.add(written.tape_id, adapted.events[0]?.k === 'meta' ? adapted.events[0] : undefined);
  }
  writeCursor(dirs.cache_dir, {
    path,
    harness: adapted.harness,
    size: stat.size,
    mtime: stat.mtimeMs,
    bytes: complete.length,
    lines: totalLines,
    prefix_sha256: createHash('sha256').update(complete).digest('hex'),
    last_tape_id: lastTapeId,
    session_id: adapted.session_id,
  });
  return source;
}

/**
 * Ingests this repository's agent sessions (or one `file`) into tapes. Tapes go where {@link tapeLocation} says:
 * into the repository only when it opted in with `engram init`, else under `$ENGRAM_HOME`.
 */
export async function ingestSessions(options: IngestOptions): Promise<IngestReport> {
  const location = tapeLocation(options.cwd, options.env.home);
  const candidates: Array<{ path: string; harness: Harness | null }> =
    options.file !== undefined
      ? [{ path: resolve(options.cwd, options.file), harness: options.agent ?? null }]
      : discoverTranscripts({ env: options.env, match: repositoryMatch(location.root), ...(options.agent ? { agent: options.agent } : {}) });
  const sources: IngestSource[] = [];
  const spans = new TapeSpans(location);
  try {
    for (const candidate of candidates) {
      sources.push(await ingestSource(candidate.path, candidate.harness, location, options.strict ?? false, spans));
    }
  } finally {
    spans.save();
  }
  return {
    root: location.root,
    opted_in: location.opted_in,
    tapes_dir: location.tapes_dir,
    tapes_written: sources.filter((source) => source.status === 'written').length,
    tapes_existing: sources.filter((source) => source.status === 'existing').length,
    sources,
  };
}
