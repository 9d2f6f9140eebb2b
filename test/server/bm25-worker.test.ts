/**
 * The worker thread the warm server rebuilds its BM25 base in (dist/bm25-worker.mjs, built by the global setup): it
 * reads the store through its own connection, persists the snapshot, prunes the change log that snapshot covers, and
 * hands back bytes that decode to the index an in-thread build gives.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addEngram, bm25WorkerBuilder, buildBm25Index, createBm25Cache, snapshotPath } from '../../src/services/index.js';
import { PackedBm25Index } from '../../src/services/recall/bm25.js';
import { decodeSnapshot } from '../../src/services/recall/bm25-packed.js';
import { ROOT, tempDir, tempStore } from '../_helpers.js';

describe('BM25 build worker', () => {
  it('builds, persists and prunes in a worker thread; the base ranks as an in-thread build does', async () => {
    const store = tempStore();
    const dir = tempDir();
    for (let i = 0; i < 60; i++) addEngram(store, { text: `Worker lesson ${i}: ${['cache keys', 'queue retries', 'deploy windows'][i % 3]} matter, variant ${i % 5}.` });
    const builder = bm25WorkerBuilder(join(ROOT, 'dist', 'bm25-worker.mjs'));
    const bytes = await builder({ dbPath: store.path, indexDir: dir });
    const state = store.searchState();
    expect(existsSync(snapshotPath(dir, state.store_uid))).toBe(true);
    expect(store.db.prepare('SELECT count(*) FROM search_changes').pluck().get()).toBe(0);
    const base = decodeSnapshot(bytes);
    expect(base.state).toEqual(state);
    const fromWorker = new PackedBm25Index(base);
    const here = buildBm25Index(store).index;
    for (const query of ['cache keys', 'queue retries variant 3', 'deploy lesson 12']) {
      expect(fromWorker.search(query, 100)).toEqual(here.search(query, 100));
    }
    // A cold cache uses what the worker wrote.
    expect(createBm25Cache(dir).get(store).source).toBe('snapshot');
  });

  it('reports a build that fails (a store that is not there) instead of hanging', async () => {
    const builder = bm25WorkerBuilder(join(ROOT, 'dist', 'bm25-worker.mjs'));
    await expect(builder({ dbPath: join(tempDir(), 'missing', 'engram.db'), indexDir: undefined })).rejects.toThrow();
  });
});
