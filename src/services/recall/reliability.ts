import type { JudgedByList } from '../../core/index.js';
import { TUNING } from './tuning.js';

/**
 * How far this store's vectors can be trusted, estimated from the store itself without labels: after each hybrid
 * search, where the vector list ranked BM25's best hit (1/rank, 0 when outside its top 50). Where query and memory
 * embed well, the two signals find the same best memory and that number is high; where the embedder reads the
 * store poorly (a distilled model on dialogue turns), the vector list rarely puts BM25's best hit near the top.
 * On the dev splits the store-level mean ranged 0.16–0.28 where vectors alone reach 41–54 % of BM25's recall@10 and
 * 0.35–0.54 where they reach 73–104 % (bench/tune.mjs). The estimate is a running mean that starts from a cautious
 * prior worth a few searches, so a new store or a fresh process leans on BM25 until the vectors have shown they agree.
 * The learning loop's verdicts scale the resulting weight ({@link judgedFactor}).
 */
export interface VectorReliability {
  /** The current estimate, 0…1. */
  estimate(): number;
  /** How many searches it rests on, the prior included. */
  weight(): number;
  /** Records one hybrid search: the 1-based rank of BM25's best hit in the vector list, or null when absent. */
  observe(rankOfBm25Best: number | null): void;
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

/** TUNING.judged's shape. */
export interface JudgedSettings {
  lead: number;
  minJudged: number;
  min: number;
  max: number;
}

/**
 * What the learning loop says about this store's vectors: how often memories the vector list led to were judged
 * useful, relative to memories BM25 led to (each rate with one useful and one useless judgement of prior, so a few
 * verdicts move it little), clamped to [min, max]. Null until each side has `minJudged` verdicts. It multiplies the
 * weight the reliability estimate gives: vectors whose finds the agent's own evaluator keeps rejecting lose weight
 * in this store even where they agree with BM25, and vectors whose finds help gain it.
 */
export function judgedFactor(verdicts: JudgedByList, settings: JudgedSettings = TUNING.judged): number | null {
  const { vector, bm25 } = verdicts;
  if (vector.judged < settings.minJudged || bm25.judged < settings.minJudged) return null;
  const rate = (side: { useful: number; judged: number }): number => (side.useful + 1) / (side.judged + 2);
  return Math.max(settings.min, Math.min(settings.max, rate(vector) / rate(bm25)));
}

/** The vector weight for a reliability estimate and the learning loop's factor (1 without one): never above
 * `strong`, never below `weak` × the smallest factor. */
export function vectorWeight(estimate: number, factor: number | null, settings: ReliabilitySettings = TUNING.reliability): number {
  const weight = vectorWeightFor(estimate, settings) * (factor ?? 1);
  return Math.max(settings.weak * TUNING.judged.min, Math.min(settings.strong, weight));
}
