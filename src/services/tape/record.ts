import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EngramError } from '../../core/index.js';
import { adaptTranscript } from './adapters/index.js';
import type { Coverage, Harness } from './events.js';
import { tapeLocation } from './location.js';
import { writeTape } from './store.js';

export interface RecordOptions {
  /** The transcript text (e.g. piped to `engram record --stdin`). One of `text` and `path`. */
  text?: string;
  /** A transcript file; a Claude transcript's `<session>/subagents/*.jsonl` files beside it are recorded too. */
  path?: string;
  /** The agent that wrote it; detected when absent. */
  harness?: Harness;
  /** Decides where tapes go (the repository it belongs to, opted in or not). */
  cwd: string;
  /** `$ENGRAM_HOME`. */
  home: string;
  /** Reject versions outside the adapter's matrix (UNSUPPORTED_VERSION) instead of recording them degraded. */
  strict?: boolean;
}

/** One tape recorded from one transcript. */
export interface RecordedTape {
  tape_id: string;
  path: string;
  /** False when the same tape already existed. */
  written: boolean;
  source: string | null;
  harness: Harness;
  session_id: string;
  events: number;
  coverage: Coverage;
}

export interface RecordResult {
  tapes_dir: string;
  opted_in: boolean;
  tapes_written: number;
  tapes_existing: number;
  tapes: RecordedTape[];
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new EngramError(code === 'ENOENT' ? 'NOT_FOUND' : 'IO', `cannot read transcript ${path}: ${(error as Error).message}`);
  }
}

/** Claude Code's subagent transcripts for a main transcript: `<dir>/<session>/subagents/*.jsonl`, sorted. */
export function subagentTranscripts(path: string): string[] {
  const folder = join(dirname(path), basename(path, '.jsonl'), 'subagents');
  try {
    return readdirSync(folder)
      .filter((name) => name.endsWith('.jsonl'))
      .sort()
      .map((name) => join(folder, name));
  } catch {
    return [];
  }
}

/** Records a whole transcript (and its subagents, for a path) as tapes. Recording the same transcript twice is a no-op. */
export async function recordTranscript(options: RecordOptions): Promise<RecordResult> {
  if ((options.text === undefined) === (options.path === undefined)) {
    throw new EngramError('USAGE', 'record needs exactly one of a transcript text and a transcript path');
  }
  const location = tapeLocation(options.cwd, options.home);
  const inputs: Array<{ source: string | null; text: string; main: boolean }> =
    options.path !== undefined
      ? [options.path, ...subagentTranscripts(options.path)].map((path, i) => ({ source: path, text: readText(path), main: i === 0 }))
      : [{ source: null, text: options.text as string, main: true }];
  const tapes: RecordedTape[] = [];
  for (const input of inputs) {
    const adapted = adaptTranscript(input.text, {
      strict: options.strict ?? false,
      // Subagent files are always Claude Code's; the given harness describes the main transcript.
      ...(options.harness && input.main ? { harness: options.harness } : {}),
    });
    const written = await writeTape(location.tapes_dir, adapted.events);
    tapes.push({
      tape_id: written.tape_id,
      path: written.path,
      written: written.written,
      source: input.source,
      harness: adapted.harness,
      session_id: adapted.session_id,
      events: written.events,
      coverage: adapted.coverage,
    });
  }
  return {
    tapes_dir: location.tapes_dir,
    opted_in: location.opted_in,
    tapes_written: tapes.filter((tape) => tape.written).length,
    tapes_existing: tapes.filter((tape) => !tape.written).length,
    tapes,
  };
}
