import { describe, expect, it, vi } from 'vitest';
import type { Embedder } from '../../../src/core/index.js';
import { addEngram, createSearchEngine, deleteEngram, embedPending, TUNING } from '../../../src/services/index.js';
import { cosineDistance, cosineDistances, createVectorIndex, squaredNorm, VECTOR_INDEX_FROM } from '../../../src/services/recall/vector-index.js';
import { tempStore } from '../../_helpers.js';

let seed = 3;
const random = (): number => {
  seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
  return ((seed >>> 0) % 1_000_000) / 1_000_000;
};
const DIM = 40; // not a multiple of 16: the codes are padded
const vectorFor = (): Float32Array => Float32Array.from({ length: DIM }, () => random() * 2 - 1);
/** Random vectors stand in for a model: the index is about geometry, not meaning (a real sqlite-vec table holds them). */
const embedder: Embedder = { kind: 'test', model: 'test:random-40', dim: DIM, embed: async (texts) => texts.map(() => vectorFor()) };

function fill(store: ReturnType<typeof tempStore>, n: number): void {
  const words = ['cache', 'deploy', 'queue', 'index', 'retry', 'schema', 'token', 'docker', 'branch', 'lint'];
  store.write(() => {
    for (let i = 0; i < n; i++) store.engrams.insert({
      kind: 'lesson', title: null, text: `vector lesson ${i} ${words[i % 10]} ${words[(i * 7) % 10]} topic${i % 97}`, content: null, category: i % 3 ? (i % 50 === 1 ? 'rare' : 'general') : 'ops', tags: [], prerequisites: null, source: 'manual',
      source_sessions: [], session_id: null, tool_name: null, occurrence_count: 1, times_matched: 0, last_matched_at: null, pinned: false,
      auto_pinned: false, deprecated: false, deprecated_reason: null, project: null, scope: 'personal', topic_key: null, revision_count: 0,
      duplicate_count: 0, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', last_seen_at: '2026-01-01T00:00:00.000Z', deleted_at: null,
    });
  });
}

/** A store past the in-memory index's threshold, embedded, searched by a plain engine (sqlite-vec) and a warm one
 * (the in-memory index, loaded: it loads in slices after the first search). */
async function plainAndWarmEngines() {
  const store = tempStore();
  fill(store, VECTOR_INDEX_FROM + 100);
  await embedPending(store, embedder, { batchSize: 1_000 });
  const options = { embedder: null, loadedEmbedder: embedder, tuning: { rrfK: TUNING.rrfK, weights: { ...TUNING.weights }, topK: 10 } };
  const plain = createSearchEngine(store, options);
  const warm = createSearchEngine(store, { ...options, vectorIndex: true });
  await warm.search({ query: 'warm up', queryVector: vectorFor() });
  await warm.settled();
  return { plain, warm };
}

describe('in-memory vector index', () => {
  it("computes cosine distances bit for bit as sqlite-vec's vec_distance_cosine does", () => {
    const store = tempStore();
    store.vectors(); // loads sqlite-vec into the connection
    const sqliteVec = store.db.prepare('SELECT vec_distance_cosine(?, ?)').pluck();
    const blob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    let compared = 0;
    for (const dim of [40, 256, 384, 512]) {
      for (let t = 0; t < 500; t++) {
        const x = Float32Array.from({ length: dim }, () => (random() * 2 - 1) * (t % 3 ? 1 : 1e-3));
        const y = t % 5 === 0 ? x.slice() : Float32Array.from({ length: dim }, () => random() * 2 - 1);
        const exact = sqliteVec.get(blob(x), blob(y));
        expect(cosineDistance(x, 0, y, dim)).toBe(exact);
        compared++;
      }
    }
    expect(compared).toBe(2_000);
  });

  it('computes the same bits for many rows at once (four side by side, each magnitude summed once)', () => {
    const store = tempStore();
    store.vectors();
    const sqliteVec = store.db.prepare('SELECT vec_distance_cosine(?, ?)').pluck();
    const blob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    for (const dim of [40, 256, 384]) {
      const n = 23; // not a multiple of four: the last rows go one by one
      const x = Float32Array.from({ length: n * dim }, (_, i) => (random() * 2 - 1) * (i % 7 ? 1 : 1e-3));
      const squares = Float32Array.from({ length: n }, (_, row) => squaredNorm(x, row * dim, dim));
      const y = Float32Array.from({ length: dim }, () => random() * 2 - 1);
      const rows = [5, 0, 22, 9, 9, 13, 1, 2, 17, 21, 4];
      const out = new Float64Array(rows.length);
      cosineDistances(x, squares, rows, y, squaredNorm(y, 0, dim), dim, out);
      rows.forEach((row, i) => {
        const vector = x.slice(row * dim, (row + 1) * dim);
        expect(out[i]).toBe(sqliteVec.get(blob(vector), blob(y)));
        expect(out[i]).toBe(cosineDistance(x, row * dim, y, dim));
      });
    }
  });

  it('gives a warm engine the same answers as sqlite-vec alone (hybrid and vector, with a category filter)', async () => {
    const { plain, warm } = await plainAndWarmEngines();
    for (let q = 0; q < 12; q++) {
      const queryVector = vectorFor();
      for (const mode of ['hybrid', 'vector'] as const) {
        const request = { query: `cache deploy topic${q}`, queryVector, mode, abstain: false, ...(q % 3 === 0 ? { category: 'ops' } : {}) };
        const [a, b] = [await plain.search(request), await warm.search(request)];
        expect(b.results.map((hit) => [hit.id, hit.score, hit.ranks, hit.signals])).toEqual(a.results.map((hit) => [hit.id, hit.score, hit.ranks, hit.signals]));
        expect([a.timings.knn, b.timings.knn]).toEqual(['sqlite-vec', 'memory']);
        expect(a.results.length).toBeGreaterThan(0);
      }
    }
  });

  it('starts the KNN at the k the last search of the space needed (one KNN where gates reject), with the same answers', async () => {
    const { plain, warm } = await plainAndWarmEngines();
    const runs: Array<number | undefined> = [];
    // A third of the engrams are in `ops`: the 50 nearest hold ~17 of them, so that filter needs k = 200.
    for (const category of ['ops', 'ops', 'ops', undefined, undefined, 'ops', 'ops']) {
      const request = { query: 'cache deploy', queryVector: vectorFor(), mode: 'vector' as const, abstain: false, ...(category ? { category } : {}) };
      const [a, b] = [await plain.search(request), await warm.search(request)];
      expect(b.results.map((hit) => [hit.id, hit.score, hit.ranks, hit.signals])).toEqual(a.results.map((hit) => [hit.id, hit.score, hit.ranks, hit.signals]));
      expect(a.timings.knn_runs).toBe(category ? 2 : 1); // sqlite-vec (small spaces, the CLI) always starts at 50
      runs.push(b.timings.knn_runs);
    }
    // The first filtered search widens once; the next start at 200; an unfiltered one needs only 50, so the filtered
    // search after it widens again.
    expect(runs).toEqual([2, 1, 1, 1, 1, 2, 1]);
    // A filter few engrams pass needs a larger k, but the next search starts at 200 at most (4 × pool): one KNN fewer
    // than from 50, not one.
    const rare = { query: 'cache deploy', mode: 'vector' as const, abstain: false, category: 'rare' };
    const first = await warm.search({ ...rare, queryVector: vectorFor() });
    const second = await warm.search({ ...rare, queryVector: vectorFor() });
    const plainRuns = (await plain.search({ ...rare, queryVector: vectorFor() })).timings.knn_runs as number;
    expect(plainRuns).toBeGreaterThanOrEqual(3);
    expect([first.timings.knn_runs, second.timings.knn_runs]).toEqual([plainRuns - 1, plainRuns - 1]);
  });

  it("answers sqlite-vec's exact KNN (ids, distances, order) and follows writes and removals", async () => {
    const store = tempStore();
    store.write(() => {
      for (let i = 0; i < 600; i++) store.engrams.insert({
        kind: 'lesson', title: null, text: `vector lesson ${i}`, content: null, category: 'general', tags: [], prerequisites: null, source: 'manual',
        source_sessions: [], session_id: null, tool_name: null, occurrence_count: 1, times_matched: 0, last_matched_at: null, pinned: false,
        auto_pinned: false, deprecated: false, deprecated_reason: null, project: null, scope: 'personal', topic_key: null, revision_count: 0,
        duplicate_count: 0, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', last_seen_at: '2026-01-01T00:00:00.000Z', deleted_at: null,
      });
    });
    await embedPending(store, embedder, { batchSize: 100 });
    const space = store.vectors().findSpace(embedder.model, DIM)!;
    const index = createVectorIndex(store, space);
    expect(index.ready).toBe(false);
    expect(index.loadSlice(250)).toBe(false);
    expect(index.loadSlice(250)).toBe(false);
    expect(index.loadSlice(250)).toBe(true);
    expect(index.size).toBe(600);
    const whole = createVectorIndex(store, space);
    expect(whole.loadSlice(Number.POSITIVE_INFINITY)).toBe(true);
    expect(whole.size).toBe(600);
    for (let q = 0; q < 25; q++) {
      const query = vectorFor();
      for (const k of [1, 10, 50]) expect(index.knn(query, k)).toEqual(store.vectors().knn(space, query, k));
    }
    // New vectors are read at the next sync; a removed one is dropped.
    const added = addEngram(store, { text: 'a lesson embedded later' }).engram.id;
    await embedPending(store, embedder);
    const own = store.vectors().vectorOf(space, added)!;
    expect(index.knn(own, 1)[0]?.id).not.toBe(added);
    index.sync();
    expect(index.knn(own, 1)).toEqual([{ id: added, distance: expect.closeTo(0, 6) }]);
    deleteEngram(store, added);
    store.write(() => store.vectors().prune(space));
    index.sync({ reconcile: true });
    expect(index.vectorOf(added)).toBeNull();
    expect(index.knn(own, 5)).toEqual(store.vectors().knn(space, own, 5));
    // Anchor distances: the same numbers sqlite-vec computes, for the engrams it holds.
    const ids = [3, 17, 250, 599, 100_000];
    const { found, missing } = index.distancesTo(own, ids);
    expect(found).toEqual(store.vectors().distancesTo(space, own, ids));
    expect(missing).toEqual([100_000]);
    expect(index.vectorOf(17)).toEqual(store.vectors().vectorOf(space, 17));
  });
  it('loads vector writes that commit out of timestamp order: one millisecond apart, or from a clock that stepped back', async () => {
    const store = tempStore();
    fill(store, 300);
    await embedPending(store, embedder, { batchSize: 100 });
    const space = store.vectors().findSpace(embedder.model, DIM)!;
    const index = createVectorIndex(store, space);
    expect(index.loadSlice(Number.POSITIVE_INFINITY)).toBe(true);
    const [a, b, c] = ['first lesson', 'second lesson', 'third lesson'].map((text) => addEngram(store, { text }).engram);
    const vectorOf = new Map([a, b, c].map((engram) => [engram!.id, vectorFor()]));
    const write = (id: number): void => {
      const engram = store.engrams.get(id)!;
      store.write(() => store.vectors().put(space, id, engram.content_hash, vectorOf.get(id)!));
    };
    // Another process commits engram a's vector after the index read b's, stamped in the same millisecond (stamps
    // of one millisecond order by engram id, not by commit): simulated by giving it b's stamp.
    write(b!.id);
    index.sync();
    expect(index.knn(vectorOf.get(b!.id)!, 1)[0]?.id).toBe(b!.id);
    write(a!.id);
    const stampOf = store.db.prepare('SELECT embedded_at FROM engram_vectors WHERE engram_id = ?').pluck();
    store.db.prepare('UPDATE engram_vectors SET embedded_at = ? WHERE engram_id = ?').run(stampOf.get(b!.id), a!.id);
    index.sync();
    expect(index.knn(vectorOf.get(a!.id)!, 1)).toEqual(store.vectors().knn(space, vectorOf.get(a!.id)!, 1));
    expect(index.vectorOf(a!.id)).toEqual(store.vectors().vectorOf(space, a!.id));
    // A write stamped long before the bookmark (the clock stepped back) is loaded by the next reconcile.
    write(c!.id);
    store.db.prepare('UPDATE engram_vectors SET embedded_at = ? WHERE engram_id = ?').run('2020-01-01T00:00:00.000Z', c!.id);
    index.sync({ reconcile: true });
    expect(index.vectorOf(c!.id)).toEqual(store.vectors().vectorOf(space, c!.id));
    expect(index.size).toBe(303);
    for (const id of [a!.id, b!.id, c!.id]) expect(index.knn(vectorOf.get(id)!, 5)).toEqual(store.vectors().knn(space, vectorOf.get(id)!, 5));
  });

  it('reads each vector write again only while it may not have settled, not at every search', async () => {
    // Only Date is faked (the stamps and the index's clock): a bulk embedding leaves every write within the 2 s
    // before the bookmark, which each sync used to read again — 10k rows a search after a model pull.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const t0 = Date.parse('2026-06-01T00:00:00.000Z');
      vi.setSystemTime(t0);
      const store = tempStore();
      fill(store, 300);
      await embedPending(store, embedder, { batchSize: 100 });
      const space = store.vectors().findSpace(embedder.model, DIM)!;
      const reads = vi.spyOn(store.vectors(), 'writtenSince');
      const rowsRead = (): number => reads.mock.results.reduce((sum, result) => sum + (result.value as unknown[]).length, 0);
      const index = createVectorIndex(store, space);
      expect(index.loadSlice(Number.POSITIVE_INFINITY)).toBe(true); // its sync reads the last 2 s again: all 300
      vi.setSystemTime(t0 + 5_000);
      index.sync(); // the previous sync was within 2 s of those writes: read again
      const settled = rowsRead();
      vi.setSystemTime(t0 + 6_000);
      index.sync();
      index.sync();
      expect(rowsRead()).toBe(settled); // settled: nothing read again
      // A new write is still read, once settled not again, and answered.
      const engram = addEngram(store, { text: 'a lesson written after the bulk embedding' }).engram;
      const vector = vectorFor();
      store.write(() => store.vectors().put(space, engram.id, engram.content_hash, vector));
      index.sync();
      expect(index.knn(vector, 1)[0]?.id).toBe(engram.id);
      vi.setSystemTime(t0 + 10_000);
      index.sync();
      const after = rowsRead();
      index.sync();
      expect(rowsRead()).toBe(after);
      expect(index.size).toBe(301);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stamps each vector with the time it was written, not when its batch was embedded', async () => {
    const store = tempStore();
    fill(store, 3);
    await embedPending(store, embedder, { now: () => new Date('2020-01-01T00:00:00.000Z') });
    const stamps = store.db.prepare('SELECT embedded_at FROM engram_vectors').pluck().all() as string[];
    expect(stamps).toHaveLength(3);
    for (const stamp of stamps) expect(Date.now() - Date.parse(stamp)).toBeLessThan(60_000);
  });
});
