import { describe, expect, it } from 'vitest';
import { reciprocalRankFusion } from '../../../src/services/index.js';

describe('reciprocalRankFusion', () => {
  it('sums weight / (k + rank) over the lists and normalises by first-everywhere', () => {
    const fused = reciprocalRankFusion(
      [
        { signal: 'bm25', ids: [10, 20, 30], weight: 1 },
        { signal: 'vector', ids: [20, 40], weight: 0.5 },
      ],
      60,
      50,
    );
    const best = 1 / 61 + 0.5 / 61;
    const score = (id: number) => fused.find((f) => f.id === id)?.score;
    expect(score(20)).toBeCloseTo((1 / 62 + 0.5 / 61) / best, 12);
    expect(score(10)).toBeCloseTo(1 / 61 / best, 12);
    expect(score(30)).toBeCloseTo(1 / 63 / best, 12);
    expect(score(40)).toBeCloseTo(0.5 / 62 / best, 12);
    expect(fused.map((f) => f.id)).toEqual([20, 10, 30, 40]);
    expect(fused[0]?.ranks).toEqual({ bm25: 2, vector: 1, anchor: null });
    expect(fused.find((f) => f.id === 40)?.ranks).toEqual({ bm25: null, vector: 2, anchor: null });
  });

  it('gives 1.0 to an id ranked first in every list, and to the top of a single list', () => {
    expect(reciprocalRankFusion([{ signal: 'bm25', ids: [1, 2], weight: 1 }, { signal: 'vector', ids: [1], weight: 0.5 }], 60, 50)[0]?.score).toBeCloseTo(1, 12);
    expect(reciprocalRankFusion([{ signal: 'bm25', ids: [7], weight: 1 }], 60, 50)[0]).toEqual({ id: 7, score: 1, ranks: { bm25: 1, vector: null, anchor: null } });
  });

  it('normalises by the lists that found something: an empty vector list does not cap the BM25 top below 1.0', () => {
    const fused = reciprocalRankFusion(
      [
        { signal: 'bm25', ids: [3], weight: 1 },
        { signal: 'vector', ids: [], weight: 0.3 },
      ],
      5,
      50,
    );
    expect(fused[0]?.score).toBeCloseTo(1, 12);
  });

  it('fuses a third, anchor list like the others and records its rank', () => {
    const fused = reciprocalRankFusion(
      [
        { signal: 'bm25', ids: [1, 2, 3, 4], weight: 1 },
        { signal: 'vector', ids: [9], weight: 0.3 },
        { signal: 'anchor', ids: [1, 4], weight: 0.3 },
      ],
      5,
      50,
    );
    // 4 is BM25's fourth but the best hit's nearest neighbour: it passes BM25's second and third.
    expect(fused.map((f) => f.id)).toEqual([1, 4, 2, 3, 9]);
    expect(fused[1]?.ranks).toEqual({ bm25: 4, vector: null, anchor: 2 });
  });

  it('only uses the top `pool` of each list and ignores zero-weight lists', () => {
    const fused = reciprocalRankFusion(
      [
        { signal: 'bm25', ids: [1, 2, 3, 4], weight: 1 },
        { signal: 'vector', ids: [5], weight: 0 },
      ],
      60,
      2,
    );
    expect(fused.map((f) => f.id)).toEqual([1, 2]);
  });

  it('breaks score ties by BM25 rank, then vector rank, then id', () => {
    // With equal weights, bm25 rank 1 and vector rank 1 tie exactly.
    const fused = reciprocalRankFusion(
      [
        { signal: 'bm25', ids: [9], weight: 1 },
        { signal: 'vector', ids: [3], weight: 1 },
      ],
      60,
      50,
    );
    expect(fused.map((f) => f.id)).toEqual([9, 3]);
    expect(fused[0]?.score).toBe(fused[1]?.score);
  });

  it('a smaller k rewards top ranks more', () => {
    const lists = [{ signal: 'bm25' as const, ids: [1, 2], weight: 1 }];
    const gap = (k: number) => {
      const [a, b] = reciprocalRankFusion(lists, k, 50);
      return (a?.score ?? 0) - (b?.score ?? 0);
    };
    expect(gap(1)).toBeGreaterThan(gap(60));
  });

  it('returns nothing for empty lists', () => {
    expect(reciprocalRankFusion([], 60, 50)).toEqual([]);
    expect(reciprocalRankFusion([{ signal: 'bm25', ids: [], weight: 1 }], 60, 50)).toEqual([]);
  });
});
