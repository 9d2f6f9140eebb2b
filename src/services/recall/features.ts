/**
 * What the learned ranker and the abstain classifier read (ranker.ts). Pure functions over the signals a search
 * collects, shared by the engine and by the script that fits the weights (bench/train-ranker.mjs), so both see the
 * same numbers. Every feature is normalised per query — a rank, a share of the best score, a z-score within the
 * list — because raw BM25 scores grow with the query and the store, and raw cosine similarities differ by model: the
 * weights were fitted on three stores and three models and must hold for the next one.
 */

/** One candidate of one search: what each list knows about it. */
export interface CandidateSignals {
  id: number;
  /** BM25 score, or null when BM25 did not return it (or did not run). */
  bm25: number | null;
  /** 1-based rank in the BM25 list after gates, or null. */
  bm25Rank: number | null;
  /** Cosine similarity to the query (looked up for BM25's candidates too), or null without vectors. */
  similarity: number | null;
  /** 1-based rank in the vector list after gates and the similarity floor, or null. */
  vectorRank: number | null;
  /** Cosine similarity to the vector of BM25's best hit (hybrid only), or null. */
  anchor: number | null;
  /** Share of the query's weight (each term its IDF) the candidate holds, 0..1. */
  coverage: number;
}

/** Candidate features, in the order of each model's weights. */
export const CANDIDATE_FEATURES = ['bm25', 'bm25Rank', 'inBm25', 'similarity', 'vectorRank', 'anchor', 'coverage'] as const;
export type CandidateFeature = (typeof CANDIDATE_FEATURES)[number];

/** A z-score bounded to ±5: one outlier in a short list should not dominate a linear model. */
const zScore = (value: number, mean: number, sd: number): number => Math.max(-5, Math.min(5, (value - mean) / sd));

/** Mean and spread of a sample; the spread never below `floor`, so two near-equal values do not look far apart. */
function spread(values: readonly number[], floor: number): { mean: number; sd: number } {
  if (values.length === 0) return { mean: 0, sd: 1 };
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / values.length;
  return { mean, sd: Math.max(floor, Math.sqrt(variance)) };
}

/** Ranks read as 5 / (rank + 4): 1 for the first, 0.5 for the sixth, slowly to 0; absent is 0. */
const rankFeature = (rank: number | null): number => (rank === null ? 0 : 5 / (rank + 4));

/** The smallest spread a list of similarities is read with (cosine units). */
const SIMILARITY_SPREAD_FLOOR = 0.02;

/**
 * Each candidate's feature vector (CANDIDATE_FEATURES order):
 * - `bm25`: BM25 score as a share of the best candidate's (0 when BM25 did not find it);
 * - `bm25Rank`, `vectorRank`: rank features (above);
 * - `inBm25`: 1 when BM25 returned it — a candidate only the vectors found needs their strong evidence;
 * - `similarity`: z-score of its query similarity among the vector list's similarities (0 without vectors);
 * - `anchor`: z-score of its similarity to BM25's best hit among all candidates' (0 without an anchor);
 * - `coverage`: the share of the query's weight it holds.
 */
export function candidateFeatures(candidates: readonly CandidateSignals[]): number[][] {
  const best = Math.max(0, ...candidates.map((c) => c.bm25 ?? 0));
  const listed = candidates.filter((c) => c.vectorRank !== null && c.similarity !== null).map((c) => c.similarity as number);
  const sims = spread(listed, SIMILARITY_SPREAD_FLOOR);
  const anchors = candidates.filter((c) => c.anchor !== null).map((c) => c.anchor as number);
  const anchor = spread(anchors, SIMILARITY_SPREAD_FLOOR);
  return candidates.map((c) => [
    best > 0 && c.bm25 !== null ? c.bm25 / best : 0,
    rankFeature(c.bm25Rank),
    c.bm25Rank === null ? 0 : 1,
    c.similarity !== null && listed.length > 1 ? zScore(c.similarity, sims.mean, sims.sd) : 0,
    rankFeature(c.vectorRank),
    c.anchor !== null && anchors.length > 1 ? zScore(c.anchor, anchor.mean, anchor.sd) : 0,
    c.coverage,
  ]);
}

/** What a search knows about its query as a whole, for the abstain classifier. */
export interface QuerySignals {
  /** Topic terms of the query (abstain.ts queryTerms). */
  terms: number;
  /** Share of the query's weight held by terms no engram in the store holds. */
  unseen: number;
  /** The query's total weight (sum of its terms' IDF). */
  weight: number;
  /** The BM25 list's two best scores (null when BM25 did not run or found less). */
  bm25: [number | null, number | null];
  /** The vector list's similarities, best first (empty without vectors). */
  similarities: readonly number[];
  /** BM25's best hit is among the vector list's first three. */
  agreement: boolean;
}

/** Query features, in the order of each abstain model's weights. */
export const QUERY_FEATURES = ['confidence', 'margin', 'coverage', 'bm25Gap', 'bm25Strength', 'terms', 'unseen', 'agreement', 'vectorGap'] as const;
export type QueryFeature = (typeof QUERY_FEATURES)[number];

/** Log-odds of a probability, bounded so 0 and 1 stay finite. */
export const logit = (p: number): number => {
  const q = Math.max(1e-4, Math.min(1 - 1e-4, p));
  return Math.log(q / (1 - q));
};

/**
 * The abstain classifier's features (QUERY_FEATURES order), from the ranked results' probabilities and coverage:
 * - `confidence`: log-odds of the first result's probability of being relevant (ranker.ts);
 * - `margin`: its probability minus the second's (a clear winner is more often right);
 * - `coverage`: the best share of the query's weight among the first three;
 * - `bm25Gap`: how far BM25's best score stands above its second, as a share of the best;
 * - `bm25Strength`: BM25's best score per unit of the query's weight;
 * - `terms`: log(1 + topic terms): long questions match something by chance;
 * - `unseen`: share of the query's weight no engram holds — a question about a thing the store never mentions;
 * - `agreement`: 1 when BM25's best hit is also among the vectors' first three;
 * - `vectorGap`: the vector list's first-minus-second similarity in units of its spread.
 */
export function queryFeatures(query: QuerySignals, ranked: ReadonlyArray<{ probability: number; coverage: number }>): number[] {
  const [b1, b2] = query.bm25;
  const [s1, s2] = query.similarities;
  const sims = spread(query.similarities, SIMILARITY_SPREAD_FLOOR);
  const first = ranked[0]?.probability ?? 0;
  return [
    logit(first),
    first - (ranked[1]?.probability ?? 0),
    Math.max(0, ...ranked.slice(0, 3).map((r) => r.coverage)),
    b1 !== null && b1 > 0 ? (b1 - (b2 ?? 0)) / b1 : 0,
    b1 !== null && query.weight > 0 ? b1 / query.weight : 0,
    Math.log(1 + query.terms),
    query.unseen,
    query.agreement ? 1 : 0,
    s1 !== undefined && s2 !== undefined ? Math.min(5, (s1 - s2) / sims.sd) : 0,
  ];
}

/** The hit model's features (ranker.ts): the result's own candidate features, its query's, and where it stands. */
export const HIT_FEATURES = [...CANDIDATE_FEATURES, ...QUERY_FEATURES, 'position'] as const;

/**
 * One result's features for the hit model: its candidate features, the query features of the search it came from
 * (the same for every result of one search), and 1 / position (1-based) — a second result is right less often than
 * the first even when it looks as good.
 */
export function hitFeatures(candidate: readonly number[], query: readonly number[], position: number): number[] {
  return [...candidate, ...query, 1 / position];
}
