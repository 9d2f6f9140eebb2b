/**
 * Two hooks of one session answered together (parallel tool calls reaching the warm server at once), over a real
 * store and the real BM25 search: the server records what it showed after answering, so the second answer must
 * already count what the first chose — no engram injected twice, no budget spent twice.
 */
import { describe, expect, it } from 'vitest';
import { addEngram, injectForQuery } from '../../../src/services/index.js';
import { tempStore } from '../../_helpers.js';
import { bm25InjectDeps } from './_deps.js';

const session = { sessionId: 'parallel-tools', agent: 'claude' as const, cwd: '/work/shop', transcriptPath: null };
const env = { tags: [], agent: 'claude' as const, cwd: '/work/shop' };
// The first lesson holds four of the call's words, so it is injected without the tool-event margin (choose.ts).
const request = { event: 'PreToolUse', query: 'docker buildkit cache mount in CI', max: 3, budget: 2_000, heading: 'Memories' };

function setup(sessionChars = 20_000) {
  const store = tempStore();
  addEngram(store, { text: 'Docker builds in CI need BuildKit and its cache mount, or every build starts cold.' });
  addEngram(store, { text: 'The CI docker cache is keyed by the lockfile hash; a changed lockfile rebuilds everything.' });
  addEngram(store, { text: 'Fonts are served from the CDN, never bundled.' });
  const deferred: Array<(delivered: boolean) => void> = [];
  const deps = bm25InjectDeps(store, { rrfK: 60, sessionChars, defer: (work) => deferred.push(work) });
  return { store, deps, deferred, flush: () => deferred.splice(0).forEach((work) => work(true)) };
}

describe('injectForQuery answered together for one session', () => {
  it('does not inject what the other answer chose but has not recorded yet', async () => {
    const { store, deps, flush } = setup();
    const [first, second] = await Promise.all([injectForQuery(deps, session, env, request), injectForQuery(deps, session, env, request)]);
    expect(first?.ids.length).toBeGreaterThan(0);
    const shownTwice = (second?.ids ?? []).filter((id) => first?.ids.includes(id));
    expect(shownTwice).toEqual([]);
    flush();
    const rows = store.activity.shown(session.sessionId);
    expect(new Set(rows.map((row) => row.engram_id)).size).toBe(rows.length);
    // Recorded: a later call sees them in the store, and nothing is held back any more.
    expect(await injectForQuery(deps, session, env, request)).toBeNull();
  });

  it('counts unrecorded characters against the session budget', async () => {
    // What one block costs the session, measured on a store of its own.
    const probe = setup();
    await injectForQuery(probe.deps, session, env, { ...request, max: 1 });
    probe.flush();
    const cost = probe.store.activity.injectedChars(session.sessionId);
    expect(cost).toBeGreaterThan(0);
    // A session budget one more block fits in only if the first block's characters are not counted before written.
    const { deps, flush } = setup(cost + 150);
    expect(await injectForQuery(deps, session, env, { ...request, max: 1 })).not.toBeNull();
    expect(await injectForQuery(deps, session, env, request)).toBeNull();
    flush();
    expect(await injectForQuery(deps, session, env, request)).toBeNull();
  });

  it('lets the ids go when the recording fails, so they are not held back for ever', async () => {
    const { store, deps, deferred } = setup();
    const first = await injectForQuery(deps, session, env, request);
    expect(first).not.toBeNull();
    store.close();
    expect(() => deferred.splice(0).forEach((work) => work(true))).toThrow();
    const fresh = setup();
    const again = await injectForQuery({ ...fresh.deps }, session, env, request);
    expect(again?.ids).toEqual(first?.ids);
    fresh.flush();
  });

  it('records nothing of an answer that never reached its hook, and frees its engrams and budget for the next', async () => {
    const { store, deps, deferred } = setup();
    const first = await injectForQuery(deps, session, env, request);
    expect(first?.ids.length).toBeGreaterThan(0);
    // The hook had stopped waiting (the warm server's answer came late): nothing was shown.
    deferred.splice(0).forEach((work) => work(false));
    expect(store.activity.shown(session.sessionId)).toEqual([]);
    expect(store.activity.injectedChars(session.sessionId)).toBe(0);
    // The next call of the session may show them.
    expect((await injectForQuery(deps, session, env, request))?.ids).toEqual(first?.ids);
  });
});

