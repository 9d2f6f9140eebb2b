/**
 * Round 5: a prompt whose first result the keyword ranking singles out is injected although the relevance rule
 * (half of the content terms) withholds it — over a real store and the real BM25 search, through injectForQuery, so
 * the hooks' path is what is tested. Tool events do not get it.
 */
import { describe, expect, it } from 'vitest';
import { addEngram, injectForQuery } from '../../../src/services/index.js';
import { tempStore } from '../../_helpers.js';
import { bm25InjectDeps } from './_deps.js';

const session = { sessionId: 'prompt-winner', agent: 'claude' as const, cwd: '/work/shop', transcriptPath: null };
const env = { tags: [], agent: 'claude' as const, cwd: '/work/shop' };

function setup() {
  const store = tempStore();
  const ci = addEngram(store, { text: 'Keep CI under 15 minutes: run the slow e2e suite only on main and on PRs labelled e2e.', category: 'ops/ci' });
  addEngram(store, { text: 'Batch inserts inside one transaction; 10k single-row autocommits take seconds.' });
  addEngram(store, { text: 'Fonts are served from the CDN, never bundled.' });
  const deps = bm25InjectDeps(store, { rrfK: 5 });
  return { deps, ci: ci.engram.id };
}

describe('injectForQuery on a prompt with a clear keyword winner', () => {
  it('injects the lesson that holds 2 of the prompt’s 5 content terms when BM25 singles it out', async () => {
    const { deps, ci } = setup();
    const prompt = { event: 'UserPromptSubmit', query: 'CI takes 40 minutes now', max: 3, budget: 2_000, heading: 'Memories' };
    expect((await injectForQuery(deps, session, env, prompt))?.ids).toEqual([ci]);
  });

  it('does not do so for a tool event', async () => {
    const { deps } = setup();
    const tool = { event: 'PreToolUse', query: 'CI takes 40 minutes now', max: 2, budget: 2_000, heading: 'Memories' };
    expect(await injectForQuery(deps, { ...session, sessionId: 'tool' }, env, tool)).toBeNull();
  });
});
