import { describe, expect, it } from 'vitest';
import { fitLogistic, probability } from '../../../src/services/index.js';

// Rows from a known model: P(y = 1) = σ(-1 + 2·x0 + 0·x1), labels drawn deterministically (a fixed LCG).
function rows(n: number) {
  let seed = 7;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  return Array.from({ length: n }, () => {
    const x = [next() * 4 - 2, next() * 4 - 2];
    const p = 1 / (1 + Math.exp(-(-1 + 2 * (x[0] as number))));
    return { x, y: next() < p ? (1 as const) : (0 as const) };
  });
}

describe('fitLogistic', () => {
  it('recovers the weights of the model the labels came from, and the same ones on every run', () => {
    const data = rows(4000);
    const fit = fitLogistic(data, { l2: 0.01 });
    expect(fit.intercept).toBeCloseTo(-1, 0);
    expect(fit.weights[0]).toBeCloseTo(2, 0);
    expect(Math.abs(fit.weights[1] as number)).toBeLessThan(0.2);
    expect(fitLogistic(data, { l2: 0.01 })).toEqual(fit);
    expect(probability(fit, [0.5, 0])).toBeCloseTo(0.5, 1);
  });

  it('shrinks weights with a larger L2 penalty, and weighs rows by their weight', () => {
    const data = rows(400);
    expect(Math.abs(fitLogistic(data, { l2: 100 }).weights[0] as number)).toBeLessThan(Math.abs(fitLogistic(data, { l2: 0.01 }).weights[0] as number));
    // Heavier positive rows pull the intercept up.
    const heavy = data.map((row) => ({ ...row, w: row.y === 1 ? 3 : 1 }));
    expect(fitLogistic(heavy).intercept).toBeGreaterThan(fitLogistic(data).intercept);
  });
});
