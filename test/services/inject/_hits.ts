// Search hits built by hand for the choose.ts tests: an engram's text, the fused score, each list's rank and signal.
import type { Engram } from '../../../src/core/index.js';
import type { SearchHit } from '../../../src/services/index.js';

const engram = (id: number, text: string): Engram => ({ id, text, title: null, category: 'general', tags: [] }) as unknown as Engram;

/** A hit for engram `id` holding `text`. */
export const hit = (id: number, text: string, score: number, ranks: Partial<SearchHit['ranks']>, signals: Partial<SearchHit['signals']> = {}): SearchHit => ({
  id,
  score,
  ranks: { bm25: null, vector: null, anchor: null, ...ranks },
  signals: { bm25: null, vector: null, ...signals },
  engram: engram(id, text),
});
