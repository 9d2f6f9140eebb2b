import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { EngramError, formatIssues, openStore, type Embedder, type EmbedderChoice, type Store } from '../../core/index.js';
import { prepareDraft, storeDraft } from '../memory/index.js';
import { createSearchEngine, type SearchMode, type SearchRequest, type SearchResponse } from './search.js';
import type { SearchTuning } from './tuning.js';
import { embedPending } from './vectors.js';

/** A benchmark memory line. */
export const BenchMemorySchema = z.strictObject({
  id: z.string().min(1),
  text: z.string().min(1),
  group: z.string().min(1).optional(),
  /** The session it was recorded in, stored as the engram's `session_id` (as the Go engram's observations carry
   * theirs): a conversation's turns, one session of a dated dialogue. Memories are stored in file order, so ids
   * follow the session's order as a live store's would. */
  session: z.string().min(1).optional(),
  category: z.string().min(1).optional(),
  tags: z.array(z.string().min(1)).optional(),
});
export type BenchMemory = z.infer<typeof BenchMemorySchema>;

/** A benchmark query line. `kind` is an optional label; results are also broken down by it. */
export const BenchQuerySchema = z.strictObject({
  q: z.string(),
  relevant: z.array(z.string().min(1)),
  group: z.string().min(1).optional(),
  kind: z.string().min(1).optional(),
  /** fixtures/eval-lessons: the hook event, the query the hook judges relevance against (before tool and file-type
   * words are dropped for searching), where the input came from, and the hook input itself. Carried, not scored. */
  event: z.string().min(1).optional(),
  /** fixtures/eval-dialogue: the question's type as its author wrote it (single, multi-hop, temporal, inference,
   * none). Carried, not scored. */
  type: z.string().min(1).optional(),
  hook_query: z.string().optional(),
  source: z.string().min(1).optional(),
  input: z.unknown().optional(),
});
export type BenchQuery = z.infer<typeof BenchQuerySchema>;

/** Retrieval quality of a set of queries. */
export interface QualityScores {
  n: number;
  'recall@k': number;
  'hit@k': number;
  mrr: number;
}

/** One line of `engram bench retrieval`: one mode. */
export interface RetrievalReport extends QualityScores {
  mode: SearchMode;
  model: string | null;
  k: number;
  /** End-to-end search latency per query, query embedding included. */
  p50_ms: number;
  p95_ms: number;
  /** Query embedding alone. */
  embed_p50_ms: number;
  /** Queries with no relevant memory: how many, and the share the search stayed silent on (the abstain rule, or
   * nothing above the floors). */
  no_answer: { n: number; empty_rate: number };
  /** The same scores per query `kind`, when the file labels them. */
  by_kind: Record<string, QualityScores>;
  degraded: string | null;
}

/** Options for {@link runRetrievalBench}. */
export interface RetrievalBenchOptions {
  memories: readonly string[];
  queries: readonly string[];
  k: number;
  modes: readonly SearchMode[];
  embedder: EmbedderChoice | null;
  tuning: SearchTuning;
  batchSize?: number;
  onProgress?: (stage: 'embed' | 'query', done: number, total: number) => void;
  /** Extra request fields for every search (e.g. `{ abstain: false }` to see the ranking the abstain rule doubts). */
  search?: Pick<SearchRequest, 'abstain' | 'explain'>;
  /** Each group is its own store (memories and queries must all name one): a conversation searched as the only
   * thing its store holds, so IDF and the abstain rule see that conversation alone. @default false */
  storePerGroup?: boolean;
  /** Sees each throwaway store once its memories are embedded, before any query (bench/tune.mjs reads vectors). */
  onStore?: (store: Store, embedder: Embedder | null) => void;
  /**
   * Query lines (the queries file's format; labels unread) searched before the scored queries, in every mode, scored
   * nowhere. The engine keeps state across searches — the store's vector reliability (pipeline step 7) moves with each
   * hybrid search — so a held-out split searched alone starts from the prior where the tables' runs reach it after the
   * dev queries: warming with the dev queries makes `--split test` reproduce them (docs/SEARCH.md, "Evaluation sets").
   */
  warmUp?: readonly string[];
  /** Sees every response with its query, e.g. to judge what hooks would inject (bench/inject.mjs). */
  inspect?: (query: BenchQuery, response: SearchResponse, memoryIdsOf: (engramId: number) => readonly string[], mode: SearchMode) => void;
}

function parseLines<T>(lines: readonly string[], schema: z.ZodType<T>, file: string): T[] {
  const values: T[] = [];
  const errors: Array<{ line: number; message: string }> = [];
  lines.forEach((raw, index) => {
    if (raw.trim() === '' || errors.length >= 20) return;
    try {
      const parsed = schema.safeParse(JSON.parse(raw));
      if (parsed.success) values.push(parsed.data);
      else errors.push({ line: index + 1, message: formatIssues(parsed.error) });
    } catch (error) {
      errors.push({ line: index + 1, message: `malformed JSON (${(error as Error).message})` });
    }
  });
  if (errors.length > 0) {
    const first = errors[0] as { line: number; message: string };
    throw new EngramError('INVALID_INPUT', `${file}: ${errors.length} invalid line(s); line ${first.line}: ${first.message}`, {
      details: { errors },
    });
  }
  return values;
}

/** The p-th percentile (nearest rank) of a sample, rounded to 0.01; 0 for an empty sample. */
/**
 * A ranking scored against a query's answers: recall (share of the relevant memories found) and the reciprocal rank
 * of the first result holding one. `memoriesOf` maps a result to the memories it stands for (a memory may be stored
 * as several engrams, an engram may answer for several memories).
 */
export function scoreRanking(
  results: ReadonlyArray<{ id: number }>,
  relevantIds: readonly string[],
  memoriesOf: (id: number) => readonly string[],
): { recall: number; rr: number } {
  const relevant = new Set(relevantIds);
  const found = new Set<string>();
  let rr = 0;
  results.forEach((hit, rank) => {
    const matched = memoriesOf(hit.id).filter((id) => relevant.has(id));
    if (matched.length > 0 && rr === 0) rr = 1 / (rank + 1);
    for (const id of matched) found.add(id);
  });
  return { recall: relevant.size > 0 ? found.size / relevant.size : 0, rr };
}

export const percentile = (values: readonly number[], p: number): number => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number) * 100) / 100;
};

const round = (value: number): number => Math.round(value * 10_000) / 10_000;

function scores(perQuery: ReadonlyArray<{ recall: number; hit: number; rr: number }>): QualityScores {
  const n = perQuery.length;
  const mean = (pick: (q: { recall: number; hit: number; rr: number }) => number): number =>
    n === 0 ? 0 : round(perQuery.reduce((sum, q) => sum + pick(q), 0) / n);
  return { n, 'recall@k': mean((q) => q.recall), 'hit@k': mean((q) => q.hit), mrr: mean((q) => q.rr) };
}

interface Judged {
  recall: number;
  hit: number;
  rr: number;
  kind: string | undefined;
}

/** What one mode's searches gave, over every store of a run. */
interface ModeTally {
  judged: Judged[];
  latencies: number[];
  embedTimes: number[];
  empty: number;
  degraded: string | null;
  model: string | null;
}

/** What one bench query asks the engine: its text in `mode`, within its group unless the group is the store. */
function searchOf(query: BenchQuery, mode: SearchMode, options: RetrievalBenchOptions): SearchRequest {
  return {
    query: query.q,
    mode,
    topK: options.k,
    ...(query.group && !options.storePerGroup ? { scope: { project: query.group, includePersonal: false } } : {}),
  };
}

/** Loads memories into a throwaway store, embeds them, runs the queries in every mode into `tallies`. Returns the
 * embedder it loaded, for the next store to reuse. */
async function benchStore(
  memories: readonly BenchMemory[],
  queries: readonly BenchQuery[],
  warmUp: readonly BenchQuery[],
  options: RetrievalBenchOptions,
  tallies: Map<SearchMode, ModeTally>,
  loaded: Embedder | null,
  progress: { done: number; total: number },
): Promise<Embedder | null> {
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-'));
  const store = openStore({ path: join(dir, 'bench.db') });
  try {
    // Identical texts in one group collapse into one engram (as they would in real use); it answers for all of them.
    const memoryIdsOf = new Map<number, string[]>();
    const at = new Date().toISOString();
    store.write(() => {
      memories.forEach((memory, index) => {
        let draft;
        try {
          draft = prepareDraft({
            text: memory.text,
            category: memory.category,
            tags: memory.tags,
            project: memory.group,
            scope: memory.group ? 'project' : 'personal',
            source: 'import',
          });
        } catch (error) {
          throw new EngramError('INVALID_INPUT', `memories: line ${index + 1} (${memory.id}): ${(error as Error).message}`);
        }
        let { engram } = storeDraft(store, draft, at, 'skip');
        if (memory.session && engram.session_id == null) engram = store.engrams.update(engram.id, { session_id: memory.session });
        // A labelled set's memories are all meant to be found: review (services/governance) parks turns that read as
        // contradicting an earlier one as pending, which search hides, and which would make their labels unreachable.
        // The bench measures ranking over every memory, as on a store whose review queue was cleared.
        if (engram.status === 'pending') engram = store.engrams.update(engram.id, { status: 'active', status_reason: null });
        memoryIdsOf.set(engram.id, [...(memoryIdsOf.get(engram.id) ?? []), memory.id]);
      });
    });

    const engine = createSearchEngine(store, {
      embedder: options.embedder,
      ...(loaded ? { loadedEmbedder: loaded } : {}),
      tuning: options.tuning,
    });
    const needsVectors = options.modes.some((mode) => mode !== 'bm25');
    const { embedder } = needsVectors ? await engine.embedder() : { embedder: null };
    if (embedder) {
      await embedPending(store, embedder, {
        ...(options.batchSize ? { batchSize: options.batchSize } : {}),
        onProgress: (done, total) => options.onProgress?.('embed', done, total),
      });
    }
    options.onStore?.(store, embedder);

    for (const mode of options.modes) {
      // One untimed search loads the index and the model, so the timings are of a warm engine.
      await engine.search({ query: 'warm up the index', mode, topK: options.k });
      for (const query of warmUp) await engine.search({ abstain: false, ...options.search, ...searchOf(query, mode, options) });
      const tally = tallies.get(mode) ?? { judged: [], latencies: [], embedTimes: [], empty: 0, degraded: null, model: null };
      tallies.set(mode, tally);
      for (const query of queries) {
        // The ranking is scored as it is; whether the abstain rule would have stayed silent is counted separately
        // (`weak`), so recall measures ranking and `no_answer` measures silence.
        const response = await engine.search({ abstain: false, ...options.search, ...searchOf(query, mode, options) });
        options.inspect?.(query, response, (id) => memoryIdsOf.get(id) ?? [], mode);
        tally.latencies.push(response.timings.total_ms);
        if (response.timings.embed_ms > 0) tally.embedTimes.push(response.timings.embed_ms);
        tally.degraded ??= response.degraded;
        tally.model ??= response.model;
        progress.done++;
        options.onProgress?.('query', progress.done, progress.total);
        if (query.relevant.length === 0) {
          if (response.results.length === 0 || response.weak !== null) tally.empty++;
          continue;
        }
        const { recall, rr } = scoreRanking(response.results, query.relevant, (id) => memoryIdsOf.get(id) ?? []);
        tally.judged.push({ recall, hit: recall > 0 ? 1 : 0, rr, kind: query.kind });
      }
    }
    return embedder;
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `engram bench retrieval`: loads the memories into a throwaway store in the system temp folder (never the user's),
 * embeds them with the configured embedder, runs every query in each mode and scores the top k against the labels.
 * A query with a `group` searches only memories of that group; with `storePerGroup` each group is its own store.
 */
export async function runRetrievalBench(options: RetrievalBenchOptions): Promise<RetrievalReport[]> {
  const memories = parseLines(options.memories, BenchMemorySchema, 'memories');
  const queries = parseLines(options.queries, BenchQuerySchema, 'queries');
  const warmUp = parseLines(options.warmUp ?? [], BenchQuerySchema, 'warm-up queries');
  const ids = new Set<string>();
  for (const memory of memories) {
    if (ids.has(memory.id)) throw new EngramError('INVALID_INPUT', `memories: duplicate id '${memory.id}'`);
    ids.add(memory.id);
  }
  const unknown = queries.flatMap((query) => query.relevant.filter((id) => !ids.has(id)));
  if (unknown.length > 0) {
    throw new EngramError('INVALID_INPUT', `queries: relevant id(s) not among the memories: ${[...new Set(unknown)].slice(0, 10).join(', ')}`);
  }
  // One store, or one per group (each with its memories and the queries that name it).
  const stores: Array<{ memories: BenchMemory[]; queries: BenchQuery[]; warmUp: BenchQuery[] }> = [];
  if (options.storePerGroup) {
    const groupless = [...memories, ...queries, ...warmUp].find((line) => line.group === undefined);
    if (groupless) throw new EngramError('INVALID_INPUT', 'storePerGroup: every memory and query needs a group');
    for (const group of [...new Set(memories.map((memory) => memory.group as string))].sort()) {
      stores.push({
        memories: memories.filter((m) => m.group === group),
        queries: queries.filter((q) => q.group === group),
        warmUp: warmUp.filter((q) => q.group === group),
      });
    }
    const orphans = queries.filter((q) => !stores.some((s) => s.memories[0]?.group === q.group));
    if (orphans.length > 0) throw new EngramError('INVALID_INPUT', `queries: group '${orphans[0]?.group}' has no memories`);
  } else {
    stores.push({ memories, queries, warmUp });
  }

  const tallies = new Map<SearchMode, ModeTally>();
  const progress = { done: 0, total: queries.length * options.modes.length };
  let loaded: Embedder | null = null;
  for (const part of stores) loaded = (await benchStore(part.memories, part.queries, part.warmUp, options, tallies, loaded, progress)) ?? loaded;

  const unanswerable = queries.filter((query) => query.relevant.length === 0).length;
  return options.modes.map((mode) => {
    const tally = tallies.get(mode) ?? { judged: [], latencies: [], embedTimes: [], empty: 0, degraded: null, model: null };
    const { judged } = tally;
    const kinds = [...new Set(judged.map((q) => q.kind).filter((kind): kind is string => kind !== undefined))].sort();
    return {
      mode,
      model: mode === 'bm25' ? null : tally.model,
      k: options.k,
      ...scores(judged),
      p50_ms: percentile(tally.latencies, 50),
      p95_ms: percentile(tally.latencies, 95),
      embed_p50_ms: percentile(tally.embedTimes, 50),
      no_answer: { n: unanswerable, empty_rate: unanswerable === 0 ? 0 : round(tally.empty / unanswerable) },
      by_kind: Object.fromEntries(kinds.map((kind) => [kind, scores(judged.filter((q) => q.kind === kind))])),
      degraded: tally.degraded,
    };
  });
}
