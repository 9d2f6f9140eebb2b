import {
  EngramError,
  KNN_MAX_K,
  loadEmbedder,
  type Embedder,
  type EmbedderChoice,
  type Engram,
  type RecallFields,
  type Store,
  type VectorSpace,
} from '../../core/index.js';
import { abstainReason, type AbstainReason } from './abstain.js';
import { createBm25Cache, type Bm25Cache, type Bm25Filter, type Bm25Source } from './bm25.js';
import { reciprocalRankFusion, type RankedList } from './fusion.js';
import { DEFAULT_STATUSES, passesGates, type SearchEnvironment, type SearchFilters } from './gates.js';
import { TUNING, type SearchTuning } from './tuning.js';
import { embedPending } from './vectors.js';

/** Which signals a search uses. */
export const SEARCH_MODES = ['hybrid', 'bm25', 'vector'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** One search. */
export interface SearchRequest extends SearchFilters {
  query: string;
  /** @default tuning.topK (10) */
  topK?: number;
  /** @default "hybrid" */
  mode?: SearchMode;
  environment?: SearchEnvironment;
  /** A precomputed query vector (benchmarks time embedding separately). */
  queryVector?: Float32Array;
}

/** One result. */
export interface SearchHit {
  id: number;
  /** Fused score after adjustments; 1.0 ≈ first in every list. */
  score: number;
  /** 1-based rank in each list after gates, or null. */
  ranks: { bm25: number | null; vector: number | null };
  /** Raw signal values: BM25 score and cosine similarity, or null. */
  signals: { bm25: number | null; vector: number | null };
  engram: Engram;
}

/** A search's answer. */
export interface SearchResponse {
  query: string;
  mode: SearchMode;
  /** The embedding model used for the vector list, or null. */
  model: string | null;
  /** Why nothing was searched (content-free query), or null. */
  abstained: AbstainReason | null;
  /** Why a requested signal was missing or partial (no model, stale vectors), or null. */
  degraded: string | null;
  results: SearchHit[];
  timings: { embed_ms: number; total_ms: number; bm25_index: Bm25Source | null };
}

/** Options for {@link createSearchEngine}. */
export interface SearchEngineOptions {
  /** Which embedder to use (core/embed's resolveEmbedder), or null for BM25 only. */
  embedder: EmbedderChoice | null;
  /** An embedder already loaded (benchmarks); wins over `embedder`. */
  loadedEmbedder?: Embedder;
  /** Where BM25 snapshots persist; undefined: memory only. */
  indexDir?: string;
  tuning: SearchTuning;
  /** At most this many missing vectors are embedded before a search answers; beyond that the search reports
   * itself degraded. @default TUNING.catchUpMax (a hook's server passes a smaller number) */
  catchUpMax?: number;
  /** Texts per embedding call when catching up on missing vectors. @default per embedder kind (TUNING.batchSize) */
  batchSize?: number;
  now?: () => Date;
  /** Non-fatal problems (snapshot not writable, catch-up failed) go here. */
  onWarning?: (message: string, error?: unknown) => void;
}

/** A search engine bound to one store; holds the BM25 index and the embedder warm between searches. */
export interface SearchEngine {
  search(request: SearchRequest): Promise<SearchResponse>;
  /** The loaded embedder, or null with the reason. Loads on first call. */
  embedder(): Promise<{ embedder: Embedder | null; reason: string }>;
}

const elapsed = (start: number): number => Math.round((performance.now() - start) * 100) / 100;

/** Projects a BM25 scope filter into wink's retained fields. */
function bm25Filter(filters: SearchFilters): Bm25Filter {
  return {
    statuses: new Set(filters.statuses ?? DEFAULT_STATUSES),
    ...(filters.pendingLearnedBy?.length ? { pendingLearnedBy: new Set(filters.pendingLearnedBy) } : {}),
    ...(filters.category !== undefined ? { category: filters.category } : {}),
    ...(filters.tags?.length ? { tags: filters.tags } : {}),
    ...(filters.scope
      ? { projects: new Set([filters.scope.project, ...(filters.scope.includePersonal ? [''] : [])]) }
      : {}),
  };
}

/** Creates a search engine. Nothing loads until the first search. */
export function createSearchEngine(store: Store, options: SearchEngineOptions): SearchEngine {
  const now = options.now ?? (() => new Date());
  const warn = options.onWarning ?? (() => {});
  const bm25: Bm25Cache = createBm25Cache(options.indexDir, (error) => warn('could not persist the BM25 snapshot', error));
  let loaded: Promise<{ embedder: Embedder | null; reason: string }> | undefined;
  // The store generation at which vectors were last brought up to date; a warm engine skips the check until it moves.
  let syncedAt: { generation: number; degraded: string | null } | undefined;

  const embedder = (): Promise<{ embedder: Embedder | null; reason: string }> => {
    loaded ??= (async () => {
      if (options.loadedEmbedder) return { embedder: options.loadedEmbedder, reason: 'preloaded' };
      const choice = options.embedder;
      if (!choice?.spec) return { embedder: null, reason: choice?.reason ?? 'no embedder configured' };
      try {
        return { embedder: await loadEmbedder(choice.spec, (line) => warn(line)), reason: choice.reason };
      } catch (error) {
        warn('embedding model failed to load; searching with BM25 only', error);
        return { embedder: null, reason: (error as Error).message };
      }
    })();
    return loaded;
  };

  /** The vector space to search, after embedding up to catchUpMax engrams that lack vectors. */
  const vectorSpace = async (model: Embedder): Promise<{ space: VectorSpace | undefined; degraded: string | null }> => {
    const vectors = store.vectors();
    const generation = store.searchState().generation;
    const cached = vectors.findSpace(model.model, model.dim);
    if (cached && syncedAt?.generation === generation) return { space: cached, degraded: syncedAt.degraded };
    let degraded: string | null = null;
    const pending = cached ? vectors.countPending(cached) : store.engrams.counts().active;
    if (pending > 0) {
      if (pending <= (options.catchUpMax ?? TUNING.catchUpMax)) {
        try {
          await embedPending(store, model, { ...(options.batchSize ? { batchSize: options.batchSize } : {}), now });
        } catch (error) {
          degraded = `${pending} engram(s) lack vectors and could not be embedded now (${(error as Error).message})`;
          warn('vector catch-up failed', error);
        }
      } else {
        degraded = `${pending} engrams lack vectors for ${model.model}; run 'engram reindex' (until then they are found by BM25 only)`;
      }
    }
    // Embedding writes vectors, not engrams, so the generation read above still describes what was synced. A
    // degraded state is not remembered: vectors written meanwhile (a warm server embeds in the background) count.
    syncedAt = degraded ? undefined : { generation, degraded };
    return { space: vectors.findSpace(model.model, model.dim), degraded };
  };

  /** Vector hits that pass the gates, nearest first, similarity above the model's floor; widens k as gates reject. */
  const vectorList = (
    space: VectorSpace,
    model: Embedder,
    vector: Float32Array,
    prefetch: (ids: readonly number[]) => void,
    accept: (id: number) => boolean,
  ) => {
    const floor = TUNING.vectorFloor[model.kind] ?? 0;
    const hits: Array<{ id: number; similarity: number }> = [];
    let k = TUNING.pool;
    for (;;) {
      const neighbours = k > KNN_MAX_K ? store.vectors().scan(space, vector, k) : store.vectors().knn(space, vector, k);
      hits.length = 0;
      let belowFloor = false;
      prefetch(neighbours.filter((n) => 1 - n.distance >= floor).map((n) => n.id));
      for (const neighbour of neighbours) {
        const similarity = 1 - neighbour.distance;
        if (similarity < floor) {
          belowFloor = true;
          break;
        }
        if (accept(neighbour.id)) hits.push({ id: neighbour.id, similarity });
        if (hits.length >= TUNING.pool) break;
      }
      // Done when the pool is full, when the rest is below the floor, or when the table has no more rows.
      if (hits.length >= TUNING.pool || belowFloor || neighbours.length < k) return hits;
      k *= 4;
    }
  };

  return {
    embedder,
    async search(request) {
      const started = performance.now();
      const mode = request.mode ?? 'hybrid';
      const topK = Math.max(1, request.topK ?? options.tuning.topK);
      const environment = request.environment ?? {};
      const response: SearchResponse = {
        query: request.query,
        mode,
        model: null,
        abstained: abstainReason(request.query),
        degraded: null,
        results: [],
        timings: { embed_ms: 0, total_ms: 0, bm25_index: null },
      };
      if (response.abstained) {
        response.timings.total_ms = elapsed(started);
        return response;
      }

      // Candidates are judged on a few columns; whole engrams are read only for the results returned.
      const candidates = new Map<number, RecallFields | null>();
      const fetch = (ids: readonly number[]): void => {
        const missing = ids.filter((id) => !candidates.has(id));
        for (const id of missing) candidates.set(id, null);
        for (const row of store.engrams.recallFields(missing)) candidates.set(row.id, row);
      };
      const accept = (id: number): boolean => {
        if (!candidates.has(id)) fetch([id]);
        const row = candidates.get(id);
        return row !== null && row !== undefined && passesGates(row, request, environment);
      };

      const lists: RankedList[] = [];
      const bm25Scores = new Map<number, number>();
      if (mode !== 'vector') {
        const { index, source } = bm25.get(store);
        response.timings.bm25_index = source;
        const hits = index.search(request.query, TUNING.pool * TUNING.bm25Overfetch, bm25Filter(request));
        const kept: typeof hits = [];
        // Gates rarely reject (wink already applied the filters), so read one pool's worth of rows at a time.
        for (let start = 0; start < hits.length && kept.length < TUNING.pool; start += TUNING.pool) {
          const chunk = hits.slice(start, start + TUNING.pool);
          fetch(chunk.map((hit) => hit.id));
          for (const hit of chunk) if (kept.length < TUNING.pool && accept(hit.id)) kept.push(hit);
        }
        for (const hit of kept) bm25Scores.set(hit.id, hit.score);
        lists.push({ signal: 'bm25', ids: kept.map((hit) => hit.id), weight: mode === 'bm25' ? 1 : options.tuning.weights.bm25 });
      }

      const similarities = new Map<number, number>();
      if (mode !== 'bm25') {
        const { embedder: model, reason } = await embedder();
        if (!model) {
          response.degraded = `vector search unavailable: ${reason}`;
        } else {
          let space: VectorSpace | undefined;
          try {
            ({ space, degraded: response.degraded } = await vectorSpace(model));
          } catch (error) {
            response.degraded = `vector search unavailable: ${(error as Error).message}`;
          }
          if (space) {
            response.model = model.model;
            let vector = request.queryVector;
            if (!vector) {
              const embedStart = performance.now();
              try {
                [vector] = await model.embed([request.query.slice(0, TUNING.queryChars)]);
              } catch (error) {
                warn('query embedding failed; answering with BM25 only', error);
                response.degraded = `vector search unavailable: ${(error as Error).message}`;
              }
              response.timings.embed_ms = elapsed(embedStart);
            } else if (vector.length !== space.dim) {
              throw new EngramError('INVALID_INPUT', `query vector has ${vector.length} dimensions; ${model.model} has ${space.dim}`);
            }
            if (vector) {
              const hits = vectorList(space, model, vector, fetch, accept);
              for (const hit of hits) similarities.set(hit.id, hit.similarity);
              lists.push({ signal: 'vector', ids: hits.map((hit) => hit.id), weight: mode === 'vector' ? 1 : options.tuning.weights.vector });
            }
          }
        }
      }

      const fused = reciprocalRankFusion(lists, options.tuning.rrfK, TUNING.pool);
      const top = adjust(store, fused, candidates, environment, now()).slice(0, topK);
      const engrams = new Map(store.engrams.getMany(top.map((entry) => entry.id)).map((engram) => [engram.id, engram]));
      response.results = top.map((entry) => ({
        id: entry.id,
        score: Math.round(entry.score * 1e6) / 1e6,
        ranks: entry.ranks,
        signals: {
          bm25: bm25Scores.get(entry.id) ?? null,
          vector: similarities.has(entry.id) ? Math.round((similarities.get(entry.id) as number) * 1e4) / 1e4 : null,
        },
        engram: engrams.get(entry.id) as Engram,
      }));
      response.timings.total_ms = elapsed(started);
      return response;
    },
  };
}

/** What the evaluator learned about an engram in the current environment's tags. */
export interface LearnedRelevance {
  /** Average score over the tags it was evaluated in (tags it was never judged in are no evidence either way, so
   * they do not dilute the ones it was). */
  average: number;
  evals: number;
  /** Enough evidence that it does not help here: recall and SessionStart leave it out. */
  unwanted: boolean;
}

/** Tag relevance of these engrams in these environment tags (only engrams with any rows appear). */
export function learnedRelevance(store: Store, ids: readonly number[], tags: readonly string[]): Map<number, LearnedRelevance> {
  const sums = new Map<number, { sum: number; rows: number; evals: number }>();
  if (tags.length > 0) {
    for (const row of store.stats.tagRelevance(ids, tags)) {
      const entry = sums.get(row.engram_id) ?? { sum: 0, rows: 0, evals: 0 };
      entry.sum += row.score;
      entry.rows += 1;
      entry.evals += row.positive_evals + row.negative_evals;
      sums.set(row.engram_id, entry);
    }
  }
  const { minEvals, removeBelow } = TUNING.tagRelevance;
  const result = new Map<number, LearnedRelevance>();
  for (const [id, entry] of sums) {
    const average = entry.sum / entry.rows;
    result.set(id, { average, evals: entry.evals, unwanted: entry.evals >= minEvals && average < removeBelow });
  }
  return result;
}

/**
 * After fusion: tag relevance (remove with strong negative evidence, else nudge by the average), pinned nudge,
 * recency. Re-sorts.
 */
function adjust<T extends { id: number; score: number }>(
  store: Store,
  fused: T[],
  engrams: ReadonlyMap<number, RecallFields | null>,
  env: SearchEnvironment,
  now: Date,
): T[] {
  if (fused.length === 0) return fused;
  const relevance = learnedRelevance(store, fused.map((entry) => entry.id), env.tags ?? []);
  const { tagRelevance, pinnedBoost, recency } = TUNING;
  const kept: T[] = [];
  for (const entry of fused) {
    let score = entry.score;
    const learned = relevance.get(entry.id);
    if (learned) {
      if (learned.unwanted) continue;
      score *= 1 + (tagRelevance.weight * Math.max(-3, Math.min(3, learned.average))) / 3;
    }
    const engram = engrams.get(entry.id);
    if (engram?.pinned) score *= 1 + pinnedBoost;
    if (engram) {
      const days = Math.max(0, (now.getTime() - Date.parse(engram.last_seen_at)) / 86_400_000);
      score *= 1 - (recency.maxPenalty * days) / (days + recency.halfLifeDays);
    }
    kept.push({ ...entry, score });
  }
  return kept.sort((a, b) => b.score - a.score); // stable: equal scores keep fusion's deterministic order
}
