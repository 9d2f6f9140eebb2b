import type { Config } from '../../core/index.js';

/**
 * Every number recall uses, with the reason for its value. Fusion weights and floors were chosen on the development
 * queries in fixtures/eval/queries-dev.jsonl (`engram bench retrieval`); the held-out queries-test.jsonl is only
 * for reporting. docs/SEARCH.md describes the pipeline these feed.
 */
export const TUNING = {
  /** Reciprocal rank fusion constant: score = Σ w / (k + rank). 60 is the value from the RRF paper and flattens
   * the difference between neighbouring ranks, so agreement between lists matters more than any one list's order. */
  rrfK: 60,
  /** Each list contributes its top N to fusion. Beyond ~50, 1/(60 + rank) adds almost nothing and costs lookups. */
  pool: 50,
  /**
   * Fusion weights. BM25 is the stronger signal on the text Engram searches (stemmed BM25 beat every offline vector
   * model on a 1.5k-question conversational benchmark: 0.61 vs USE lite 0.37), and there equal weights let weak
   * vector hits push good keyword hits down (0.58 < 0.61). With k = 60 and a vector weight of 0.5, a vector-only hit
   * (at best 0.5/61) never outranks a BM25 hit from the pool (at worst 1/110): fusion can lift a keyword hit the
   * vectors agree with, and fill in what BM25 did not find (paraphrases that share no word), but it cannot push a
   * keyword hit below a vector guess — which is how fusion fell under BM25 alone. On the dev queries
   * (fixtures/eval/queries-dev.jsonl, recall@10, with the floors below) this beats the best single signal with
   * every offline model: USE lite 0.78 vs BM25 0.72 / vectors 0.69; ctx-use-256 0.77 vs 0.72 / 0.75;
   * static-use-256 0.78 vs 0.72 / 0.73.
   * Equal weights scored within one or two queries of that on the dev set but cost lexical MRR (1.00 → 0.98), the
   * failure mode the large benchmark showed; k = 10 or 30 changed nothing beyond noise.
   */
  weights: { bm25: 1.0, vector: 0.5 },
  /**
   * Cosine similarity below which a vector hit is treated as noise and dropped, per embedder kind: every query has
   * nearest neighbours, even nonsense. Swept on the dev queries (0, 0.2, 0.3, 0.4, 0.5): USE lite's vector
   * recall@10 is unchanged up to 0.3 (0.69) and falls after; the distilled 256-d models compress similarities, so
   * 0.2 already cost them 4–8 points (ctx-use-256 0.76 → 0.68, static-use-256 0.73 → 0.70), and transformers
   * models get 0.1.
   */
  vectorFloor: { transformers: 0.1, 'use-lite': 0.3, test: 0.2 } as Record<string, number>,
  /** Texts per embedding call when indexing, per embedder kind: measured throughput peaks at 64 for transformers.js
   * (static-use-256: 460/s at 32, 660/s at 64) and at 8–32 for USE lite on WASM (~45/s; larger batches slow it). */
  batchSize: { transformers: 64, 'use-lite': 16, test: 64 } as Record<string, number>,
  /** BM25 field weights: a title names the lesson; category and tags are short labels that would dominate a
   * length-normalised score if weighted like body text. */
  bm25Fields: { title: 2, text: 1, category: 0.5, tags: 1 },
  /** Okapi BM25 parameters (wink's defaults, the textbook values); `k` is the IDF additive that keeps IDF > 0. */
  bm25Params: { k1: 1.2, b: 0.75, k: 1 },
  /** BM25 hits read before gates and filters, as a multiple of `pool`: gates rarely reject many. */
  bm25Overfetch: 4,
  /** Tag relevance (learned per engram and tag by the evaluator, EMA in [-3, 3]). */
  tagRelevance: {
    /** Fewer evaluations than this is anecdote, not evidence. */
    minEvals: 3,
    /** With enough evidence, an average below this means "not useful here": removed. */
    removeBelow: -0.1,
    /** Otherwise score × (1 + weight × average / 3): at most ±20 %, enough to reorder neighbours, never to lift a
     * poor match over a good one. */
    weight: 0.2,
  },
  /** Pinned engrams proved useful everywhere: a small nudge (× 1.05) so they win ties. */
  pinnedBoost: 0.05,
  /** Old memories are not wrong memories: age costs at most 10 %, half of that after 180 days without being seen. */
  recency: { maxPenalty: 0.1, halfLifeDays: 180 },
  /** Long prompts are cut before embedding: sentence encoders read the start, and a 10k-character paste adds cost,
   * not meaning. */
  queryChars: 1_000,
  /** A search embeds up to this many engrams that lack vectors (added by hooks or before a model change) before it
   * answers; more than that is `engram reindex`'s job, and search says so. */
  catchUpMax: 256,
  /** Default number of results. */
  topK: 10,
} as const;

/** The values a search actually uses: TUNING with config.json's `search` overrides applied. */
export interface SearchTuning {
  rrfK: number;
  weights: { bm25: number; vector: number };
  topK: number;
}

/** Applies config.json's `search` section. */
export function searchTuning(config: Config): SearchTuning {
  return {
    rrfK: config.search.rrf_k ?? TUNING.rrfK,
    weights: {
      bm25: config.search.bm25_weight ?? TUNING.weights.bm25,
      vector: config.search.vector_weight ?? TUNING.weights.vector,
    },
    topK: config.search.top_k ?? TUNING.topK,
  };
}
