/**
 * Round 7: in a hybrid search a hit injected on its vector similarity alone needs BM25's agreement (its top
 * `INJECT.semanticKeywordDepth`), and a prompt's clear keyword winner is BM25's first hit wherever the fusion placed it.
 */
import { describe, expect, it } from 'vitest';
import { addEngram, chooseHits, INJECT, injectForQuery } from '../../../src/services/index.js';
import { tempStore } from '../../_helpers.js';
import { bm25InjectDeps } from './_deps.js';
import { hit } from './_hits.js';

describe('a semantic match in a hybrid search needs BM25 to rank it near the top', () => {
  // "run git with the branch name the user typed": the nearest vector is a worktree lesson BM25 ranks 12th.
  const prompt = 'run git with the branch name the user typed';
  const worktree = (bm25: number | null) => hit(1, 'Use git worktree add for parallel work; never edit the main checkout.', 1, { bm25, vector: 1 }, { bm25: bm25 === null ? null : 3, vector: 0.77 });
  const options = { max: 3, alreadyShown: new Set<number>(), embedderKind: 'use-lite', promptWinner: true };

  it('refuses the nearest vector that BM25 ranks below its top 3, or does not rank at all', () => {
    expect(chooseHits([worktree(INJECT.semanticKeywordDepth + 1)], prompt, { ...options, hybrid: true })).toEqual([]);
    expect(chooseHits([worktree(null)], prompt, { ...options, hybrid: true })).toEqual([]);
  });

  it('accepts it when BM25 ranks it in its top 3, or when the search had no keyword list to agree', () => {
    const chosen = chooseHits([worktree(INJECT.semanticKeywordDepth)], prompt, { ...options, hybrid: true });
    expect(chosen.map((c) => c.hit.id)).toEqual([1]);
    expect(chosen[0]?.relevance.reason).toBe('semantic');
    expect(chooseHits([worktree(null)], prompt, options).map((c) => c.hit.id)).toEqual([1]);
  });

  it('goes on to the next result, as for any hit the relevance rule refuses', () => {
    const next = hit(2, 'Never force-push to main; run git rebase on feature branches and push the branch name with --force-with-lease.', 0.95, { bm25: 1, vector: 3 }, { bm25: 9.7, vector: 0.6 });
    const chosen = chooseHits([worktree(12), next], prompt, { ...options, hybrid: true });
    expect(chosen.map((c) => c.hit.id)).toEqual([2]);
    expect(chosen[0]?.relevance.reason).toBe('lexical');
  });
});

describe('the prompt winner is BM25’s first hit wherever the fusion placed it', () => {
  // "can we ship the migration this friday afternoon": the fusion put a lesson BM25 ranks 2nd first, above the
  // Friday-deploys lesson BM25 scores 1.8 × every other result.
  const prompt = 'can we ship the migration this friday afternoon';
  const lifted = hit(1, 'Schema migrations are append-only and numbered; never edit an applied one.', 1, { bm25: 2, vector: 2 }, { bm25: 6, vector: 0.5 });
  const friday = hit(2, 'Do not run database migrations on Fridays; deploys that need one wait for Monday.', 0.9, { bm25: 1, vector: 26 }, { bm25: 6 * INJECT.promptWinner.bm25Gap, vector: 0.2 });
  const options = { max: 3, alreadyShown: new Set<number>(), embedderKind: 'transformers', promptWinner: true, hybrid: true };

  it('injects it from the second place', () => {
    const chosen = chooseHits([lifted, friday], prompt, options);
    expect(chosen.map((c) => c.hit.id)).toEqual([2]);
    expect(chosen[0]?.relevance.reason).toBe('clear-winner');
  });

  it('not when it was shown already, nor when its lead is under the gap', () => {
    expect(chooseHits([lifted, friday], prompt, { ...options, alreadyShown: new Set([2]) })).toEqual([]);
    expect(chooseHits([lifted, { ...friday, signals: { bm25: 6 * INJECT.promptWinner.bm25Gap * 0.95, vector: 0.2 } }], prompt, options)).toEqual([]);
  });
});

describe('injectForQuery tells the choice whether the search was hybrid', () => {
  // The response is the real BM25 search's over a real store, relabelled as a hybrid one whose vector list put the
  // memory first: no offline model gives a topic neighbour this reliably in a four-line store (mock of the labels only).
  it('refuses a vector-only semantic match of a hybrid search, and keeps it in a vector search', async () => {
    const store = tempStore();
    const lesson = addEngram(store, { text: 'Use git worktree add for parallel work; never edit the main checkout.' });
    addEngram(store, { text: 'Fonts are served from the CDN, never bundled.' });
    const base = bm25InjectDeps(store, { rrfK: 5 });
    const relabelled = (mode: 'hybrid' | 'vector') => ({
      ...base,
      embedderKind: () => 'use-lite',
      search: async (request: Parameters<typeof base.search>[0]) => {
        const response = await base.search({ ...request, query: 'worktree' });
        return { ...response, mode, model: 'use-lite', results: response.results.slice(0, 1).map((h) => ({ ...h, ranks: { bm25: null, vector: 1, anchor: null }, signals: { bm25: null, vector: 0.8 } })) };
      },
    });
    const session = { sessionId: 'semantic', agent: 'claude' as const, cwd: '/work/shop', transcriptPath: null };
    const env = { tags: [], agent: 'claude' as const, cwd: '/work/shop' };
    const prompt = { event: 'UserPromptSubmit', query: 'how do I keep two checkouts side by side', max: 3, budget: 2_000, heading: 'Memories' };
    expect(await injectForQuery(relabelled('hybrid'), session, env, prompt)).toBeNull();
    expect((await injectForQuery(relabelled('vector'), { ...session, sessionId: 'vector' }, env, prompt))?.ids).toEqual([lesson.engram.id]);
  });
});
