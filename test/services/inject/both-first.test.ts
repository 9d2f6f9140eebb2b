/**
 * Round 9: a prompt whose choice is empty gets the result both signals single out — first in BM25's list and in the
 * vector list, `INJECT.bothFirst.bm25Gap` × every other result's BM25 score, its similarity
 * `INJECT.bothFirst.similarityMargin` above every other result's, holding `minMatched` content terms (choose.ts
 * clearBothFirst). Hits are built by hand: the rule reads only the ranks and signals the search returns.
 */
import { describe, expect, it } from 'vitest';
import { chooseHits, INJECT } from '../../../src/services/index.js';
import { hit } from './_hits.js';

// "we get paged for high cpu every night" (lesson set, dev): the alerting lesson holds two of the prompt's six
// content terms (under the relevance rule's half, and the prompt winner's 40 %), BM25 scores it 1.46 × the next result
// and the vectors put it 0.21 above the next result's similarity.
const prompt = 'we get paged for high cpu every night';
const { bm25Gap, similarityMargin } = INJECT.bothFirst;
const alerting = (over: { bm25?: number; vector?: number; ranks?: { bm25: number; vector: number } } = {}) =>
  hit(1, 'Alert on symptoms users feel (error rate, latency), not on causes: CPU load alone should never page anyone.', 1, over.ranks ?? { bm25: 1, vector: 1 }, { bm25: over.bm25 ?? 10, vector: over.vector ?? 0.42 });
const other = hit(2, 'Cron jobs log to /var/log/cron; check that log before blaming the scheduler.', 0.7, { bm25: 2, vector: 2 }, { bm25: 10 / (bm25Gap + 0.1), vector: 0.42 - similarityMargin - 0.05 });
const options = { max: 3, alreadyShown: new Set<number>(), embedderKind: 'transformers', promptWinner: true, hybrid: true };

describe('a prompt’s result both signals single out', () => {
  it('is injected when the relevance rule and the prompt winner withheld everything', () => {
    const chosen = chooseHits([alerting(), other], prompt, options);
    expect(chosen.map((c) => c.hit.id)).toEqual([1]);
    expect(chosen[0]?.relevance).toMatchObject({ reason: 'both-first', matched: 2 });
  });

  it('not when the keywords’ lead is under the gap, nor when the similarity margin is under its threshold', () => {
    expect(chooseHits([alerting({ bm25: (10 / (bm25Gap + 0.1)) * bm25Gap * 0.95 }), other], prompt, options)).toEqual([]);
    expect(chooseHits([alerting({ vector: 0.42 - 0.1 }), other], prompt, options)).toEqual([]);
  });

  it('not when one list does not put it first, when it was shown already, or when it holds a single content term', () => {
    expect(chooseHits([alerting({ ranks: { bm25: 1, vector: 2 } }), other], prompt, options)).toEqual([]);
    expect(chooseHits([alerting(), other], prompt, { ...options, alreadyShown: new Set([1]) })).toEqual([]);
    expect(chooseHits([alerting(), other], 'we get paged every night about the database', options)).toEqual([]);
  });

  it('only in a hybrid search, and only for prompts', () => {
    expect(chooseHits([alerting(), other], prompt, { ...options, hybrid: false })).toEqual([]);
    expect(chooseHits([alerting(), other], prompt, { ...options, promptWinner: false })).toEqual([]);
  });
});
