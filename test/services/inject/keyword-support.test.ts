/**
 * Round 8: in a hybrid search a hit whose BM25 score is under `INJECT.keywordSupport` of the best BM25 score among the
 * results is not injected, however many of the prompt's words it holds (choose.ts chooseHits).
 */
import { describe, expect, it } from 'vitest';
import { chooseHits, INJECT } from '../../../src/services/index.js';
import { hit } from './_hits.js';

describe('a hit injected on a hybrid prompt needs the keywords’ support', () => {
  // "write a makefile for the c project" (lesson set, dev, unanswerable): the first three results hold none of the
  // prompt's words, the fourth holds "project" — a one-word match the short-query clause admits — with a third of the
  // BM25 score of the best result (1.8 against 5.2).
  const prompt = 'write a makefile for the c project';
  const best = 5.2;
  const firsts = [1, 2, 3].map((id) => hit(id, `Unrelated lesson number ${id} about fonts and colours.`, 1 - id / 10, { bm25: id, vector: id }, { bm25: best - id / 10, vector: 0.3 }));
  const retry = (bm25: number) => hit(4, 'Every change to a helper in the retry project gets a test first.', 0.6, { bm25: 7, vector: 9 }, { bm25, vector: 0.22 });
  const options = { max: 3, alreadyShown: new Set<number>(), embedderKind: 'transformers', promptWinner: true };

  it('refuses a lexical match the keywords score under the share of their best result', () => {
    expect(chooseHits([...firsts, retry(1.8)], prompt, { ...options, hybrid: true })).toEqual([]);
  });

  it('accepts it at the share, and in a search without a fusion to correct (BM25 or vector mode)', () => {
    const atShare = chooseHits([...firsts, retry(INJECT.keywordSupport * best)], prompt, { ...options, hybrid: true });
    expect(atShare.map((c) => c.hit.id)).toEqual([4]);
    expect(atShare[0]?.relevance.reason).toBe('lexical');
    expect(chooseHits([...firsts, retry(1.8)], prompt, options).map((c) => c.hit.id)).toEqual([4]);
  });

  it('leaves a hybrid search where the keywords found none of the results to the other rules', () => {
    const vectorOnly = hit(5, 'Every change to a helper in the retry project gets a test first.', 1, { vector: 1 }, { vector: 0.3 });
    expect(chooseHits([vectorOnly], prompt, { ...options, hybrid: true }).map((c) => c.hit.id)).toEqual([5]);
  });
});
