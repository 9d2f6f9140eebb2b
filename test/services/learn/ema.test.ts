import { describe, expect, it } from 'vitest';
import { LEARNING, nextRelevance, nextScore, rawScore } from '../../../src/services/learn/index.js';
import { thrown } from '../../_helpers.js';

describe('nextScore (the tag-relevance EMA)', () => {
  it('follows new = old × 0.7 + score / 3 × 0.3 × weight, by hand', () => {
    expect(rawScore(3)).toBe(1);
    expect(nextScore(0, 3, 1)).toBe(0.3);
    expect(nextScore(0.3, 3, 1)).toBe(0.51); // 0.21 + 0.3
    expect(nextScore(0.51, 3, 1)).toBe(0.657); // 0.357 + 0.3
    expect(nextScore(0, -3, 1)).toBe(-0.3);
    expect(nextScore(0, 2, 1)).toBe(0.2); // 2/3 × 0.3
    expect(nextScore(0, 1, 1)).toBe(0.1);
    expect(nextScore(0.5, -1, 1)).toBe(0.25); // 0.35 − 0.1
  });

  it('counts explicit feedback double', () => {
    expect(LEARNING.weights).toEqual({ evaluation: 1, feedback: 2 });
    expect(nextScore(0, 3, LEARNING.weights.feedback)).toBe(0.6);
    expect(nextScore(0.6, 3, LEARNING.weights.feedback)).toBe(1.02); // 0.42 + 0.6
    expect(nextScore(0, -3, LEARNING.weights.feedback)).toBe(-0.6);
  });

  it('settles at ±weight and is clamped to ±3', () => {
    let score = 0;
    for (let i = 0; i < 100; i++) score = nextScore(score, 3, 1);
    expect(score).toBeCloseTo(1, 5);
    expect(nextScore(3, 3, 10)).toBe(3); // 2.1 + 3 = 5.1
    expect(nextScore(-3, -3, 10)).toBe(-3);
    expect(nextScore(2.9, 3, 2)).toBe(2.63);
  });

  it('rounds to 6 decimals and never returns -0', () => {
    expect(nextScore(1 / 3, 3, 1)).toBe(0.533333);
    expect(Object.is(nextScore(0, -0, 1), 0)).toBe(true);
  });

  it('refuses scores outside −3..3', () => {
    expect(thrown(() => nextScore(0, 3.5, 1))?.code).toBe('INVALID_INPUT');
    expect(thrown(() => nextScore(0, Number.NaN, 1))?.code).toBe('INVALID_INPUT');
  });
});

describe('nextRelevance', () => {
  it('starts a new tag from 0 and counts one positive or negative evaluation', () => {
    const first = nextRelevance(undefined, 'react', 3, 1, '2026-11-01T10:00:00.000Z');
    expect(first).toEqual({ tag: 'react', score: 0.3, positive_evals: 1, negative_evals: 0, last_evaluated_at: '2026-11-01T10:00:00.000Z' });
    const second = nextRelevance(first, 'react', -3, 2, '2026-11-02T10:00:00.000Z');
    expect(second).toEqual({ tag: 'react', score: -0.39, positive_evals: 1, negative_evals: 1, last_evaluated_at: '2026-11-02T10:00:00.000Z' });
  });

  it('keeps the later evaluation date when judgements arrive out of order', () => {
    const row = nextRelevance(undefined, 'x', 3, 1, '2026-11-05T00:00:00.000Z');
    expect(nextRelevance(row, 'x', 3, 1, '2026-11-01T00:00:00.000Z').last_evaluated_at).toBe('2026-11-05T00:00:00.000Z');
  });
});
