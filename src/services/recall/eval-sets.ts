import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EngramError } from '../../core/index.js';

/**
 * The labelled evaluation sets shipped in fixtures/ (docs/SEARCH.md, "Evaluation sets"). Each has memories.jsonl,
 * queries-dev.jsonl and queries-test.jsonl. Tuning reads dev only ({@link tuningQueryFile} refuses test); test is
 * for reporting, through `engram bench retrieval --set NAME --split test`.
 */
export const EVAL_SETS = {
  /** Hand-written lessons and queries (written alongside the first fusion: it flatters it). */
  eval: 'eval',
  /** Turns of real agent sessions (../shared/fixtures/transcripts) and questions about them. */
  conversations: 'eval-conversations',
  /** Engram-like lessons and the queries hooks search with, from real and written hook inputs. */
  lessons: 'eval-lessons',
  /** Multi-session dialogues between two people and questions about persons, events and dates (one store each). */
  dialogue: 'eval-dialogue',
} as const;
export type EvalSetName = keyof typeof EVAL_SETS;
export const EVAL_SET_NAMES = Object.keys(EVAL_SETS) as EvalSetName[];

export type EvalSplit = 'dev' | 'test';

/** Sets whose groups are separate stores (each conversation is its own memory, as in the public conversational
 * benchmarks): the bench loads each group into its own store, so IDF and the abstain rule see one conversation. */
const STORE_PER_GROUP: ReadonlySet<EvalSetName> = new Set(['dialogue']);

/** Paths of one set's memories and one split's queries under an Engram install (or repository) root, and whether
 * each group of the set is its own store (runRetrievalBench `storePerGroup`). */
export function evalSetFiles(root: string, set: EvalSetName, split: EvalSplit): { memories: string; queries: string; storePerGroup: boolean } {
  if (!(set in EVAL_SETS)) {
    throw new EngramError('USAGE', `unknown evaluation set '${set}'; known: ${EVAL_SET_NAMES.join(', ')}`);
  }
  const dir = join(root, 'fixtures', EVAL_SETS[set]);
  const files = { memories: join(dir, 'memories.jsonl'), queries: join(dir, `queries-${split}.jsonl`) };
  for (const file of Object.values(files)) {
    if (!existsSync(file)) throw new EngramError('NOT_FOUND', `evaluation file missing: ${file}`);
  }
  return { ...files, storePerGroup: STORE_PER_GROUP.has(set) };
}

/**
 * The query file a tuning run may read: the dev split, never test. Every script that chooses a constant goes through
 * this, so the numbers reported on test were never seen while choosing (bench/tune.mjs; a test checks the refusal).
 */
export function tuningQueryFile(root: string, set: EvalSetName, split: string = 'dev'): string {
  if (split !== 'dev') {
    throw new EngramError('USAGE', `tuning reads the dev split only; '${split}' is held out for reporting (docs/SEARCH.md)`);
  }
  const { queries } = evalSetFiles(root, set, 'dev');
  if (/queries-test/.test(queries)) throw new EngramError('USAGE', 'tuning may not read a test split');
  return queries;
}
