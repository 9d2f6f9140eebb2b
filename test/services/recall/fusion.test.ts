import { describe, expect, it } from 'vitest';
import { confidentCandidates, confidentTop, promoteAgreed, reciprocalRankFusion } from '../../../src/services/index.js';

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

describe('confident candidates and the top k they keep', () => {
  const settings = { headCoverage: 0.2, vectorTop: 1, vectorZ: 2, vectorCoverage: 0.3 };
  // Coverage of the query's weight by each engram: 1–3 hold the telling words, 4–6 only a speaker's name.
  const coverage: Record<number, number> = { 1: 0.9, 2: 0.5, 3: 0.2, 4: 0.1, 5: 0.1, 6: 0.05, 7: 0.6, 8: 0.05 };
  const evidence = (vector: Array<{ id: number; z: number }>) => ({ bm25: [1, 2, 3, 4, 5, 6], vector, coverage: (id: number) => coverage[id] ?? 0 });

  it("keeps BM25's hits that hold at least a fifth of the best hit's coverage; name-only hits are not evidence", () => {
    const found = confidentCandidates(evidence([]), 5, settings);
    expect([...found.ids].sort()).toEqual([1, 2, 3]);
    expect(found).toMatchObject({ best: 0.9, head: 3, vector: 0 });
  });

  it('adds the nearest vector hit only when it stands out and its words cover the query too', () => {
    expect([...confidentCandidates(evidence([{ id: 7, z: 2.4 }]), 5, settings).ids]).toContain(7);
    expect([...confidentCandidates(evidence([{ id: 7, z: 1.5 }]), 5, settings).ids]).not.toContain(7);
    expect([...confidentCandidates(evidence([{ id: 8, z: 3.5 }]), 5, settings).ids]).not.toContain(8);
    // Only the first `vectorTop` vector hits are considered.
    expect([...confidentCandidates(evidence([{ id: 8, z: 3 }, { id: 7, z: 3 }]), 5, settings).ids]).not.toContain(7);
  });

  it('with no BM25 coverage there is nothing to keep', () => {
    expect(confidentCandidates({ bm25: [], vector: [{ id: 7, z: 5 }], coverage: () => 0 }, 5, settings).ids.size).toBe(0);
  });

  it('fills the places that carry no evidence from the fused ranking, and keeps the ranking order', () => {
    // The fused ranking put two vector finds (7, 9) and a name-only hit (4) above the weakest confident hit (3).
    const ranked = [1, 7, 9, 4, 2, 5, 3, 6].map((id) => ({ id }));
    const top = confidentTop(ranked, new Set([1, 2, 3]), 5);
    expect(top.map((c) => c.id)).toEqual([1, 7, 9, 2, 3]);
    // Without confident candidates it is the fused top k.
    expect(confidentTop(ranked, new Set(), 3).map((c) => c.id)).toEqual([1, 7, 9]);
    // More confident candidates than places: the best of them by the ranking.
    expect(confidentTop(ranked, new Set([6, 3, 2, 5]), 2).map((c) => c.id)).toEqual([2, 5]);
  });
});

describe('promoteAgreed', () => {
  const settings = { bm25Depth: 20, listDepth: 10, votes: 2, weakerThan: 0.5, places: 2, k: 5 };
  const entries = (ids: number[]) => ids.map((id) => ({ id }));
  // Coverage of the query: 1 and 2 hold it, 3 and 4 hold a little, the rest nothing.
  const coverage = (id: number): number => ({ 1: 1, 2: 0.8, 3: 0.1, 4: 0.1 } as Record<number, number>)[id] ?? 0;
  const bm25 = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

  it('gives the lowest weak place to a BM25 candidate two other lists rank high, and puts it last', () => {
    const top = entries([1, 2, 3, 4]);
    const ranked = entries([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    // 11 is BM25's eleventh, but the vector and feedback lists rank it in their top 10; 6 only has the anchor's vote.
    const result = promoteAgreed(top, ranked, { bm25, others: [[11, 1, 2], [2, 11], [6]], coverage, best: 1 }, settings);
    expect(result.top.map((entry) => entry.id)).toEqual([1, 2, 3, 11]);
    expect(result.promoted).toBe(1);
  });

  it('takes only places of hits holding under `weakerThan` of the best coverage, at most `places`', () => {
    const ranked = entries([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const others = [
      [11, 12, 9],
      [12, 11, 9],
    ];
    // Two weak places (3, 4), three agreed candidates: the two with the strongest agreement take them.
    expect(promoteAgreed(entries([1, 2, 3, 4]), ranked, { bm25, others, coverage, best: 1 }, settings).top.map((e) => e.id)).toEqual([1, 2, 11, 12]);
    // One weak place.
    expect(promoteAgreed(entries([1, 2, 3]), ranked, { bm25, others, coverage, best: 1 }, settings).top.map((e) => e.id)).toEqual([1, 2, 11]);
    // No weak place: nothing moves.
    expect(promoteAgreed(entries([1, 2]), ranked, { bm25, others, coverage, best: 1 }, settings)).toEqual({ top: entries([1, 2]), promoted: 0 });
    expect(promoteAgreed(entries([1, 2, 3, 4]), ranked, { bm25, others, coverage, best: 1 }, { ...settings, places: 0 }).promoted).toBe(0);
  });

  it('needs BM25 and enough votes: one list alone, or a candidate BM25 ranks too low, moves nothing', () => {
    const top = entries([1, 2, 3, 4]);
    const ranked = entries([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 40]);
    expect(promoteAgreed(top, ranked, { bm25, others: [[11], [], [6]], coverage, best: 1 }, settings).promoted).toBe(0);
    // 40 is not in BM25's list at all, though every other list has it first.
    expect(promoteAgreed(top, ranked, { bm25, others: [[40], [40], [40]], coverage, best: 1 }, settings).promoted).toBe(0);
    expect(promoteAgreed(top, ranked, { bm25, others: [[11], [11], []], coverage, best: 1 }, { ...settings, bm25Depth: 10 }).promoted).toBe(0);
    expect(promoteAgreed(top, ranked, { bm25, others: [[11], [11], []], coverage, best: 1 }, { ...settings, votes: 3 }).promoted).toBe(0);
  });
});
