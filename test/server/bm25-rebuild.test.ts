/**
 * The warm server's BM25 index under writes (issue 14): engrams written by another process are found by the next
 * search through the change log, without a rebuild, and once enough have changed the server rebuilds the base in its
 * worker thread (dist/bm25-worker.mjs) — it persists a newer snapshot and prunes the log — while it keeps answering.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { serverPaths } from '../../src/server/address.js';
import { callServer } from '../../src/server/call.js';
import { snapshotPath } from '../../src/services/index.js';
import { readSnapshotHeader } from '../../src/services/recall/bm25-packed.js';
import { ROOT, stopServer, tempDir, until } from '../_helpers.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function insert(store: Store, from: number, count: number, words: (i: number) => string): void {
  const at = new Date().toISOString();
  store.write(() => {
    for (let i = from; i < from + count; i++) {
      store.engrams.insert({
        kind: 'lesson', title: null, text: `Lesson ${i}: ${words(i)}.`, content: null, category: 'general', tags: [], prerequisites: null,
        source: 'manual', source_sessions: [], session_id: null, tool_name: null, occurrence_count: 1, times_matched: 0, last_matched_at: null,
        pinned: false, auto_pinned: false, deprecated: false, deprecated_reason: null, project: null, scope: 'personal', topic_key: null,
        revision_count: 0, duplicate_count: 0, created_at: at, updated_at: at, last_seen_at: at, deleted_at: null,
      });
    }
  });
}

describe.skipIf(process.platform !== 'linux')('the warm server keeps its BM25 index current under writes', () => {
  it('finds writes through the change log and rebuilds the base in its worker thread', async () => {
    const home = tempDir();
    const db = join(home, 'engram.db');
    const seed = openStore({ path: db });
    insert(seed, 0, 1_200, (i) => `caching rule number ${i} for the build`);
    const { store_uid } = seed.searchState();
    seed.close();
    const server = spawn(process.execPath, [join(ROOT, 'dist', 'server.mjs')], {
      env: { ...process.env, HOME: home, ENGRAM_HOME: home, ENGRAM_EMBEDDER: 'none', ENGRAM_PORT: '0' },
      stdio: 'ignore',
      detached: true,
    });
    server.unref();
    const { socket } = serverPaths(home);
    const caller = { cwd: home, agent: 'codex', session_id: 'bm25-test', project: null };
    const search = async (query: string): Promise<number[]> => {
      const reply = await callServer<any>(socket, { v: 1, op: 'call', version: VERSION, method: 'obs.search', params: { query, limit: 20 }, caller }, 20_000);
      expect(reply).toMatchObject({ kind: 'answer', answer: { ok: true } });
      return ((reply as { answer: { result: { results: Array<{ id: number }> } } }).answer.result.results).map((hit) => hit.id);
    };
    const snapshotAt = (): number | undefined => {
      const file = snapshotPath(join(home, 'index'), store_uid);
      return existsSync(file) ? readSnapshotHeader(readFileSync(file))?.generation : undefined;
    };
    try {
      await until(() => existsSync(socket), 'the server to listen');
      await until(() => snapshotAt() !== undefined, 'the first snapshot', 30_000);
      const first = snapshotAt() as number;
      expect((await search('caching rule number 17'))[0]).toBe(18);

      // Another process writes a few engrams: the next search finds them, and the snapshot is not rebuilt for it.
      const writer = openStore({ path: db });
      insert(writer, 1_200, 5, (i) => `flamingo feeding note ${i}`);
      expect((await search('flamingo feeding')).sort((a, b) => a - b)).toEqual([1201, 1202, 1203, 1204, 1205]);
      expect(snapshotAt()).toBe(first);

      // Past the overlay's limit (200 at this size), the worker rebuilds and persists the base; searches go on.
      insert(writer, 1_205, 250, (i) => `heron nesting note ${i}`);
      expect(await search('heron nesting')).toHaveLength(20);
      await until(() => (snapshotAt() ?? 0) >= writer.searchState().generation, 'the worker to persist a newer base', 60_000);
      // The change log is pruned right after the snapshot is written (a moment later on a loaded machine).
      const logged = writer.db.prepare('SELECT count(*) FROM search_changes').pluck();
      await until(() => logged.get() === 0, 'the change log to be pruned', 30_000);
      expect(await search('flamingo feeding')).toHaveLength(5);
      writer.close();
    } finally {
      await stopServer(home);
    }
  });
});
