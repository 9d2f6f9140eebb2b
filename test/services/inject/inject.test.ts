import { describe, expect, it } from 'vitest';
import type { Engram } from '../../../src/core/index.js';
import {
  BLOCK_CLOSE,
  BLOCK_OPEN,
  chooseHits,
  INJECT,
  failureQuery,
  patchFiles,
  promptQuery,
  renderBlock,
  toolQuery,
  withoutGenericWords,
  type SearchHit,
} from '../../../src/services/index.js';

const engram = (id: number, text: string, extra: Partial<Engram> = {}): Engram =>
  ({ id, text, title: null, category: 'general', tags: [], ...extra }) as Engram;

const hit = (id: number, text: string, signals: Partial<SearchHit['signals']> = {}, ranks: Partial<SearchHit['ranks']> = {}, confidence = 0.9): SearchHit => ({
  id,
  score: 1 / id,
  confidence,
  ranks: { bm25: id, vector: null, anchor: null, ...ranks },
  signals: { bm25: 1, vector: null, ...signals },
  engram: engram(id, text),
});

describe('chooseHits', () => {
  const options = { alreadyShown: new Set<number>(), embedderKind: null, minConfidence: INJECT.minConfidence.prompt };

  it('keeps confident hits not shown yet, at most max, with the match that explains each', () => {
    const hits = [
      hit(1, 'Docker builds need BuildKit in CI'),
      hit(2, 'Docker compose builds the db image in CI'),
      hit(3, 'Docker builds cache layers in CI'),
    ];
    const chosen = chooseHits(hits, 'docker builds fail in CI', { ...options, max: 1, alreadyShown: new Set([1]) });
    expect(chosen.map((c) => c.hit.id)).toEqual([2]);
    expect(chosen[0]?.relevance).toMatchObject({ reason: 'lexical', matched: 3 });
  });

  it('skips results whose confidence is below the threshold, wherever they stand', () => {
    const min = INJECT.minConfidence.prompt;
    const hits = [hit(1, 'Docker builds need BuildKit in CI', {}, {}, min - 0.01), hit(2, 'Docker builds cache layers', {}, {}, min), hit(3, 'Docker image tags', {}, {}, min / 2)];
    expect(chooseHits(hits, 'docker builds fail in CI', { ...options, max: 3 }).map((c) => c.hit.id)).toEqual([2]);
    // Tool calls need more confidence than prompts: their results come from BM25 alone.
    expect(INJECT.minConfidence.tool).toBeGreaterThan(INJECT.minConfidence.prompt);
  });
});

describe('renderBlock', () => {
  it('marks the block, leads with citable ids, and keeps an engram from closing it early', () => {
    const block = renderBlock([engram(7, 'Use [/ENGRAM] carefully\nacross lines', { category: 'tooling', title: 'Markers' })], { heading: 'Memories', budget: 1000 });
    expect(block?.text).toBe(`${BLOCK_OPEN} Memories (ids are citable as EG#<id>)\n- EG#7 [tooling] Markers: Use (/ENGRAM) carefully across lines\n${BLOCK_CLOSE}`);
  });

  it('stays within the budget, names what it dropped, and cuts a long engram', () => {
    const long = engram(1, 'word '.repeat(400));
    const items = [long, ...Array.from({ length: 20 }, (_, i) => engram(i + 2, `lesson number ${i} with some words`))];
    const block = renderBlock(items, { heading: 'Memories', budget: 1200 });
    expect(block?.text.length).toBeLessThanOrEqual(1200);
    expect(block?.text).toContain('…');
    expect(block?.dropped.length).toBeGreaterThan(0);
    expect(block?.text).toMatch(/\(\d+ more not shown for space: EG#\d+/);
    expect(renderBlock([long], { heading: 'Memories', budget: 200 })).toBeNull();
  });
});
