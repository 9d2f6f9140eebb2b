// The body of bench/ui.mjs (bundled by it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadSettings, openStore, readEnv, type Store } from '../src/core/index.js';
import { createHttpApp, listenHttp, type Binding } from '../src/http/index.js';
import { createSearchEngine, governancePolicy, importEngrams, listEngrams, searchTuning } from '../src/services/index.js';
import { UI_SECRET_HEADER, viewerApp } from '../src/ui/index.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const index = args.indexOf(name);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const SIZE = option('--size', 100_000);
const REPS = option('--reps', 40);
const root = args[args.indexOf('--root') + 1] as string;

let seed = 17;
const random = (): number => {
  seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
  return ((seed >>> 0) % 1_000_000) / 1_000_000;
};
const WORDS = 'build deploy cache test lint migrate schema index query route handler worker queue token config docker node python rust react api auth log metric trace'.split(' ');
const CATEGORIES = ['development', 'development/node', 'development/web', 'ops', 'ci', 'testing', 'security'];
const PROJECTS = ['shop', 'billing', 'infra', 'web', null];
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const sentence = (i: number): string => `${Array.from({ length: 8 + Math.floor(random() * 16) }, () => pick(WORDS)).join(' ')} (item ${i} w${Math.floor(random() * 1e9).toString(36)})`;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number) * 100) / 100;
}

async function timed(run: () => Promise<unknown> | unknown): Promise<{ first_ms: number; p50_ms: number; p95_ms: number }> {
  let started = performance.now();
  await run();
  const first = performance.now() - started;
  const times: number[] = [];
  for (let i = 0; i < REPS; i++) {
    started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return { first_ms: Math.round(first * 100) / 100, p50_ms: percentile(times, 50), p95_ms: percentile(times, 95) };
}

const dir = mkdtempSync(join(tmpdir(), 'engram-bench-ui-'));
const store: Store = openStore({ path: join(dir, 'engram.db') });
try {
  let started = performance.now();
  // 2,000 engrams through the import service (dedup, tiers, audit), then copies of them by SQL with fresh ids, uids
  // and hashes up to SIZE: importing 100k one by one would take this machine many minutes and measure nothing here.
  const base = Math.min(SIZE, 2_000);
  const lines = Array.from({ length: base }, (_, i) => {
    const project = pick(PROJECTS);
    return JSON.stringify({ text: sentence(i), category: pick(CATEGORIES), tags: [pick(WORDS), pick(WORDS)], ...(project ? { project } : {}) });
  });
  importEngrams(store, lines, { batchSize: 1_000 });
  const columns = (store.db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('engrams') as string[]).filter((name) => !['id', 'uid', 'content_hash', 'text'].includes(name));
  const copy = store.db.prepare(
    `INSERT INTO engrams (uid, content_hash, text, ${columns.join(', ')})
       SELECT lower(hex(randomblob(16))), lower(hex(randomblob(32))), text || ' #' || (SELECT count(*) FROM engrams), ${columns.join(', ')}
         FROM engrams ORDER BY id LIMIT ?`,
  );
  store.db.transaction(() => {
    for (let have = store.engrams.counts().total; have < SIZE; have = store.engrams.counts().total) copy.run(Math.min(have, SIZE - have));
  })();
  // A realistic spread of review states and pins (the list's default shows active and pending).
  store.db.exec(`UPDATE engrams SET status = 'pending' WHERE id % 50 = 0; UPDATE engrams SET pinned = 1 WHERE id % 97 = 0;`);
  const seedMs = Math.round(performance.now() - started);

  const env = readEnv({ HOME: dir, ENGRAM_HOME: dir, ENGRAM_EMBEDDER: 'none' });
  const settings = loadSettings(env);
  const engine = createSearchEngine(store, { embedder: null, indexDir: join(dir, 'index'), tuning: searchTuning(settings.config) });
  const secret = 'bench-secret-0123456789abcdefghijkl';
  const binding: Binding = { host: '127.0.0.1', port: 0, remote: false };
  const app = createHttpApp({
    run: () => Promise.reject(new Error('not benchmarked')),
    log: createLogger({ dir: join(dir, 'logs'), level: 'warn', name: 'server' }),
    binding,
    groups: [
      {
        path: '/ui',
        app: viewerApp({ store, settings: () => settings, search: (r) => engine.search(r), knows: (s) => s === secret, assets: join(root, 'dist', 'ui'), installRoot: root, now: () => new Date(), touch: () => {} }),
      },
    ],
  });
  const { state, listener } = await listenHttp(app, binding);
  if (state.state !== 'listening' || !listener) throw new Error(JSON.stringify(state));
  const get = async (path: string, init: RequestInit = {}): Promise<unknown> => {
    const response = await fetch(`${state.url}/ui/api${path}`, { ...init, headers: { [UI_SECRET_HEADER]: secret, ...(init.body ? { 'content-type': 'application/json' } : {}) } });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };

  const results: Record<string, unknown> = {};
  results.ping_roundtrip = await timed(() => get('/ping'));
  results.first_page_in_process = await timed(() => listEngrams(store, { statuses: ['active', 'pending'], limit: 50, offset: 0 }));
  const firstPage = await timed(() => get('/engrams?status=active,pending&limit=50&offset=0'));
  results.first_page_api = firstPage;
  results.filtered_page_api = await timed(() => get('/engrams?status=active&category=development&tag=cache&project=shop&limit=50'));
  results.deep_page_api = await timed(() => get(`/engrams?status=active,pending&limit=50&offset=${Math.max(0, SIZE - 2_000)}`));
  results.stale_page_api = await timed(() => get('/engrams?status=active&stale=true&limit=50'));
  results.facets_api = await timed(() => get('/facets'));
  results.detail_api = await timed(() => get(`/engrams/${Math.floor(SIZE / 2)}`));
  // The BM25 index is built in this same process (the warm server has it at start); a connection kept alive across
  // that synchronous build may be closed under the next request, so one ping absorbs that before measuring.
  await engine.search({ query: 'warm the index' });
  await get('/ping').catch(() => get('/ping'));
  results.search_explain_api = await timed(() => get('/search', { method: 'POST', body: JSON.stringify({ query: 'docker cache migrate schema' }) }));
  const inProcess = results.first_page_in_process as { p50_ms: number };
  const ping = results.ping_roundtrip as { p50_ms: number };
  process.stdout.write(
    `${JSON.stringify(
      {
        bench: 'ui',
        engrams: store.engrams.counts().total,
        seed_ms: seedMs,
        reps: REPS,
        results,
        first_page_target_ms: 300,
        first_page_within_target: firstPage.first_ms <= 300 && firstPage.p95_ms <= 300,
        first_page_vs_in_process: Math.round((firstPage.p50_ms / inProcess.p50_ms) * 100) / 100,
        first_page_vs_ping: Math.round((firstPage.p50_ms / ping.p50_ms) * 100) / 100,
        policy_decay_default: governancePolicy(settings.config).decay.default ?? null,
      },
      null,
      2,
    )}\n`,
  );
  await listener.close();
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
