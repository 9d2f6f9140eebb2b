import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addEngram, buildBm25Index, deleteEngram, createBm25Cache, deprecateEngram, loadBm25Snapshot, snapshotPath, updateEngram } from '../../../src/services/index.js';
import { tempDir, tempStore } from '../../_helpers.js';

describe('BM25 index', () => {
  it('works with 0, 1 and 2 engrams (wink needs 3 documents; padding never shows)', () => {
    const store = tempStore();
    expect(buildBm25Index(store).index.search('anything', 10)).toEqual([]);
    addEngram(store, { text: 'Use pnpm, not npm, in this monorepo.' });
    let { index } = buildBm25Index(store);
    expect(index.docs).toBe(1);
    expect(index.search('pnpm', 10)).toEqual([{ id: 1, score: expect.any(Number) }]);
    expect(index.search('', 10)).toEqual([]);
    addEngram(store, { text: 'Docker builds need BuildKit for cache mounts.' });
    ({ index } = buildBm25Index(store));
    expect(index.search('docker cache', 10).map((hit) => hit.id)).toEqual([2]);
  });

  it('stems, drops stop words, splits identifiers, and weights fields', () => {
    const store = tempStore();
    addEngram(store, { text: 'Running the migrations twice corrupts the seed data.', category: 'database' });
    addEngram(store, { text: 'Call parseHttpResponse only after checking the status.', category: 'development' });
    addEngram(store, { title: 'Flaky tests', text: 'Retry once, then quarantine.', category: 'testing' });
    addEngram(store, { text: 'A note that mentions flaky in passing among many other words about builds.', category: 'general' });
    const { index } = buildBm25Index(store);
    expect(index.search('migration runs', 10).map((h) => h.id)).toEqual([1]);
    expect(index.search('http response parse', 10).map((h) => h.id)).toEqual([2]);
    expect(index.search('the and of', 10)).toEqual([]);
    // The title field weighs more than body text.
    expect(index.search('flaky', 10).map((h) => h.id)).toEqual([3, 4]);
    // Category words are searchable.
    expect(index.search('database', 10).map((h) => h.id)).toEqual([1]);
  });

  it('filters by review state, category, tags and project inside the search; deleted engrams are never indexed', () => {
    const store = tempStore();
    addEngram(store, { text: 'Deploy with the blue-green script.', category: 'ops/deploy', tags: 'k8s' });
    addEngram(store, { text: 'Deploy on Fridays is forbidden.', category: 'ops', project: 'shop' });
    addEngram(store, { text: 'Deploy previews live on Vercel.', category: 'frontend', project: 'blog' });
    addEngram(store, { text: 'Deploy keys rotate monthly.', category: 'security' });
    deprecateEngram(store, 4, { reason: 'obsolete' });
    addEngram(store, { text: 'Deploy notes nobody wants.' });
    deleteEngram(store, 5);
    const { index } = buildBm25Index(store);
    const active = new Set(['active'] as const);
    expect(index.search('deploy', 10, { statuses: active }).map((h) => h.id).sort()).toEqual([1, 2, 3]);
    expect(index.search('deploy', 10, { statuses: new Set(['deprecated'] as const) }).map((h) => h.id)).toEqual([4]);
    expect(index.search('deploy', 10).map((h) => h.id).sort()).toEqual([1, 2, 3, 4]);
    expect(index.search('deploy', 10, { category: 'ops' }).map((h) => h.id).sort()).toEqual([1, 2]);
    expect(index.search('deploy', 10, { tags: ['k8s'] }).map((h) => h.id)).toEqual([1]);
    expect(index.search('deploy', 10, { statuses: active, projects: new Set(['shop', '']) }).map((h) => h.id).sort()).toEqual([1, 2]);
    expect(index.search('deploy', 10, { projects: new Set(['blog']) }).map((h) => h.id)).toEqual([3]);
  });

  it('persists a snapshot that a cold process loads, and rebuilds after any write', () => {
    const store = tempStore();
    const dir = tempDir();
    for (const text of ['Alpha lesson about caching.', 'Beta lesson about queues.', 'Gamma lesson about caching layers.']) {
      addEngram(store, { text });
    }
    expect(createBm25Cache(dir).get(store).source).toBe('rebuilt');
    const state = store.searchState();
    expect(existsSync(snapshotPath(dir, state.store_uid))).toBe(true);

    // A new process (a new cache) loads the snapshot instead of rebuilding.
    const cold = createBm25Cache(dir);
    const loaded = cold.get(store);
    expect(loaded.source).toBe('snapshot');
    expect(loaded.index.search('caching', 10).map((h) => h.id).sort()).toEqual([1, 3]);
    expect(cold.get(store).source).toBe('memory');

    // Any change to searchable fields moves the generation: the memory copy and the snapshot are both stale.
    updateEngram(store, 2, { text: 'Beta lesson about caching too.' });
    expect(store.searchState().generation).toBeGreaterThan(state.generation);
    expect(loadBm25Snapshot(dir, store.searchState())).toBeUndefined();
    const again = cold.get(store);
    expect(again.source).toBe('rebuilt');
    expect(again.index.search('caching', 10).map((h) => h.id).sort()).toEqual([1, 2, 3]);
  });

  it('rebuilds instead of trusting a torn or foreign snapshot, and works with no snapshot folder', () => {
    const store = tempStore();
    const dir = tempDir();
    for (const text of ['one lesson here', 'two lessons here', 'three lessons here']) addEngram(store, { text });
    createBm25Cache(dir).get(store);
    const file = snapshotPath(dir, store.searchState().store_uid);
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 200));
    expect(createBm25Cache(dir).get(store).source).toBe('rebuilt');
    writeFileSync(file, 'not json at all');
    expect(createBm25Cache(dir).get(store).source).toBe('rebuilt');
    const memoryOnly = createBm25Cache(undefined);
    expect(memoryOnly.get(store).source).toBe('rebuilt');
    expect(memoryOnly.get(store).source).toBe('memory');
    // A snapshot folder that cannot be written is reported, not thrown.
    const warnings: unknown[] = [];
    const blocked = join(tempDir(), 'file');
    writeFileSync(blocked, '');
    expect(createBm25Cache(join(blocked, 'sub'), (error) => warnings.push(error)).get(store).source).toBe('rebuilt');
    expect(warnings).toHaveLength(1);
  });
});
