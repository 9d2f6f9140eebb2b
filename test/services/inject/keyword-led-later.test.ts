/**
 * Round 10: with an embedder kind in `INJECT.keywordLedLater` (the distilled models), a prompt's second or third
 * injection that the vector list ranks above where BM25 does is not injected (choose.ts chooseHits).
 */
import { describe, expect, it } from 'vitest';
import { chooseHits, INJECT } from '../../../src/services/index.js';
import { hit } from './_hits.js';

describe('a later injection with a distilled model must be keyword-led', () => {
  // "the context filled up after listing node_modules" (lesson set, dev, ctx-use-256): BM25's first hit is the answer;
  // the vectors put an Exclude-node_modules lesson first, BM25 second, and the fusion scores it within 0.9 of the answer.
  const prompt = 'the context filled up after listing node_modules';
  const answer = hit(1, 'Large tool results (a tree of node_modules) flood the context; cap listings with head or depth limits.', 0.973, { bm25: 1, vector: 2 }, { bm25: 13.43, vector: 0.467 });
  const neighbour = hit(2, "Exclude node_modules when searching: `find . -path ./node_modules -prune -o -name '*.ts' -print`; without it find lists 100k vendor files.", 0.884, { bm25: 2, vector: 1 }, { bm25: 9.69, vector: 0.499 });
  const options = { max: 3, alreadyShown: new Set<number>(), promptWinner: true, hybrid: true };

  it('drops the vector-led second injection with a distilled model', () => {
    expect(INJECT.keywordLedLater).toContain('transformers');
    expect(chooseHits([answer, neighbour], prompt, { ...options, embedderKind: 'transformers' }).map((c) => c.hit.id)).toEqual([1]);
  });

  it('keeps it with USE lite, whose vectors read conversation and dialogue turns well', () => {
    expect(chooseHits([answer, neighbour], prompt, { ...options, embedderKind: 'use-lite' }).map((c) => c.hit.id)).toEqual([1, 2]);
  });

  it('keeps a later injection BM25 ranks as high as the vectors do', () => {
    const keywordLed = hit(2, neighbour.engram.text, 0.884, { bm25: 2, vector: 3 }, { bm25: 9.69, vector: 0.41 });
    expect(chooseHits([answer, keywordLed], prompt, { ...options, embedderKind: 'transformers' }).map((c) => c.hit.id)).toEqual([1, 2]);
  });

  it('never drops the first injection, and leaves searches without a fusion alone', () => {
    // The vector-led hit alone is the first injection: it stays.
    expect(chooseHits([neighbour], prompt, { ...options, embedderKind: 'transformers' }).map((c) => c.hit.id)).toEqual([2]);
    // Not a hybrid search (BM25 or vector mode): nothing to weigh the vector list against.
    expect(chooseHits([answer, neighbour], prompt, { ...options, hybrid: false, embedderKind: 'transformers' }).map((c) => c.hit.id)).toEqual([1, 2]);
  });

  it('lets a keyword-led hit behind the dropped one take the place', () => {
    const third = hit(3, 'Large listings of node_modules flood the context window; use tree -L 2 and head.', 0.9, { bm25: 3, vector: 4 }, { bm25: 9.0, vector: 0.4 });
    expect(chooseHits([answer, neighbour, third], prompt, { ...options, embedderKind: 'transformers' }).map((c) => c.hit.id)).toEqual([1, 3]);
  });
});
