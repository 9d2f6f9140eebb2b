import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { EngramError, formatIssues, openStore, type EmbedderChoice } from '../../core/index.js';
import { prepareDraft, storeDraft } from '../memory/index.js';
import { createSearchEngine, type SearchMode, type SearchRequest, type SearchResponse } from './search.js';
import type { SearchTuning } from './tuning.js';
import { embedPending } from './vectors.js';

/** A benchmark memory line. */
export const BenchMemorySchema = z.strictObject({
  id: z.string().min(1),
  text: z.string().min(1),
  group: z.string().min(1).optional(),
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
  search?: Pick<SearchRequest, 'abstain'>;
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

/**
 * `engram bench retrieval`: loads the memories into a throwaway store in the system temp folder (never the user's),
 * embeds them with the configured embedder, runs every query in each mode and scores the top k against the labels.
 * A query with a `group` searches only memories of that group.
 */
export async function runRetrievalBench(options: RetrievalBenchOptions): Promise<RetrievalReport[]> {
  const memories = parseLines(options.memories, BenchMemorySchema, 'memories');
  const queries = parseLines(options.queries, BenchQuerySchema, 'queries');
  const ids = new Set<string>();
  for (const memory of memories) {
    if (ids.has(memory.id)) throw new EngramError('INVALID_INPUT', `memories: duplicate id '${memory.id}'`);
    ids.add(memory.id);
  }
  const unknown = queries.flatMap((query) => query.relevant.filter((id) => !ids.has(id)));
  if (unknown.length > 0) {
    throw new EngramError('INVALID_INPUT', `queries: relevant id(s) not among the memories: ${[...new Set(unknown)].slice(0, 10).join(', ')}`);
  }

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
        // A labelled set's memories are all meant to be found: review (services/governance) parks turns that read as
        // contradicting an earlier one as pending, which search hides, and which would make their labels unreachable.
        // The bench measures ranking over every memory, as on a store whose review queue was cleared.
        if (engram.status === 'pending') engram = store.engrams.update(engram.id, { status: 'active', status_reason: null });
        memoryIdsOf.set(engram.id, [...(memoryIdsOf.get(engram.id) ?? []), memory.id]);
      });
    });

    const engine = createSearchEngine(store, { embedder: options.embedder, tuning: options.tuning });
    const needsVectors = options.modes.some((mode) => mode !== 'bm25');
    const { embedder } = needsVectors ? await engine.embedder() : { embedder: null };
    if (embedder) {
      await embedPending(store, embedder, {
        ...(options.batchSize ? { batchSize: options.batchSize } : {}),
        onProgress: (done, total) => options.onProgress?.('embed', done, total),
      });
    }

    const reports: RetrievalReport[] = [];
    for (const mode of options.modes) {
      // One untimed search loads the index and the model, so the timings are of a warm engine.
      await engine.search({ query: 'warm up the index', mode, topK: options.k });
      const judged: Array<{ recall: number; hit: number; rr: number; kind: string | undefined }> = [];
      const latencies: number[] = [];
      const embedTimes: number[] = [];
      let empty = 0;
      let degraded: string | null = null;
      let model: string | null = null;
      for (const [index, query] of queries.entries()) {
        // The ranking is scored as it is; whether the abstain rule would have stayed silent is counted separately
        // (`weak`), so recall measures ranking and `no_answer` measures silence.
        const response = await engine.search({
          abstain: false,
          ...options.search,
          query: query.q,
          mode,
          topK: options.k,
          ...(query.group ? { scope: { project: query.group, includePersonal: false } } : {}),
        });
        options.inspect?.(query, response, (id) => memoryIdsOf.get(id) ?? [], mode);
        latencies.push(response.timings.total_ms);
        if (response.timings.embed_ms > 0) embedTimes.push(response.timings.embed_ms);
        degraded ??= response.degraded;
        model ??= response.model;
        options.onProgress?.('query', index + 1, queries.length);
        if (query.relevant.length === 0) {
          if (response.results.length === 0 || response.weak !== null) empty++;
          continue;
        }
        const relevant = new Set(query.relevant);
        const found = new Set<string>();
        let rr = 0;
        response.results.forEach((hit, rank) => {
          const matched = (memoryIdsOf.get(hit.id) ?? []).filter((id) => relevant.has(id));
          if (matched.length > 0 && rr === 0) rr = 1 / (rank + 1);
          for (const id of matched) found.add(id);
        });
        judged.push({ recall: found.size / relevant.size, hit: found.size > 0 ? 1 : 0, rr, kind: query.kind });
      }
      const kinds = [...new Set(judged.map((q) => q.kind).filter((kind): kind is string => kind !== undefined))].sort();
      const unanswerable = queries.filter((query) => query.relevant.length === 0).length;
      reports.push({
        mode,
        model: mode === 'bm25' ? null : model,
        k: options.k,
        ...scores(judged),
        p50_ms: percentile(latencies, 50),
        p95_ms: percentile(latencies, 95),
        embed_p50_ms: percentile(embedTimes, 50),
        no_answer: { n: unanswerable, empty_rate: unanswerable === 0 ? 0 : round(empty / unanswerable) },
        by_kind: Object.fromEntries(kinds.map((kind) => [kind, scores(judged.filter((q) => q.kind === kind))])),
        degraded,
      });
    }
    return reports;
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
