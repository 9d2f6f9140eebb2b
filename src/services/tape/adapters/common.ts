import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { EngramError, isJsonObject, stringOrNull, type JsonObject } from '../../../core/index.js';
import type { CodeEditEvent, Coverage, Harness, LineRange, MetaEvent, TapeEvent, TapeSource } from '../events.js';

/**
 * Pieces both adapters share: JSON helpers, the event sink that remembers which transcript line produced each
 * event, coverage, the version matrix check, path normalisation, and the line arithmetic behind edit ranges.
 */

export type Json = JsonObject;
export const isObject = isJsonObject;
export const str = stringOrNull;
export const int = (value: unknown): number | null => (typeof value === 'number' && Number.isInteger(value) ? value : null);

export const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
export const hashOrNull = (text: string | null): string | null => (text === null ? null : sha256(text));

/** What every adapter returns. */
export interface AdapterResult {
  harness: Harness;
  /** Session metadata first, then the events of the lines at or after `fromLine`. */
  events: TapeEvent[];
  coverage: Coverage;
  session_id: string;
  cwd: string | null;
  /** The harness version the transcript declares (the first one seen), null when none. */
  harness_version: string | null;
  model: string | null;
  /** Lines in the text (a last line without `\n` included). */
  lines: number;
}

export interface AdapterOptions {
  /** Throw UNSUPPORTED_VERSION instead of ingesting a version outside the matrix. @default false */
  strict?: boolean;
  /**
   * Emit only events produced by lines with this 0-based index or later. Earlier lines are still read, so tool
   * results can be paired with calls made before the cut and session metadata is known (growing sessions).
   */
  fromLine?: number;
  /** Written into the meta event: the tape this one continues. */
  previousTape?: string | null;
  /** Written into the meta event when the transcript does not say (e.g. HEAD of the repository at ingest). */
  repoHead?: string | null;
}

/** An adapter's supported-version matrix (../shared/seeds/000 "Version policy"). */
export interface VersionMatrix {
  /** Lowest supported version, inclusive. */
  min: [number, number, number];
  /** Highest version tested, inclusive up to its minor: anything newer is unknown. */
  maxTested: [number, number, number];
  /** Versions known to write transcripts the adapter misreads. */
  knownBad: string[];
}

/** `1.2.3`, `0.61.1-alpha.1` → [1,2,3]; anything else null. */
export function parseVersion(version: string): [number, number, number] | null {
  const match = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(version.trim());
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : null;
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

/** True when `version` lies in the matrix: ≥ min, same-or-older minor than maxTested, not known bad. */
export function versionSupported(matrix: VersionMatrix, version: string): boolean {
  const parsed = parseVersion(version);
  if (!parsed || matrix.knownBad.includes(version)) return false;
  if (compare(parsed, matrix.min) < 0) return false;
  // Patch releases of the newest tested minor are accepted: both agents ship several a week.
  return compare([parsed[0], parsed[1], 0], [matrix.maxTested[0], matrix.maxTested[1], 0]) <= 0;
}

/** Keys sorted, so the same counts always serialise the same way. */
function sortedCounts(counts: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Collects events with the transcript line that produced them, counts what was skipped, and assembles the result.
 * Lines before `fromLine` are processed (for context) but neither emit events nor count in coverage.
 */
export class EventSink {
  private readonly tagged: Array<{ line: number; event: TapeEvent }> = [];
  private readonly skipped = new Map<string, number>();
  private malformed = 0;
  private readonly versions: string[] = [];
  /** The line being processed. */
  line = 0;

  constructor(
    readonly harness: Harness,
    private readonly fromLine: number,
  ) {}

  /** True while processing lines whose events are kept. */
  get emitting(): boolean {
    return this.line >= this.fromLine;
  }

  push(event: TapeEvent): TapeEvent {
    this.tagged.push({ line: this.line, event });
    return event;
  }

  /** The last event pushed by a kept line (merging never reaches across the cut). */
  last(): TapeEvent | undefined {
    const entry = this.tagged.at(-1);
    return entry && entry.line >= this.fromLine ? entry.event : undefined;
  }

  skip(type: string): void {
    if (this.emitting) this.skipped.set(type, (this.skipped.get(type) ?? 0) + 1);
  }

  badLine(): void {
    if (this.emitting) this.malformed++;
  }

  sawVersion(version: string): void {
    if (!this.versions.includes(version)) this.versions.push(version);
  }

  /** Builds the meta event and the result; throws UNSUPPORTED_VERSION in strict mode. */
  finish(input: {
    matrix: VersionMatrix;
    adapterVersion: number;
    sessionId: string | null;
    cwd: string | null;
    model: string | null;
    repoHead: string | null;
    firstTime: string | null;
    lines: number;
    /** A subagent's own transcript (Claude Code `subagents/agent-*.jsonl`): its agent id, written on the meta event
     * so the tapes of a session's main transcript and of each subagent file can be told apart. */
    fileAgent?: string;
    options: AdapterOptions;
  }): AdapterResult {
    const unknownVersions = this.versions.filter((version) => !versionSupported(input.matrix, version));
    if (this.versions.length === 0) unknownVersions.push('unknown');
    if (input.options.strict && unknownVersions.length > 0) {
      throw new EngramError(
        'UNSUPPORTED_VERSION',
        `${this.harness} transcript version ${unknownVersions.join(', ')} is outside the supported range ` +
          `${input.matrix.min.join('.')}–${input.matrix.maxTested[0]}.${input.matrix.maxTested[1]}.x (strict mode)`,
        {
          details: {
            harness: this.harness,
            versions: unknownVersions,
            supported: { min: input.matrix.min.join('.'), max_tested: input.matrix.maxTested.join('.'), known_bad: input.matrix.knownBad },
          },
        },
      );
    }
    const coverage: Coverage = {
      grade: unknownVersions.length > 0 ? 'degraded' : this.skipped.size > 0 || this.malformed > 0 ? 'partial' : 'full',
      skipped: sortedCounts(this.skipped),
      malformed: this.malformed,
      unknown_versions: unknownVersions,
    };
    const sessionId = input.sessionId ?? 'unknown';
    const source: TapeSource = { harness: this.harness, session_id: sessionId };
    const kept = this.tagged.filter((entry) => entry.line >= this.fromLine).map((entry) => ({ ...entry.event, source }) as TapeEvent);
    const meta: MetaEvent = {
      t: input.firstTime,
      source,
      ...(input.fileAgent !== undefined ? { agent: input.fileAgent } : {}),
      k: 'meta',
      label: 'session',
      model: input.model,
      harness_version: this.versions[0] ?? null,
      cwd: input.cwd,
      repo_head: input.repoHead ?? input.options.repoHead ?? null,
      adapter: { name: this.harness, version: input.adapterVersion },
      coverage,
      previous_tape: input.options.previousTape ?? null,
      lines: [this.fromLine + 1, input.lines],
    };
    return {
      harness: this.harness,
      events: [meta, ...kept],
      coverage,
      session_id: sessionId,
      cwd: input.cwd,
      harness_version: this.versions[0] ?? null,
      model: input.model,
      lines: input.lines,
    };
  }
}

/** Placeholder source: the sink stamps the real one on every event once the session id is known. */
export const PENDING_SOURCE: TapeSource = { harness: 'claude', session_id: '' };

/** Splits text into lines (a trailing `\n` does not start an extra line). */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Parses one transcript line: an object, or null (counted malformed by the caller) for anything else. */
export function parseLine(line: string): Json | null | 'blank' {
  if (line.trim() === '') return 'blank';
  try {
    const value: unknown = JSON.parse(line);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

const WINDOWS_PATH = /^[A-Za-z]:[\\/]|\\/;

/**
 * A file path as tapes store it: relative to the session's cwd (POSIX separators) when inside it, else absolute.
 * Windows paths (`C:\repo\src\a.ts`) are compared with `/` separators.
 */
export function tapePath(file: string, cwd: string | null): string {
  const windows = WINDOWS_PATH.test(file) || (cwd !== null && WINDOWS_PATH.test(cwd));
  const norm = (path: string): string => {
    const slashed = windows ? path.replace(/\\/g, '/') : path;
    const normalized = posix.normalize(slashed);
    return normalized.length > 1 && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized;
  };
  const target = norm(file);
  const isAbsolute = target.startsWith('/') || /^[A-Za-z]:\//.test(target);
  if (!isAbsolute) return target.startsWith('./') ? target.slice(2) : target;
  if (cwd === null) return target;
  const base = norm(cwd);
  if (target === base) return '.';
  const prefix = base.endsWith('/') ? base : `${base}/`;
  return target.startsWith(prefix) ? target.slice(prefix.length) : target;
}

/** Number of lines in file content: `a\nb\n` and `a\nb` both have 2; empty text has 0. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

/** `[1, n]` for whole-file content (`[1, 0]` when empty). */
export const wholeFileRange = (text: string): LineRange => [1, lineCount(text)];

/** One located change inside a file: ranges and the whole lines involved. */
export interface EditRegion {
  before_range: LineRange;
  after_range: LineRange;
  before_text: string;
  after_text: string;
}

/**
 * The changed region of one diff hunk (jsdiff `structuredPatch` or a unified diff): from the first to the last `-`/`+`
 * line, with interior context lines on both sides. An empty side (pure insertion or deletion) gets `[n, n-1]`: it
 * starts where the lines were inserted or removed. Null when the hunk changes nothing.
 */
export function hunkRegion(oldStart: number, newStart: number, lines: readonly string[]): EditRegion | null {
  const body = lines.filter((line) => !line.startsWith('\\'));
  const changed = body.map((line, index) => (line.startsWith('-') || line.startsWith('+') ? index : -1)).filter((index) => index >= 0);
  if (changed.length === 0) return null;
  const first = changed[0] as number;
  const last = changed.at(-1) as number;
  let oldLine = Math.max(oldStart, 1);
  let newLine = Math.max(newStart, 1);
  for (let i = 0; i < first; i++) {
    const line = body[i] as string;
    if (!line.startsWith('+')) oldLine++;
    if (!line.startsWith('-')) newLine++;
  }
  const before: string[] = [];
  const after: string[] = [];
  for (let i = first; i <= last; i++) {
    const line = body[i] as string;
    const text = line.slice(1);
    if (!line.startsWith('+')) before.push(text);
    if (!line.startsWith('-')) after.push(text);
  }
  return {
    before_range: [oldLine, oldLine + before.length - 1],
    after_range: [newLine, newLine + after.length - 1],
    before_text: before.join('\n'),
    after_text: after.join('\n'),
  };
}

/**
 * Hunks of a unified diff (`@@ -a,b +c,d @@` headers); text without headers gives none. A hunk ends when the line
 * counts of its header are used up, so a removed line that itself starts with `--` (`--- sql comment`) is content,
 * and only lines outside a hunk can be file headers.
 */
export function unifiedDiffHunks(diff: string): Array<{ oldStart: number; newStart: number; lines: string[] }> {
  const hunks: Array<{ oldStart: number; newStart: number; lines: string[] }> = [];
  let current: { oldStart: number; newStart: number; lines: string[]; oldLeft: number; newLeft: number } | undefined;
  for (const line of diff.split('\n')) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (header) {
      current = { oldStart: Number(header[1]), newStart: Number(header[3]), lines: [], oldLeft: Number(header[2] ?? 1), newLeft: Number(header[4] ?? 1) };
      hunks.push(current);
      continue;
    }
    if (!current) continue;
    // Some writers drop the space of an empty context line.
    const body = line === '' ? ' ' : line;
    const mark = body[0];
    if (mark === '\\') current.lines.push(body);
    else if (mark === ' ' || mark === '-' || mark === '+') {
      current.lines.push(body);
      if (mark !== '+') current.oldLeft--;
      if (mark !== '-') current.newLeft--;
    } else current = undefined;
    if (current && current.oldLeft <= 0 && current.newLeft <= 0) current = undefined;
  }
  return hunks.map(({ oldStart, newStart, lines }) => {
    while (lines.at(-1) === ' ') lines.pop();
    return { oldStart, newStart, lines };
  });
}

/** The 1-based line containing character `index`. */
function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The whole lines `[start, end]` of `text`, joined without the final newline. */
function linesOf(text: string, start: number, end: number): string {
  if (end < start) return '';
  return text.split('\n').slice(start - 1, end).join('\n');
}

/** The range of the whole lines that characters `[index, index + length)` of `text` touch. */
function spanRange(text: string, index: number, length: number): LineRange {
  const start = lineAt(text, index);
  if (length === 0) return [start, start - 1];
  return [start, lineAt(text, index + length - 1)];
}

/**
 * Replays string replacements (Claude Edit / MultiEdit semantics: each edit applies to the result of the previous
 * one) on the original file, giving each edit its exact ranges in the file as it was just before and after it.
 * Null for an edit whose old text is not found (the original is stale or the record is partial).
 */
export function replayEdits(
  original: string,
  edits: ReadonlyArray<{ old_string: string; new_string: string; replace_all?: boolean }>,
): Array<EditRegion[] | null> {
  let content = original;
  return edits.map((edit) => {
    if (edit.old_string === '' || !content.includes(edit.old_string)) return null;
    const regions: EditRegion[] = [];
    let from = 0;
    for (;;) {
      const index = content.indexOf(edit.old_string, from);
      if (index < 0) break;
      const before = content;
      content = content.slice(0, index) + edit.new_string + content.slice(index + edit.old_string.length);
      const beforeRange = spanRange(before, index, edit.old_string.length);
      const afterRange = spanRange(content, index, edit.new_string.length);
      regions.push({
        before_range: beforeRange,
        after_range: afterRange,
        before_text: linesOf(before, beforeRange[0], beforeRange[1]),
        after_text: linesOf(content, afterRange[0], afterRange[1]),
      });
      from = index + edit.new_string.length;
      if (!edit.replace_all) break;
    }
    return regions;
  });
}

/** A code.edit event from parts (hashes computed here; the store recomputes them after redaction). */
export function editEvent(input: {
  t: string | null;
  file: string;
  op: CodeEditEvent['op'];
  region?: { [K in keyof EditRegion]?: EditRegion[K] | null } | null;
  before_text?: string | null;
  after_text?: string | null;
  call_id: string | null;
  agent?: string | undefined;
}): CodeEditEvent {
  const beforeText = input.region?.before_text ?? input.before_text ?? null;
  const afterText = input.region?.after_text ?? input.after_text ?? null;
  return {
    t: input.t,
    source: PENDING_SOURCE,
    ...(input.agent !== undefined ? { agent: input.agent } : {}),
    k: 'code.edit',
    file: input.file,
    op: input.op,
    before_range: input.region?.before_range ?? null,
    after_range: input.region?.after_range ?? null,
    before_text: beforeText,
    after_text: afterText,
    before_hash: hashOrNull(beforeText),
    after_hash: hashOrNull(afterText),
    call_id: input.call_id,
  };
}
