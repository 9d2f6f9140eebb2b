import { describe, expect, it } from 'vitest';
import { marginInterval } from '../../bench/_bootstrap.js';

describe('marginInterval (bench/quality.mjs: hybrid minus the best single signal, paired over queries)', () => {
  it('is the margin over the better single signal, and a shift every query shares has no spread', () => {
    const weak = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    const strong = [0.2, 0.5, 0, 1, 0.4, 0.3, 0, 1, 0.5, 0.1];
    const hybrid = strong.map((value) => value + 0.1);
    const interval = marginInterval({ hybrid, singles: [weak, strong] }, 'shift');
    expect(interval.margin).toBeCloseTo(0.1, 10);
    expect(interval.low).toBeCloseTo(0.1, 10);
    expect(interval.high).toBeCloseTo(0.1, 10);
  });

  it('spreads a margin that rests on one query of a hundred around it, and is the same on every run', () => {
    const single = Array.from({ length: 100 }, (_, i) => (i % 3 === 0 ? 1 : 0));
    const hybrid = [...single];
    hybrid[1] = 1; // one more query found: +0.01
    const interval = marginInterval({ hybrid, singles: [single] }, 'one query');
    expect(interval.margin).toBeCloseTo(0.01, 10);
    expect(interval.low).toBeLessThan(0.01);
    expect(interval.low).toBeGreaterThanOrEqual(0);
    expect(interval.high).toBeGreaterThan(0.01);
    expect(marginInterval({ hybrid, singles: [single] }, 'one query')).toEqual(interval);
  });

  it('re-chooses the best single signal in each resample (the margin as the issue defines it)', () => {
    // Two singles that each win on half the queries: max(mean) of a resample is never below either mean, so the
    // interval of a hybrid equal to their average lies at or below zero.
    const a = [1, 1, 1, 1, 0, 0, 0, 0];
    const b = [0, 0, 0, 0, 1, 1, 1, 1];
    const hybrid = a.map((value, i) => (value + (b[i] ?? 0)) / 2);
    const interval = marginInterval({ hybrid, singles: [a, b] }, 'crossing');
    expect(interval.margin).toBeCloseTo(0, 10);
    expect(interval.high).toBeLessThanOrEqual(1e-12);
    expect(interval.low).toBeLessThan(0);
  });

  it('refuses lists that are not paired', () => {
    expect(() => marginInterval({ hybrid: [1, 0], singles: [[1]] }, 'bad')).toThrow(/different lengths/);
  });
});
