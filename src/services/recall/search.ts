import {
  embeddingText,
  EngramError,
  KNN_MAX_K,
  loadEmbedder,
  type Embedder,
  type EmbedderChoice,
  type Engram,
  type JudgedByList,
  type RecallFields,
  type Store,
  type VectorSpace,
} from '../../core/index.js';
import { abstainReason, queryTerms, weakMatch, weightedCoverage, type AbstainReason, type WeakMatchVerdict } from './abstain.js';
import { createBm25Cache, type Bm25Builder, type Bm25Cache, type Bm25Filter, type Bm25Index, type Bm25Source } from './bm25.js';
import { confidentCandidates, confidentTop, promoteAgreed, reciprocalRankFusion, type Confidence, type RankedList, type Signal } from './fusion.js';
import { DEFAULT_STATUSES, passesGates, type SearchEnvironment, type SearchFilters } from './gates.js';
import { isDefaultSessionId } from '../observations/rules.js';
import { searchTerms } from './text.js';
import { createVectorReliability, judgedFactor, vectorWeight as weighVectors, type VectorReliability } from './reliability.js';
import { TUNING, type SearchTuning } from './tuning.js';
import { embedPending } from './vectors.js';
import { createVectorIndex, VECTOR_INDEX_FROM, type VectorIndex } from './vector-index.js';

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
  /** Stay silent when the best match is weak (the abstain rule). `false` returns the ranking anyway, with `weak`
   * saying why the rule doubts it. @default true */
  abstain?: boolean;
  /** Add `explain`: the fusion settings, each list's size, and the abstain rule's verdict with its numbers. */
  explain?: boolean;
}

/** Why a search answered as it did (`engram search --explain`). */
export interface SearchExplain {
  fusion: {
    k: number;
    weights: { bm25: number; vector: number; anchor: number };
    /** Hybrid: the vector and anchor weight that orders the chosen top k (never above round 1's, tuning.ts `order`). */
    ordering: number | null;
    lists: { bm25: number; vector: number; anchor: number };
    /** Hybrid: how far this store's vectors are trusted (reliability.ts), the learning loop's verdicts on what the
     * vector and BM25 lists led hooks to inject (with the factor they put on the weight, or null), and whether a
     * configured weight overrode both. */
    reliability: {
      estimate: number;
      searches: number;
      judged: (JudgedByList & { factor: number | null }) | null;
      fixed: boolean;
    } | null;
    /** Hybrid: the candidates that kept their place in the top k (fusion.ts confidentCandidates), or null. */
    /** `context`: how many results were taken in as session neighbours of the best hits (round 5, tuning.ts `context`). */
    confident: { head: number; vector: number; agreed: number; context: number; best_coverage: number; rule: string } | null;
  };
  abstain: WeakMatchVerdict;
}

/** One result. */
export interface SearchHit {
  id: number;
  /** Fused score after adjustments; 1.0 ≈ first in every list. */
  score: number;
  /** 1-based rank in each list after gates, or null (`anchor`: similarity to BM25's best hit, hybrid only). */
  ranks: { bm25: number | null; vector: number | null; anchor: number | null };
  /** Raw signal values: BM25 score and cosine similarity, or null. */
  signals: { bm25: number | null; vector: number | null };
  engram: Engram;
  /** With `explain`: the fused (RRF) score and each factor applied to it after fusion, in order. */
  adjustments?: ScoreAdjustments;
}

/** How a result's fused score became its final score (multiplying factors; 1 = no change). */
export interface ScoreAdjustments {
  fused: number;
  /** Learned relevance in the environment's tags (average score −3…3 and evaluations), or null without any. */
  tag_relevance: { average: number; evals: number; factor: number } | null;
  pinned: number;
  recency: number;
}

/** A search's answer. */
export interface SearchResponse {
  query: string;
  mode: SearchMode;
  /** The embedding model used for the vector list, or null. */
  model: string | null;
  /** Why nothing was searched (content-free query), or null. */
  abstained: AbstainReason | null;
  /** Why the abstain rule doubts the best match (set even when the request asked for results anyway), or null. */
  weak: string | null;
  /** Why a requested signal was missing or partial (no model, stale vectors), or null. */
  degraded: string | null;
  results: SearchHit[];
  timings: {
    embed_ms: number;
    total_ms: number;
    bm25_index: Bm25Source | null;
    /** `skipped`: BM25 alone was decisive (tuning.ts skipVectors); `cached`: the query vector was reused. */
    vectors: 'searched' | 'cached' | 'skipped' | null;
    /** Which KNN answered the vector list: the warm server's in-memory index or sqlite-vec (absent: no vector list). */
    knn?: 'memory' | 'sqlite-vec';
    /** How many KNN queries the vector list took: k widens ×4 while gates reject (the in-memory index starts at the
     * k the space's last search needed). */
    knn_runs?: number;
  };
  /** Only when the request asked for it. */
  explain?: SearchExplain;
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
  /**
   * Loads the model that made an older vector space (core/embed `choiceForModel` + `loadEmbedder`). With it, a search
   * whose model's vectors are still being filled (after a model change) searches the complete older space instead
   * of going BM25-only: old vectors keep serving until the re-embedding finishes.
   */
  loadModel?: (modelId: string) => Promise<Embedder | null>;
  /** Skip the vector half when BM25 alone is decisive (tuning.ts skipVectors). @default true */
  skipDecisive?: boolean;
  /** Non-fatal problems (snapshot not writable, catch-up failed) go here. */
  onWarning?: (message: string, error?: unknown) => void;
  /** Rebuilds the BM25 base off the event loop (the warm server's worker thread); without it rebuilds are inline. */
  bm25Builder?: Bm25Builder;
  /**
   * Keep an in-memory int8 index of each vector space of at least VECTOR_INDEX_FROM vectors (vector-index.ts): KNN
   * candidates by a WASM SIMD scan, exact distances from sqlite-vec. For warm processes (the server): loading it
   * costs more than one sqlite-vec KNN. @default false
   */
  vectorIndex?: boolean;
}

/** A search engine bound to one store; holds the BM25 index and the embedder warm between searches. */
export interface SearchEngine {
  search(request: SearchRequest): Promise<SearchResponse>;
  /** Resolves when no background index build (BM25 base, vector index load) is running. */
  settled(): Promise<void>;
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
  const bm25: Bm25Cache = createBm25Cache(options.indexDir, {
    onError: (error) => warn('BM25 index: could not persist or rebuild in the background', error),
    ...(options.bm25Builder ? { builder: options.bm25Builder } : {}),
  });
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

  // Query vectors by model and text, least recently used first out (tuning.ts queryCache).
  const queryVectors = new Map<string, Float32Array>();
  const embedQuery = async (model: Embedder, text: string): Promise<{ vector: Float32Array | undefined; cached: boolean }> => {
    const key = `${model.model}\u0000${text}`;
    const hit = queryVectors.get(key);
    if (hit) {
      queryVectors.delete(key);
      queryVectors.set(key, hit);
      return { vector: hit, cached: true };
    }
    const [vector] = await model.embed([text]);
    if (vector) {
      queryVectors.set(key, vector);
      if (queryVectors.size > TUNING.queryCache) queryVectors.delete(queryVectors.keys().next().value as string);
    }
    return { vector, cached: false };
  };

  // How far each model's vectors agree with BM25 in this store (reliability.ts), by model id: learned from searches.
  const reliabilities = new Map<string, VectorReliability>();
  const reliabilityOf = (model: string): VectorReliability => {
    let found = reliabilities.get(model);
    if (!found) {
      found = createVectorReliability();
      reliabilities.set(model, found);
    }
    return found;
  };

  // The learning loop's verdicts on vector-led and BM25-led injections (reliability.ts judgedFactor), re-read from
  // the store every TUNING.judged.refreshMs: judgements arrive from a background job, a few per session.
  let verdicts: { read: number; counts: JudgedByList; factor: number | null } | undefined;
  const learned = (): { counts: JudgedByList; factor: number | null } => {
    const at = performance.now();
    if (!verdicts || at - verdicts.read > TUNING.judged.refreshMs) {
      const counts = store.activity.judgedByList(TUNING.judged.lead);
      verdicts = { read: at, counts, factor: judgedFactor(counts) };
    }
    return verdicts;
  };

  // Older models loaded to serve their complete spaces while the active model's space fills, by model id.
  const older = new Map<string, Promise<Embedder | null>>();

  /** A complete older space whose model loads, to search while the active one is being filled; or undefined. */
  const servingSpace = async (active: Embedder): Promise<{ space: VectorSpace; model: Embedder } | undefined> => {
    if (!options.loadModel) return undefined;
    const vectors = store.vectors();
    for (const candidate of vectors.spaces()) {
      if (candidate.model === active.model || candidate.vectors === 0 || vectors.countPending(candidate) > 0) continue;
      let loading = older.get(candidate.model);
      if (!loading) {
        loading = options.loadModel(candidate.model).catch((error: unknown) => {
          warn(`could not load ${candidate.model} to serve its vectors`, error);
          return null;
        });
        older.set(candidate.model, loading);
      }
      const model = await loading;
      if (model && model.dim === candidate.dim) return { space: candidate, model };
    }
    return undefined;
  };

  /** The vector space to search, after embedding up to catchUpMax engrams that lack vectors. */
  const vectorSpace = async (model: Embedder): Promise<{ space: VectorSpace | undefined; degraded: string | null; serving?: Embedder }> => {
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
        const total = store.engrams.counts().active;
        const serving = await servingSpace(model);
        if (serving) {
          // After a model change: the background server fills the new space; its older, complete space answers.
          return {
            space: serving.space,
            serving: serving.model,
            degraded: `re-embedding for ${model.model}: ${total - pending}/${total} done; searching ${serving.model.model}'s vectors meanwhile`,
          };
        }
        degraded = `${pending} engrams lack vectors for ${model.model}; run 'engram reindex' (until then they are found by BM25 only)`;
      }
    }
    // Embedding writes vectors, not engrams, so the generation read above still describes what was synced. A
    // degraded state is not remembered: vectors written meanwhile (a warm server embeds in the background) count.
    syncedAt = degraded ? undefined : { generation, degraded };
    return { space: vectors.findSpace(model.model, model.dim), degraded };
  };

  // In-memory vector indexes by space (warm processes only), and when a too-small space was last counted. An index
  // loads in slices between searches (sqlite-vec answers meanwhile); `loading` resolves when the last slice is in.
  const vectorIndexes = new Map<number, VectorIndex | number>();
  let loading: Promise<void> = Promise.resolve();
  const VECTOR_INDEX_RECHECK_MS = 60_000;
  /** Vectors loaded per slice: ≈ 20–40 ms of work, so a hook waiting behind one is not kept long. */
  const VECTOR_INDEX_SLICE = 1_000;
  const vectorIndexOf = (space: VectorSpace): VectorIndex | undefined => {
    if (!options.vectorIndex) return undefined;
    const known = vectorIndexes.get(space.id);
    if (typeof known === 'object') {
      if (!known.ready) return undefined;
      known.sync();
      return known;
    }
    if (typeof known === 'number' && Date.now() - known < VECTOR_INDEX_RECHECK_MS) return undefined;
    if (store.vectors().written(space).vectors < VECTOR_INDEX_FROM) {
      vectorIndexes.set(space.id, Date.now());
      return undefined;
    }
    const index = createVectorIndex(store, space);
    vectorIndexes.set(space.id, index);
    loading = new Promise<void>((resolve) => {
      const step = (): void => {
        try {
          if (index.loadSlice(VECTOR_INDEX_SLICE)) return resolve();
        } catch (error) {
          warn('the in-memory vector index could not load; searching with sqlite-vec', error);
          vectorIndexes.set(space.id, Date.now());
          return resolve();
        }
        setImmediate(step);
      };
      setImmediate(step);
    });
    return undefined;
  };

  // The k at which the last search of each space (by id) through the in-memory index had its answer: the next one
  // starts there instead of at `pool`. A hook's scope gates reject a share of every store's nearest (other projects'
  // engrams), so each prompt ran the KNN twice, k = 50 then 200 (~1 ms of a 10k hybrid search). The answer does not
  // depend on where k starts: the index's top k is exact, so a larger k's first entries are a smaller k's list.
  const knnStart = new Map<number, number>();
  /**
   * Vector hits that pass the gates, nearest first, similarity above the model's floor; widens k as gates reject.
   * `spread`: mean and standard deviation of the similarities of the query's `pool` nearest neighbours (before
   * floor and gates), against which a hit's similarity is judged as standing out or not.
   */
  const vectorList = (
    space: VectorSpace,
    model: Embedder,
    vector: Float32Array,
    prefetch: (ids: readonly number[]) => void,
    accept: (id: number) => boolean,
  ) => {
    const floor = TUNING.vectorFloor[model.kind] ?? 0;
    const hits: Array<{ id: number; similarity: number }> = [];
    let usedMemory = false;
    let spread = { mean: 0, sd: 0 };
    let k: number = TUNING.pool;
    let first = true;
    let runs = 0;
    for (;;) {
      runs += 1;
      const index = k > KNN_MAX_K ? undefined : vectorIndexOf(space);
      // Only the in-memory index starts past `pool` (sqlite-vec's small spaces keep their one k = 50 query).
      if (first && index) k = Math.max(k, Math.min(knnStart.get(space.id) ?? k, KNN_START_MAX));
      const neighbours = k > KNN_MAX_K ? store.vectors().scan(space, vector, k) : index ? index.knn(vector, k) : store.vectors().knn(space, vector, k);
      usedMemory ||= index !== undefined;
      if (first) spread = similaritySpread(neighbours.slice(0, TUNING.pool).map((n) => 1 - n.distance));
      first = false;
      hits.length = 0;
      let belowFloor = false;
      let read = 0;
      for (const neighbour of neighbours) {
        // The rows of one pool's worth of neighbours at a time: gates keep most, so a large k's list is not read whole.
        if (read % TUNING.pool === 0) prefetch(neighbours.slice(read, read + TUNING.pool).filter((n) => 1 - n.distance >= floor).map((n) => n.id));
        read += 1;
        const similarity = 1 - neighbour.distance;
        if (similarity < floor) {
          belowFloor = true;
          break;
        }
        if (accept(neighbour.id)) hits.push({ id: neighbour.id, similarity });
        if (hits.length >= TUNING.pool) break;
      }
      // Done when the pool is full, when the rest is below the floor, or when the table has no more rows.
      const done = hits.length >= TUNING.pool || belowFloor || neighbours.length < k;
      if (done && index) knnStart.set(space.id, neededK(read, hits.length < TUNING.pool && !belowFloor));
      if (done) return { hits, spread, runs, knn: usedMemory ? ('memory' as const) : ('sqlite-vec' as const) };
      k *= 4;
    }
  };

  /** BM25 alone is decisive (tuning.ts skipVectors): its best hit holds most of the query and stands out. */
  const bm25Decisive = (hits: ReadonlyArray<{ id: number; score: number }>, index: Bm25Index, query: string): boolean => {
    const [first, second] = hits;
    if (!first || (second && first.score < TUNING.skipVectors.gap * second.score)) return false;
    const terms = queryTerms(query);
    const held = heldTerms(index, first.id, terms);
    if (!held) return false;
    return weightedCoverage(terms, (term) => index.idf(term), held) >= TUNING.skipVectors.coverage;
  };

  /**
   * Pseudo-relevance feedback where both signals agree (tuning.ts feedback): the hits in the first `depth` of both
   * the BM25 and the vector list are taken as answers, their most salient words that the query lacks (each word's
   * share of a hit's words, summed over the hits, times its IDF) are added to the query with a small weight, and BM25
   * runs again. It finds memories that share words with the answer rather than with the question.
   */
  const feedbackList = (index: Bm25Index, request: SearchRequest, bm25Ids: readonly number[], vectorIds: readonly number[], accept: (id: number) => boolean): number[] => {
    const settings = TUNING.feedback;
    const nearest = new Set(vectorIds.slice(0, settings.depth));
    const agreed = bm25Ids.slice(0, settings.depth).filter((id) => !settings.agree || nearest.has(id)).slice(0, settings.docs);
    if (agreed.length === 0) return [];
    const own = searchTerms(request.query);
    const ownSet = new Set(own);
    const salience = new Map<string, { score: number; docs: number }>();
    for (const engram of store.engrams.getMany(agreed)) {
      const terms = searchTerms(`${engram.title ?? ''} ${engram.text} ${engram.category} ${engram.tags.join(' ')}`);
      if (terms.length === 0) continue;
      const counts = new Map<string, number>();
      for (const term of terms) if (!ownSet.has(term)) counts.set(term, (counts.get(term) ?? 0) + 1);
      for (const [term, count] of counts) {
        const entry = salience.get(term) ?? { score: 0, docs: 0 };
        entry.score += count / terms.length;
        entry.docs += 1;
        salience.set(term, entry);
      }
    }
    const expansion = [...salience]
      .filter(([, entry]) => entry.docs >= settings.minDocs)
      .map(([term, entry]) => ({ term, score: entry.score * index.idf(term) }))
      .sort((a, b) => b.score - a.score || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
      .slice(0, settings.terms);
    if (expansion.length === 0) return [];
    const total = expansion.reduce((sum, entry) => sum + entry.score, 0);
    const scale = (settings.expansion * Math.max(1, own.length)) / total;
    const terms = [...(settings.original ? own.map((term) => ({ term, weight: 1 })) : []), ...expansion.map((entry) => ({ term: entry.term, weight: entry.score * scale }))];
    const hits = index.searchWeighted(terms, TUNING.pool * TUNING.bm25Overfetch, bm25Filter(request));
    const ids: number[] = [];
    for (const hit of hits) {
      if (ids.length >= TUNING.pool) break;
      if (accept(hit.id)) ids.push(hit.id);
    }
    return ids;
  };

  /**
   * Round 5 (tuning.ts `context`): the session neighbours of the first results that hold the query well, scored by the
   * seed's place, their distance and (round 7) how much of the query they hold, take the places of top-k hits that
   * hold little of the query and that the vector list does not vouch for (the lowest first); they go last. A
   * neighbour no list found gets an entry without ranks.
   */
  const contextPromotion = <T extends { id: number; score: number; ranks: Record<Signal, number | null> }>(
    top: readonly T[],
    ordered: readonly T[],
    coverage: (id: number) => number,
    best: number,
    /** Passes the gates and is not one the learning loop judged unwanted here (what fusion's adjustments remove). */
    accept: (id: number) => boolean,
    unlisted: (id: number) => T,
  ): { top: T[]; promoted: number } => {
    const settings = TUNING.context;
    const weak = top.filter((entry) => coverage(entry.id) < settings.weakerThan * best && (entry.ranks.vector ?? Infinity) > settings.keepVector);
    if (weak.length === 0) return { top: [...top], promoted: 0 };
    const inTop = new Set(top.map((entry) => entry.id));
    const scores = new Map<number, number>();
    top.slice(0, settings.seeds).forEach((seed, position) => {
      if (coverage(seed.id) < settings.seedCoverage * best) return;
      const { session, neighbours } = store.engrams.sessionNeighbours(seed.id, settings.span);
      if (session === null || isDefaultSessionId(session)) return;
      for (const { id, distance } of neighbours) {
        if (inTop.has(id) || coverage(id) < settings.coverage * best) continue;
        scores.set(id, (scores.get(id) ?? 0) + ((1 + settings.coverageWeight * (coverage(id) / best)) * settings.decay ** (distance - 1)) / (options.tuning.rrfK + position + 1));
      }
    });
    if (scores.size === 0) return { top: [...top], promoted: 0 };
    const byId = new Map(ordered.map((entry) => [entry.id, entry]));
    const chosen = [...scores]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .filter(([id]) => accept(id))
      .slice(0, Math.min(settings.places, weak.length))
      .map(([id]) => byId.get(id) ?? unlisted(id));
    if (chosen.length === 0) return { top: [...top], promoted: 0 };
    const dropped = new Set(weak.slice(-chosen.length).map((entry) => entry.id));
    return { top: [...top.filter((entry) => !dropped.has(entry.id)), ...chosen], promoted: chosen.length };
  };

  /** Which query terms an engram holds: read from the index (no re-analysis of its text), else from its row. */
  const heldTerms = (index: Bm25Index, id: number, terms: readonly string[], engram?: Engram): ReadonlySet<string> | undefined => {
    const indexed = index.termsOf(id, terms);
    if (indexed) return indexed;
    const row = engram ?? store.engrams.get(id);
    return row ? new Set(searchTerms(`${row.title ?? ''} ${row.text} ${row.category} ${row.tags.join(' ')}`)) : undefined;
  };
  return {
    embedder,
    settled: async () => {
      await bm25.settled();
      await loading;
    },
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
        weak: null,
        degraded: null,
        results: [],
        timings: { embed_ms: 0, total_ms: 0, bm25_index: null, vectors: null },
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
      // The BM25 index this search reads (hits, then coverage and the abstain rule): taken once. Asking the cache
      // again after the awaits below could find the store moved on and rebuild on this thread, past the worker.
      let bm25Index: Bm25Index | undefined;
      if (mode !== 'vector') {
        const { index, source } = await bm25.getAsync(store);
        bm25Index = index;
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
        if (mode === 'hybrid' && options.skipDecisive !== false && bm25Decisive(kept, index, request.query)) {
          response.timings.vectors = 'skipped';
          // Not needed for this answer, but a user without a model should still hear about it.
          if (!options.loadedEmbedder && !options.embedder?.spec) response.degraded = `vector search unavailable: ${options.embedder?.reason ?? 'no embedder configured'}`;
        }
      }

      const similarities = new Map<number, number>();
      let anchorSpace: VectorSpace | undefined;
      let semanticKind: string | undefined;
      // Hybrid: the weight the vector evidence gets (a configured one, or what the model's reliability here earns).
      let reliability: VectorReliability | undefined;
      let trusted: { estimate: number; searches: number; judged: (JudgedByList & { factor: number | null }) | null } | null = null;
      let vectorWeight = options.tuning.weights.vector ?? TUNING.reliability.weak;
      let standOut: Array<{ id: number; z: number }> = [];
      if (mode !== 'bm25' && response.timings.vectors !== 'skipped') {
        const { embedder: active, reason } = await embedder();
        if (!active) {
          response.degraded = `vector search unavailable: ${reason}`;
        } else {
          let space: VectorSpace | undefined;
          let model: Embedder = active;
          try {
            let serving: Embedder | undefined;
            ({ space, degraded: response.degraded, serving } = await vectorSpace(active));
            if (serving) model = serving;
          } catch (error) {
            response.degraded = `vector search unavailable: ${(error as Error).message}`;
          }
          if (space) {
            response.model = model.model;
            let vector = request.queryVector;
            if (!vector) {
              const embedStart = performance.now();
              try {
                const embedded = await embedQuery(model, embeddingText(request.query.slice(0, TUNING.queryChars)));
                vector = embedded.vector;
                response.timings.vectors = embedded.cached ? 'cached' : 'searched';
              } catch (error) {
                warn('query embedding failed; answering with BM25 only', error);
                response.degraded = `vector search unavailable: ${(error as Error).message}`;
              }
              response.timings.embed_ms = elapsed(embedStart);
            } else if (vector.length !== space.dim) {
              throw new EngramError('INVALID_INPUT', `query vector has ${vector.length} dimensions; ${model.model} has ${space.dim}`);
            }
            if (vector) {
              anchorSpace = space;
              semanticKind = model.kind;
              const { hits, spread, knn, runs } = vectorList(space, model, vector, fetch, accept);
              response.timings.knn = knn;
              response.timings.knn_runs = runs;
              for (const hit of hits) similarities.set(hit.id, hit.similarity);
              standOut = hits.map((hit) => ({ id: hit.id, z: spread.sd > 0 ? (hit.similarity - spread.mean) / spread.sd : 0 }));
              if (mode === 'hybrid') {
                reliability = reliabilityOf(model.model);
                const verdict = options.tuning.weights.vector === undefined ? learned() : null;
                trusted = {
                  estimate: reliability.estimate(),
                  searches: reliability.weight(),
                  judged: verdict && verdict.counts.vector.judged + verdict.counts.bm25.judged > 0 ? { ...verdict.counts, factor: verdict.factor } : null,
                };
                vectorWeight = options.tuning.weights.vector ?? weighVectors(trusted.estimate, verdict?.factor ?? null);
              }
              lists.push({ signal: 'vector', ids: hits.map((hit) => hit.id), weight: mode === 'vector' ? 1 : vectorWeight });
            }
          }
        }
      }

      // Hybrid's third list: the candidates ordered by similarity to the vector of BM25's best hit (tuning.ts).
      const anchorWeight = options.tuning.weights.anchor ?? vectorWeight;
      const bm25Ids = lists.find((list) => list.signal === 'bm25')?.ids ?? [];
      const vectorIds = lists.find((list) => list.signal === 'vector')?.ids ?? [];
      if (mode === 'hybrid' && TUNING.anchor.enabled && anchorSpace && anchorWeight > 0 && bm25Ids.length > 1) {
        // From the in-memory vector index when the server keeps one (same distances), else from sqlite-vec.
        const held = vectorIndexes.get(anchorSpace.id);
        const memory = typeof held === 'object' && held.ready ? held : undefined;
        const anchor = memory?.vectorOf(bm25Ids[0] as number) ?? store.vectors().vectorOf(anchorSpace, bm25Ids[0] as number);
        if (anchor) {
          const pool = [...new Set(lists.flatMap((list) => list.ids.slice(0, TUNING.pool)))];
          const inMemory = memory?.distancesTo(anchor, pool);
          const nearest = inMemory
            ? [...inMemory.found, ...store.vectors().distancesTo(anchorSpace, anchor, inMemory.missing)].sort((a, b) => a.distance - b.distance || a.id - b.id)
            : store.vectors().distancesTo(anchorSpace, anchor, pool);
          lists.push({ signal: 'anchor', ids: nearest.map((n) => n.id), weight: anchorWeight });
        }
      }

      const fused = reciprocalRankFusion(lists, options.tuning.rrfK, TUNING.pool);
      // Learned tag relevance is read once: the ordering fusion below ranks the same candidates.
      const relevance = learnedRelevance(store, fused.map((entry) => entry.id), environment.tags ?? []);
      const at = now();
      const adjusted = adjust(fused, relevance, candidates, at);
      // Engrams read once per search, for the results returned.
      const engrams = new Map<number, Engram>();
      const read = (ids: readonly number[]): void => {
        const missing = ids.filter((id) => !engrams.has(id));
        if (missing.length > 0) for (const engram of store.engrams.getMany(missing)) engrams.set(engram.id, engram);
      };
      const index = bm25Index ?? (await bm25.getAsync(store)).index;
      const terms = queryTerms(request.query);
      const idf = (term: string): number => index.idf(term);
      // The query terms each candidate holds (coverage and the abstain rule look up nothing else): from the index,
      // without re-analysing its text; from its row only when the index does not hold it.
      const termCache = new Map<number, ReadonlySet<string>>();
      const termsOf = (id: number): ReadonlySet<string> => {
        let held = termCache.get(id);
        if (!held) {
          held = heldTerms(index, id, terms, engrams.get(id)) ?? new Set<string>();
          termCache.set(id, held);
        }
        return held;
      };

      // Hybrid: confident candidates keep their place in the top k; the fused ranking fills the rest (fusion.ts). The
      // chosen k are then ordered by a fusion that weighs vectors no more than round 1 did (tuning.ts `order`).
      let confidence: Confidence | null = null;
      let ordering: number | null = null;
      let promoted = 0;
      let contextual = 0;
      let top = adjusted.slice(0, topK);
      if (mode === 'hybrid' && bm25Ids.length > 0 && vectorIds.length > 0) {
        const settings = TUNING.confident;
        confidence = confidentCandidates(
          { bm25: bm25Ids, vector: standOut, coverage: (id) => weightedCoverage(terms, idf, termsOf(id)) },
          topK,
          settings,
        );
        const chosen = new Set(confidentTop(adjusted, confidence.ids, topK).map((entry) => entry.id));
        ordering = options.tuning.weights.vector ?? Math.min(vectorWeight, TUNING.order.vector);
        const ordered =
          ordering === vectorWeight && anchorWeight === vectorWeight
            ? adjusted
            : adjust(reciprocalRankFusion(lists.map((list) => (list.signal === 'bm25' ? list : { ...list, weight: ordering as number })), options.tuning.rrfK, TUNING.pool), relevance, candidates, at);
        top = ordered.filter((entry) => chosen.has(entry.id));
        // Round 4: a candidate that BM25 and the vector, feedback and anchor lists all agree on (tuning.ts `agreement`)
        // takes a weak place (fusion.ts promoteAgreed). The feedback list (one more BM25 pass) is built only when a weak
        // place exists.
        const coverage = (id: number): number => weightedCoverage(terms, idf, termsOf(id));
        const { agreement, feedback } = TUNING;
        if (agreement.places > 0 && index.docs >= agreement.minStore && confidence.best > 0 && top.some((entry) => coverage(entry.id) < agreement.weakerThan * (confidence as Confidence).best)) {
          const feedbackIds = feedback.enabled && bm25Index ? feedbackList(bm25Index, request, bm25Ids, vectorIds, accept) : [];
          const anchorIds = lists.find((list) => list.signal === 'anchor')?.ids ?? [];
          const promotion = promoteAgreed(top, ordered, { bm25: bm25Ids, others: [vectorIds, feedbackIds, anchorIds], coverage, best: confidence.best }, { ...agreement, k: options.tuning.rrfK });
          top = promotion.top;
          promoted = promotion.promoted;
        }
        // Round 6: a candidate just outside BM25's top k that the query's vector ranks among its first few takes a weak
        // place, in a store whose vectors earned their full weight (tuning.ts `pair`).
        const { pair } = TUNING;
        if (pair.places > 0 && vectorWeight >= pair.minWeight && index.docs >= pair.minStore && confidence.best > 0) {
          const promotion = promoteAgreed(top, ordered, { bm25: bm25Ids, others: [vectorIds], coverage, best: confidence.best }, { ...pair, listDepth: pair.vectorDepth, votes: 1, k: options.tuning.rrfK });
          top = promotion.top;
          promoted += promotion.promoted;
        }
        // Round 8: a candidate just outside BM25's top k that is among the nearest memories to BM25's best hit (the
        // anchor list's first few) takes a weak place, in a store whose vectors earned their full weight (tuning.ts
        // `neighbour`).
        const { neighbour } = TUNING;
        if (neighbour.places > 0 && vectorWeight >= neighbour.minWeight && index.docs >= neighbour.minStore && confidence.best > 0) {
          const anchorIds = lists.find((list) => list.signal === 'anchor')?.ids ?? [];
          if (anchorIds.length > 0) {
            const promotion = promoteAgreed(top, ordered, { bm25: bm25Ids, others: [anchorIds], coverage, best: confidence.best }, { ...neighbour, listDepth: neighbour.anchorDepth, votes: 1, k: options.tuning.rrfK });
            top = promotion.top;
            promoted += promotion.promoted;
          }
        }
        // Round 7: a candidate just outside BM25's top k that holds at least what the best top-k hit holds of the query
        // (IDF-weighted coverage: BM25's length normalisation and term frequency put it lower) takes a weak place
        // (tuning.ts `coverage`).
        const full = TUNING.coverage;
        const best = confidence.best;
        if (full.places > 0 && index.docs >= full.minStore && best > 0 && top.some((entry) => coverage(entry.id) < full.weakerThan * best)) {
          const byCoverage = bm25Ids
            .slice(0, full.bm25Depth)
            .map((id, rank) => ({ id, rank, held: coverage(id) }))
            .sort((a, b) => b.held - a.held || a.rank - b.rank)
            .slice(0, full.coverageDepth)
            .filter((entry) => entry.held >= full.atLeast * best - 1e-9)
            .map((entry) => entry.id);
          if (byCoverage.length > 0) {
            const promotion = promoteAgreed(top, ordered, { bm25: bm25Ids, others: [byCoverage], coverage, best }, { ...full, listDepth: full.coverageDepth, votes: 1, k: options.tuning.rrfK });
            top = promotion.top;
            promoted += promotion.promoted;
          }
        }
        // Round 5: the memories recorded next to the strongest hits in their session take weak places (tuning.ts
        // `context`): in a conversation the evidence often sits in the turn before or after the one the words found.
        if (TUNING.context.enabled && TUNING.context.places > 0 && index.docs >= TUNING.context.minStore && confidence.best > 0) {
          const wanted = (id: number): boolean => !(relevance.get(id) ?? learnedRelevance(store, [id], environment.tags ?? []).get(id))?.unwanted;
          const context = contextPromotion(top, ordered, coverage, confidence.best, (id) => accept(id) && wanted(id), (id) => ({
            id,
            score: 0,
            ranks: { bm25: null, vector: null, anchor: null },
            adjustments: { fused: 0, tag_relevance: null, pinned: 1, recency: 1 },
          }));
          top = context.top;
          contextual = context.promoted;
        }
        // What this search says about the vectors here: where they ranked BM25's best hit (reliability.ts).
        const rank = vectorIds.indexOf(bm25Ids[0] as number);
        reliability?.observe(rank >= 0 ? rank + 1 : null);
      }
      read(top.map((entry) => entry.id));

      // The weak-match rule (abstain.ts), shared with the hooks: are the top results answers or just neighbours?
      const { top: judged } = TUNING.abstain;
      const verdict = weakMatch(
        terms,
        idf,
        top.slice(0, judged).map((entry) => {
          return {
            id: entry.id,
            terms: termsOf(entry.id),
            agreed: (entry.ranks.bm25 ?? Infinity) <= judged && (entry.ranks.vector ?? Infinity) <= judged,
            similarity: similarities.get(entry.id) ?? null,
          };
        }),
        semanticKind ? TUNING.abstain.similarity[semanticKind] : undefined,
      );
      response.weak = top.length > 0 ? verdict.weak : null;
      if (request.explain) {
        const size = (signal: string): number => lists.find((list) => list.signal === signal)?.ids.length ?? 0;
        response.explain = {
          fusion: {
            k: options.tuning.rrfK,
            weights: { bm25: options.tuning.weights.bm25, vector: vectorWeight, anchor: anchorWeight },
            ordering,
            lists: { bm25: size('bm25'), vector: size('vector'), anchor: size('anchor') },
            reliability: trusted
              ? {
                  estimate: Math.round(trusted.estimate * 1000) / 1000,
                  searches: Math.round(trusted.searches),
                  judged: trusted.judged ? { ...trusted.judged, factor: trusted.judged.factor === null ? null : Math.round(trusted.judged.factor * 1000) / 1000 } : null,
                  fixed: options.tuning.weights.vector !== undefined,
                }
              : null,
            confident: confidence
              ? {
                  head: confidence.head,
                  vector: confidence.vector,
                  agreed: promoted,
                  context: contextual,
                  best_coverage: Math.round(confidence.best * 1000) / 1000,
                  rule: `keep BM25's top-${topK} hits holding ≥ ${TUNING.confident.headCoverage} of the best one's coverage, and the nearest vector hit when it stands out (z ≥ ${TUNING.confident.vectorZ}) and holds ≥ ${TUNING.confident.vectorCoverage}; fusion fills the rest; up to ${TUNING.agreement.places} hit(s) holding < ${TUNING.agreement.weakerThan} of it give their place to a candidate in BM25's top ${TUNING.agreement.bm25Depth} that ${TUNING.agreement.votes} of the vector, feedback and anchor lists rank in their top ${TUNING.agreement.listDepth}; where vectors weigh ≥ ${TUNING.pair.minWeight}, up to ${TUNING.pair.places} more to one in BM25's top ${TUNING.pair.bm25Depth} and the vector list's top ${TUNING.pair.vectorDepth}, and up to ${TUNING.neighbour.places} to one in BM25's top ${TUNING.neighbour.bm25Depth} and the anchor list's top ${TUNING.neighbour.anchorDepth} (the memory nearest BM25's best hit); up to ${TUNING.coverage.places} hit(s) holding < ${TUNING.coverage.weakerThan} of it give their place to one in BM25's top ${TUNING.coverage.bm25Depth} holding all of it (among the ${TUNING.coverage.coverageDepth} of them holding the most); then up to ${TUNING.context.places} hit(s) holding < ${TUNING.context.weakerThan} of it that the vector list does not rank in its top ${TUNING.context.keepVector} give their place to a session neighbour (within ${TUNING.context.span}) of the first ${TUNING.context.seeds} results that holds ≥ ${TUNING.context.coverage} of it`,
                }
              : null,
          },
          abstain: verdict,
        };
      }
      if (response.weak && request.abstain !== false) {
        response.abstained = 'weak-match';
        response.timings.total_ms = elapsed(started);
        return response;
      }
      response.results = top.map((entry) => ({
        id: entry.id,
        score: Math.round(entry.score * 1e6) / 1e6,
        ranks: entry.ranks,
        signals: {
          bm25: bm25Scores.get(entry.id) ?? null,
          vector: similarities.has(entry.id) ? Math.round((similarities.get(entry.id) as number) * 1e4) / 1e4 : null,
        },
        engram: engrams.get(entry.id) as Engram,
        ...(request.explain ? { adjustments: entry.adjustments } : {}),
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
  fused: T[],
  relevance: ReadonlyMap<number, LearnedRelevance>,
  engrams: ReadonlyMap<number, RecallFields | null>,
  now: Date,
): Array<T & { adjustments: ScoreAdjustments }> {
  if (fused.length === 0) return [];
  const { tagRelevance, pinnedBoost, recency } = TUNING;
  const kept: Array<T & { adjustments: ScoreAdjustments }> = [];
  for (const entry of fused) {
    const adjustments: ScoreAdjustments = { fused: entry.score, tag_relevance: null, pinned: 1, recency: 1 };
    const learned = relevance.get(entry.id);
    if (learned) {
      if (learned.unwanted) continue;
      const factor = 1 + (tagRelevance.weight * Math.max(-3, Math.min(3, learned.average))) / 3;
      adjustments.tag_relevance = { average: learned.average, evals: learned.evals, factor };
    }
    const engram = engrams.get(entry.id);
    if (engram?.pinned) adjustments.pinned = 1 + pinnedBoost;
    if (engram) {
      const days = Math.max(0, (now.getTime() - Date.parse(engram.last_seen_at)) / 86_400_000);
      adjustments.recency = 1 - (recency.maxPenalty * days) / (days + recency.halfLifeDays);
    }
    const score = entry.score * (adjustments.tag_relevance?.factor ?? 1) * adjustments.pinned * adjustments.recency;
    kept.push({ ...entry, score, adjustments });
  }
  return kept.sort((a, b) => b.score - a.score); // stable: equal scores keep fusion's deterministic order
}

/**
 * The smallest k of the widening sequence (pool, ×4, … up to KNN_MAX_K) at which a search that went through `read`
 * neighbours stops: one that holds them all, or (`exhausted`: it ran out of rows) one larger than the space.
 */
function neededK(read: number, exhausted: boolean): number {
  let k: number = TUNING.pool;
  while ((exhausted ? k <= read : k < read) && k * 4 <= KNN_MAX_K) k *= 4;
  return k;
}

/** The largest k a search starts at (4 × pool): a rare narrow filter (a category asked through MCP) that needed more
 * does not make the hooks' next searches pay for its k. */
const KNN_START_MAX = TUNING.pool * 4;

/** Mean and standard deviation of a sample of similarities (0 and 0 when empty). */
function similaritySpread(values: readonly number[]): { mean: number; sd: number } {
  if (values.length === 0) return { mean: 0, sd: 0 };
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  const sd = Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length);
  return { mean, sd };
}
