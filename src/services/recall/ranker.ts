import * as z from 'zod';
import { CANDIDATE_FEATURES, HIT_FEATURES, QUERY_FEATURES } from './features.js';
import weightsFile from './ranker-weights.json' with { type: 'json' };

/** Which mode's models a search reads: the mode's own, or BM25's when hybrid had no vectors. */
export type RankerMode = 'hybrid' | 'bm25' | 'vector';

/** A logistic model: P = 1 / (1 + e^-(intercept + Σ weight · feature)). */
const LogisticSchema = z.strictObject({
  intercept: z.number(),
  weights: z.array(z.number()),
});
export type Logistic = z.infer<typeof LogisticSchema>;

const ModeModelsSchema = z.strictObject({
  /** P(a candidate is relevant | its CANDIDATE_FEATURES), over every candidate of a search: what the query features
   * read about the first results. */
  candidate: LogisticSchema,
  /** P(a returned result answers the query | HIT_FEATURES): each result's `confidence`, what hooks inject on. */
  hit: LogisticSchema,
});
export type ModeModels = z.infer<typeof ModeModelsSchema>;

/** ranker-weights.json: fitted by bench/train-ranker.mjs on the dev splits only (how: docs/SEARCH.md). */
export const RankerWeightsSchema = z.strictObject({
  format: z.literal(1),
  candidateFeatures: z.array(z.string()),
  queryFeatures: z.array(z.string()),
  hitFeatures: z.array(z.string()),
  /** What the weights were fitted on, and the fit's own numbers (dev, and dev cross-validated). */
  trained: z.record(z.string(), z.unknown()),
  modes: z.strictObject({ hybrid: ModeModelsSchema, bm25: ModeModelsSchema, vector: ModeModelsSchema }),
});
export type RankerWeights = z.infer<typeof RankerWeightsSchema>;

/** Checks that weights fit the features this code computes (a stale weights file is a bug, caught by a test). */
export function parseRankerWeights(raw: unknown): RankerWeights {
  const weights = RankerWeightsSchema.parse(raw);
  const same = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((name, i) => name === b[i]);
  if (!same(weights.candidateFeatures, CANDIDATE_FEATURES) || !same(weights.queryFeatures, QUERY_FEATURES) || !same(weights.hitFeatures, HIT_FEATURES)) {
    throw new Error('ranker-weights.json was fitted on other features than features.ts computes; run node bench/train-ranker.mjs');
  }
  for (const models of Object.values(weights.modes)) {
    if (
      models.candidate.weights.length !== CANDIDATE_FEATURES.length ||
      models.hit.weights.length !== HIT_FEATURES.length
    ) {
      throw new Error('ranker-weights.json: a model has the wrong number of weights');
    }
  }
  return weights;
}

/** The committed weights (parsed once, on first use). */
let committed: RankerWeights | undefined;
export function rankerWeights(): RankerWeights {
  committed ??= parseRankerWeights(weightsFile);
  return committed;
}

/** The model's log-odds for one feature vector. */
export function logOdds(model: Logistic, features: readonly number[]): number {
  let sum = model.intercept;
  for (let i = 0; i < features.length; i++) sum += (model.weights[i] ?? 0) * (features[i] as number);
  return sum;
}

/** The model's probability for one feature vector. */
export const probability = (model: Logistic, features: readonly number[]): number => 1 / (1 + Math.exp(-logOdds(model, features)));
