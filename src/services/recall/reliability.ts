import { TUNING } from './tuning.js';

/**
 * How far this store's vectors can be trusted, estimated from the store itself without labels: after each hybrid
 * search, where the vector list ranked BM25's best hit (1/rank, 0 when outside its top 50). Where query and memory
 * embed well, the two signals find the same best memory and that number is high; where the embedder reads the
 * store poorly (a distilled model on dialogue turns), the vector list rarely puts BM25's best hit near the top.
 * On the dev splits the store-level mean ranged 0.16–0.28 where vectors alone reach 41–54 % of BM25's recall@10 and
 * 0.35–0.54 where they reach 73–104 % (bench/tune.mjs). The estimate is a running mean that starts from a cautious
 * prior worth a few searches, so a new store or a fresh process leans on BM25 until the vectors have shown they agree.
 * Judgements from the learning loop move it too (see {@link observeJudged}).
 */
export interface VectorReliability {
  /** The current estimate, 0…1. */
  estimate(): number;
  /** How many observations (searches and judgements) it rests on, the prior included. */
  weight(): number;
  /** Records one hybrid search: the 1-based rank of BM25's best hit in the vector list, or null when absent. */
  observe(rankOfBm25Best: number | null): void;
  /** Records evidence worth `weight` searches that vectors were (1) or were not (0) right (learning-loop verdicts). */
  observeJudged(value: number, weight: number): void;
}

/** TUNING.reliability's shape. */
export interface ReliabilitySettings {
  prior: number;
  priorSearches: number;
  window: number;
  low: number;
  high: number;
  weak: number;
  strong: number;
}

/** A reliability estimate starting at the prior (TUNING.reliability). */
export function createVectorReliability(settings: ReliabilitySettings = TUNING.reliability): VectorReliability {
  let sum = settings.prior * settings.priorSearches;
  let count = settings.priorSearches;
  const add = (value: number, weight: number): void => {
    sum += value * weight;
    count += weight;
    // A bounded memory: past `window` observations the estimate becomes a moving average, so a store whose
    // content changes (or a model change) is followed.
    if (count > settings.window) {
      sum *= settings.window / count;
      count = settings.window;
    }
  };
  return {
    estimate: () => sum / count,
    weight: () => count,
    observe: (rank) => add(rank !== null && rank >= 1 ? 1 / rank : 0, 1),
    observeJudged: (value, weight) => add(Math.max(0, Math.min(1, value)), weight),
  };
}

/**
 * The weight of the vector and anchor lists in fusion for a reliability estimate: `weak` up to `low`, `strong` from
 * `high`, linear between. With the chosen values: 0.3 (round 1's fixed weight) for stores whose vectors disagree with
 * BM25, 1.0 (as much as BM25) for stores where they agree.
 */
export function vectorWeightFor(estimate: number, settings: ReliabilitySettings = TUNING.reliability): number {
  const { low, high, weak, strong } = settings;
  if (estimate <= low) return weak;
  if (estimate >= high) return strong;
  return weak + ((strong - weak) * (estimate - low)) / (high - low);
}
