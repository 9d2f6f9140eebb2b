import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CANDIDATE_FEATURES, HIT_FEATURES, parseRankerWeights, probability, rankerWeights } from '../../../src/services/index.js';

const committed = JSON.parse(readFileSync(new URL('../../../src/services/recall/ranker-weights.json', import.meta.url), 'utf8')) as Record<string, unknown>;

describe('ranker weights', () => {
  it('the committed weights fit the features this code computes, and were fitted on dev only', () => {
    const weights = rankerWeights();
    expect(weights.candidateFeatures).toEqual([...CANDIDATE_FEATURES]);
    expect(weights.hitFeatures).toEqual([...HIT_FEATURES]);
    expect(weights.trained).toMatchObject({ split: 'dev' });
    for (const mode of ['hybrid', 'bm25', 'vector'] as const) {
      expect(weights.modes[mode].candidate.weights).toHaveLength(CANDIDATE_FEATURES.length);
      expect(weights.modes[mode].hit.weights).toHaveLength(HIT_FEATURES.length);
    }
  });

  it('refuses weights fitted on other features or with the wrong number of weights', () => {
    expect(() => parseRankerWeights({ ...committed, candidateFeatures: ['bm25'] })).toThrow(/other features/);
    const modes = committed.modes as Record<string, { candidate: { intercept: number; weights: number[] } }>;
    const short = { ...modes, bm25: { ...modes.bm25, candidate: { intercept: 0, weights: [1] } } };
    expect(() => parseRankerWeights({ ...committed, modes: short })).toThrow(/wrong number of weights/);
  });

  it('reads a logistic model as σ(intercept + Σ weight · feature)', () => {
    expect(probability({ intercept: 0, weights: [1, -1] }, [0, 0])).toBeCloseTo(0.5, 9);
    expect(probability({ intercept: -1, weights: [2, 0.5] }, [1, 2])).toBeCloseTo(1 / (1 + Math.exp(-2)), 9);
  });
});
