// What injectForQuery needs, over a real store and the real BM25 search (no embedder): the inject tests' one setup.
import { createSearchEngine, type InjectDeps } from '../../../src/services/index.js';
import type { Store } from '../../../src/core/index.js';
import { tempDir } from '../../_helpers.js';

export function bm25InjectDeps(
  store: Store,
  options: { rrfK: number; sessionChars?: number; defer?: InjectDeps['defer'] },
): InjectDeps {
  const engine = createSearchEngine(store, { embedder: null, indexDir: tempDir(), tuning: { rrfK: options.rrfK, weights: { bm25: 1 }, topK: 10 } });
  return {
    store: () => store,
    search: (request) => engine.search(request),
    embedderKind: () => null,
    mode: 'bm25',
    answeredBy: 'server',
    limits: { sessionStartChars: 4_000, promptChars: 2_000, toolChars: 2_000, sessionChars: options.sessionChars ?? 20_000 },
    now: () => new Date('2026-11-27T12:00:00.000Z'),
    defer: options.defer ?? ((work) => work(true)),
  };
}
