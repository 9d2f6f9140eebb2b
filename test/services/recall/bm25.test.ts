import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addEngram, buildBm25Index, deleteEngram, createBm25Cache, deprecateEngram, loadBm25Snapshot, rebuildBm25Snapshot, snapshotPath, updateEngram } from '../../../src/services/index.js';
import { buildBm25Base, saveBm25Snapshot } from '../../../src/services/recall/bm25.js';
import { encodeSnapshot } from '../../../src/services/recall/bm25-packed.js';
import type { Store } from '../../../src/core/index.js';
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

  it('scores analysed terms with weights: weight 1 is the plain search, other weights scale a term, new terms find new documents', () => {
    const store = tempStore();
    addEngram(store, { text: 'Docker builds need BuildKit for cache mounts.' });
    addEngram(store, { text: 'The docker registry mirror speeds up pulls.' });
    addEngram(store, { text: 'Enable BuildKit with DOCKER_BUILDKIT=1 on CI runners.' });
    addEngram(store, { text: 'Cache npm downloads between CI runs.' });
    const { index } = buildBm25Index(store);
    expect(index.searchWeighted([{ term: 'docker', weight: 1 }, { term: 'cach', weight: 1 }], 10)).toEqual(index.search('docker cache', 10));
    const plain = new Map(index.search('docker', 10).map((hit) => [hit.id, hit.score]));
    for (const hit of index.searchWeighted([{ term: 'docker', weight: 2.5 }], 10)) expect(hit.score).toBeCloseTo(2.5 * (plain.get(hit.id) as number), 10);
    // An expansion term the query lacks brings in what only it holds.
    const expanded = index.searchWeighted([{ term: 'docker', weight: 1 }, { term: 'npm', weight: 0.3 }], 10).map((hit) => hit.id);
    expect(index.search('docker', 10).map((hit) => hit.id)).not.toContain(4);
    expect(expanded).toContain(4);
    expect(expanded).toHaveLength(index.search('docker', 10).length + 1);
    // Written since the base was built: the overlay scores with the same weights.
    addEngram(store, { text: 'Docker runner images are cached for a day.' });
    const cache = createBm25Cache(undefined);
    const overlaid = cache.get(store).index;
    const fresh = buildBm25Index(store).index;
    const terms = [
      { term: 'docker', weight: 1 },
      { term: 'runner', weight: 0.3 },
    ];
    expect(overlaid.searchWeighted(terms, 10).map((hit) => hit.id)).toEqual(fresh.searchWeighted(terms, 10).map((hit) => hit.id));
    expect(overlaid.searchWeighted(terms, 10).map((hit) => hit.id)).toContain(5);
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

  it('persists a snapshot that a cold process loads; a small store rebuilds after a write', () => {
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

    // Any change to searchable fields moves the generation. The snapshot is now older than the store; below
    // `overlayFrom` documents an index is rebuilt rather than updated (cheaper than carrying changes).
    updateEngram(store, 2, { text: 'Beta lesson about caching too.' });
    expect(store.searchState().generation).toBeGreaterThan(state.generation);
    expect(loadBm25Snapshot(dir, store.searchState())?.state.generation).toBe(state.generation);
    const again = cold.get(store);
    expect(again.source).toBe('rebuilt');
    expect(again.index.search('caching', 10).map((h) => h.id).sort()).toEqual([1, 2, 3]);
    // A snapshot from a later generation than the store (a store restored from a backup) is never used.
    expect(loadBm25Snapshot(dir, { ...store.searchState(), generation: state.generation - 1 })).toBeUndefined();
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

  describe('incremental updates (the change log and the overlay)', () => {
    /** A store of `n` engrams about numbered topics, written straight into the table (fast). */
    function seeded(n: number): Store {
      const store = tempStore();
      const at = new Date().toISOString();
      store.write(() => {
        for (let i = 1; i <= n; i++) {
          store.engrams.insert({
            kind: 'lesson', title: null, text: `Lesson ${i} about ${['caching', 'queues', 'deploys', 'migrations'][i % 4]} and topic${i}.`,
            content: null, category: i % 2 ? 'ops' : 'development', tags: i % 3 ? [] : ['k8s'], prerequisites: null, source: 'manual',
            source_sessions: [], session_id: null, tool_name: null, occurrence_count: 1, times_matched: 0, last_matched_at: null,
            pinned: false, auto_pinned: false, deprecated: false, deprecated_reason: null, project: null, scope: 'personal',
            topic_key: null, revision_count: 0, duplicate_count: 0, created_at: at, updated_at: at, last_seen_at: at, deleted_at: null,
          });
        }
      });
      return store;
    }
    const ids = (hits: Array<{ id: number }>) => hits.map((hit) => hit.id);

    it('logs which engram each generation was about, and says when the log cannot tell', () => {
      const store = seeded(3);
      const { generation } = store.searchState();
      updateEngram(store, 2, { text: 'Edited lesson about caching.' });
      deleteEngram(store, 3);
      const changes = store.searchChanges(generation);
      expect(changes).toMatchObject({ complete: true, ids: [2, 3] });
      expect(changes.generation).toBeGreaterThan(generation);
      expect(store.searchChanges(changes.generation)).toEqual({ generation: changes.generation, complete: true, ids: [] });
      store.write(() => store.pruneSearchChanges(changes.generation - 1));
      expect(store.searchChanges(generation).complete).toBe(false);
      expect(store.searchChanges(changes.generation - 1).complete).toBe(true);
    });

    it('finds a new engram after a write without a rebuild, and respects updates, deletes and status changes', () => {
      const store = seeded(40);
      const cache = createBm25Cache(undefined, { overlayFrom: 10 });
      expect(cache.get(store).source).toBe('rebuilt');
      const unchanged = cache.get(store).index.search('topic9', 10);
      addEngram(store, { text: 'Zebra crossings need a flamingo lesson.', category: 'ops' });
      let got = cache.get(store);
      expect(got.source).toBe('memory');
      expect(ids(got.index.search('flamingo', 10))).toEqual([41]);
      expect(got.index.docs).toBe(41);
      expect(got.index.termsOf(41, ['flamingo', 'zebra', 'caching'])).toEqual(new Set(['flamingo', 'zebra']));
      expect(got.index.idf('flamingo')).toBeGreaterThan(got.index.idf('lesson'));

      updateEngram(store, 5, { text: 'Lesson five now talks about flamingo feeding.' });
      got = cache.get(store);
      expect(got.source).toBe('memory');
      expect(ids(got.index.search('flamingo', 10)).sort((a, b) => a - b)).toEqual([5, 41]);
      expect(ids(got.index.search('topic5', 10))).toEqual([]); // the old text of 5 is gone
      expect(got.index.termsOf(5, ['topic5', 'flamingo'])).toEqual(new Set(['flamingo']));

      deleteEngram(store, 41);
      deprecateEngram(store, 5, { reason: 'obsolete' });
      got = cache.get(store);
      expect(got.source).toBe('memory');
      expect(ids(got.index.search('flamingo', 10))).toEqual([5]);
      expect(ids(got.index.search('flamingo', 10, { statuses: new Set(['active'] as const) }))).toEqual([]);
      expect(ids(got.index.search('flamingo', 10, { statuses: new Set(['deprecated'] as const), category: 'development' }))).toEqual([]);
      expect(got.index.termsOf(41, ['flamingo'])).toBeUndefined();
      deleteEngram(store, 7, { hard: true });
      got = cache.get(store);
      expect(ids(got.index.search('topic7', 10))).toEqual([]);
      expect(got.index.docs).toBe(39);
      // Unchanged engrams keep their base scores.
      expect(got.index.search('topic9', 10)).toEqual(unchanged);
    });

    it('finds an engram written since the base under a tag the base never held', () => {
      const store = seeded(40);
      const cache = createBm25Cache(undefined, { overlayFrom: 10 });
      expect(cache.get(store).source).toBe('rebuilt');
      addEngram(store, { text: 'Flamingo deploys need a checklist.', tags: 'birds' });
      const got = cache.get(store);
      expect(got.source).toBe('memory');
      expect(ids(got.index.search('flamingo', 10, { tags: ['birds'] }))).toEqual([41]);
      expect(ids(got.index.search('flamingo deploys', 10, { tags: ['birds', 'k8s'] }))).toEqual([]);
      // A tag only base documents hold still filters the overlay out.
      expect(ids(got.index.search('flamingo', 10, { tags: ['k8s'] }))).toEqual([]);
    });

    it('a builder that fails is reported, the search rebuilds here, and background builds wait a minute before trying again', async () => {
      const store = seeded(300);
      const errors: unknown[] = [];
      let builds = 0;
      const builder = async () => {
        builds++;
        throw new Error('worker died');
      };
      const cache = createBm25Cache(tempDir(), { overlayFrom: 10, builder, onError: (error) => errors.push(error) });
      const first = await cache.getAsync(store);
      expect(first.source).toBe('rebuilt');
      expect(ids(first.index.search('topic12', 5))).toEqual([12]);
      expect([builds, errors.length]).toEqual([1, 1]);
      // Past the background limit the overlay keeps answering; no new build is started while the last one failed.
      for (let i = 0; i < 210; i++) addEngram(store, { text: `Heron note ${i} about caching.` });
      const during = await cache.getAsync(store);
      expect(during.source).toBe('memory');
      expect(during.index.search('heron', 300)).toHaveLength(210);
      await cache.settled();
      expect([builds, errors.length]).toEqual([1, 1]);
    });

    it('a cold process loads the snapshot and takes the changes since; a pruned log means a rebuild', () => {
      const store = seeded(40);
      const dir = tempDir();
      rebuildBm25Snapshot(store, dir);
      addEngram(store, { text: 'Pelican migrations need a checklist.' });
      const cold = createBm25Cache(dir, { overlayFrom: 10 });
      const got = cold.get(store);
      expect(got.source).toBe('snapshot');
      expect(ids(got.index.search('pelican', 10))).toEqual([41]);
      store.write(() => store.pruneSearchChanges(store.searchState().generation));
      addEngram(store, { text: 'Pelican nests are not migrations.' });
      expect(createBm25Cache(dir, { overlayFrom: 10 }).get(store).source).toBe('rebuilt');
    });

    it('rebuilds in the background past the overlay limit and then ranks exactly as a fresh build', async () => {
      const store = seeded(300);
      const dir = tempDir();
      let builds = 0;
      // What the warm server's worker does, on this thread but asynchronously (the worker itself: test/server).
      const builder = async (job: { dbPath: string; indexDir: string | undefined }) => {
        builds++;
        await new Promise((resolve) => setTimeout(resolve, 5));
        expect(job).toEqual({ dbPath: store.path, indexDir: dir });
        const base = buildBm25Base(store);
        saveBm25Snapshot(dir, base);
        return encodeSnapshot(base);
      };
      const cache = createBm25Cache(dir, { overlayFrom: 10, builder });
      expect((await cache.getAsync(store)).source).toBe('rebuilt');
      expect(builds).toBe(1);
      for (let i = 0; i < 210; i++) addEngram(store, { text: `Heron note ${i} about caching and deploys, variant ${i % 7}.` });
      const during = await cache.getAsync(store);
      expect(during.source).toBe('memory');
      expect(during.index.search('heron', 300)).toHaveLength(210);
      await cache.settled();
      expect(builds).toBe(2);
      const after = await cache.getAsync(store);
      expect(after.source).toBe('memory');
      expect(after.index.docs).toBe(510);
      // The new base took over with nothing left in the overlay, and ranks as a fresh build does, ties included.
      expect((after.index as unknown as { overlaySize: number }).overlaySize).toBe(0);
      const fresh = buildBm25Index(store).index;
      for (const query of ['caching deploys', 'heron variant 3', 'lesson topic12', 'migrations queues k8s']) {
        expect(after.index.search(query, 200)).toEqual(fresh.search(query, 200));
      }
      updateEngram(store, 3, { text: 'Lesson three is about herons now.' });
      const next = await cache.getAsync(store);
      expect((next.index as unknown as { overlaySize: number }).overlaySize).toBe(1);
      expect(ids(next.index.search('herons lesson three', 1))).toEqual([3]);
      const rebuilt = await createBm25Cache(dir, { overlayFrom: 10 }).getAsync(store);
      expect(rebuilt.index.search('heron variant 3', 20)).toEqual(after.index.search('heron variant 3', 20));
    });
  });
});
