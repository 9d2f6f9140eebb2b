import { describe, expect, it } from 'vitest';
import { CANDIDATE_FEATURES, candidateFeatures, HIT_FEATURES, hitFeatures, logit, QUERY_FEATURES, queryFeatures, type CandidateSignals } from '../../../src/services/index.js';

const signals = (id: number, extra: Partial<CandidateSignals> = {}): CandidateSignals => ({
  id,
  bm25: null,
  bm25Rank: null,
  similarity: null,
  vectorRank: null,
  anchor: null,
  coverage: 0,
  ...extra,
});
const named = (row: readonly number[]) => Object.fromEntries(CANDIDATE_FEATURES.map((name, i) => [name, row[i]]));

describe('candidateFeatures', () => {
  it('reads BM25 as a share of the best score and ranks as 5 / (rank + 4), 0 when a list did not return it', () => {
    const [first, second, vectorOnly] = candidateFeatures([
      signals(1, { bm25: 8, bm25Rank: 1, coverage: 0.9 }),
      signals(2, { bm25: 2, bm25Rank: 6 }),
      signals(3, { vectorRank: 1, similarity: 0.5 }),
    ]).map(named);
    expect(first).toMatchObject({ bm25: 1, bm25Rank: 1, inBm25: 1, coverage: 0.9 });
    expect(second).toMatchObject({ bm25: 0.25, bm25Rank: 0.5, inBm25: 1 });
    expect(vectorOnly).toMatchObject({ bm25: 0, bm25Rank: 0, inBm25: 0, vectorRank: 1 });
  });

  it('reads similarities as z-scores within the vector list, so every model speaks the same units', () => {
    const rows = (scale: number) =>
      candidateFeatures([
        signals(1, { vectorRank: 1, similarity: 0.5 * scale }),
        signals(2, { vectorRank: 2, similarity: 0.3 * scale }),
        signals(3, { vectorRank: 3, similarity: 0.1 * scale }),
        signals(4, { bm25: 1, bm25Rank: 1, similarity: 0.3 * scale }),
      ]).map((row) => named(row).similarity as number);
    const a = rows(1);
    expect(a[0]).toBeCloseTo(1.2247, 3);
    expect(a[1]).toBeCloseTo(0, 6);
    // A BM25 candidate gets its looked-up similarity scored against the same list.
    expect(a[3]).toBeCloseTo(0, 6);
    // A model whose similarities run in a narrower band gives the same features.
    rows(0.5).forEach((value, i) => expect(value).toBeCloseTo(a[i] as number, 6));
  });

  it('does not blow up near-equal similarities or a one-item list', () => {
    const close = candidateFeatures([signals(1, { vectorRank: 1, similarity: 0.501 }), signals(2, { vectorRank: 2, similarity: 0.5 })]).map(named);
    expect(Math.abs(close[0]?.similarity as number)).toBeLessThan(0.1);
    expect(named(candidateFeatures([signals(1, { vectorRank: 1, similarity: 0.9 })])[0] as number[]).similarity).toBe(0);
  });
});

describe('queryFeatures and hitFeatures', () => {
  it('summarise the first results and both lists', () => {
    const row = queryFeatures(
      { terms: 3, unseen: 0.4, weight: 6, bm25: [12, 4], similarities: [0.8, 0.5, 0.4], agreement: true },
      [
        { probability: 0.7, coverage: 0.3 },
        { probability: 0.2, coverage: 0.6 },
      ],
    );
    const f = Object.fromEntries(QUERY_FEATURES.map((name, i) => [name, row[i]]));
    expect(f.confidence).toBeCloseTo(logit(0.7), 6);
    expect(f.margin).toBeCloseTo(0.5, 6);
    expect(f).toMatchObject({ coverage: 0.6, unseen: 0.4, agreement: 1 });
    expect(f.bm25Gap).toBeCloseTo(2 / 3, 6);
    expect(f.bm25Strength).toBeCloseTo(2, 6);
    expect(f.terms).toBeCloseTo(Math.log(4), 6);
    expect(f.vectorGap).toBeGreaterThan(1);
  });

  it('are 0 for signals a search did not have', () => {
    const row = queryFeatures({ terms: 1, unseen: 0, weight: 1, bm25: [null, null], similarities: [], agreement: false }, []);
    const f = Object.fromEntries(QUERY_FEATURES.map((name, i) => [name, row[i]]));
    expect(f).toMatchObject({ margin: 0, coverage: 0, bm25Gap: 0, bm25Strength: 0, agreement: 0, vectorGap: 0 });
    expect(hitFeatures([1, 2], [3], 4)).toEqual([1, 2, 3, 0.25]);
    expect(HIT_FEATURES).toHaveLength(CANDIDATE_FEATURES.length + QUERY_FEATURES.length + 1);
  });
});
