// The HTTP benchmark itself; bench/http.mjs bundles and runs it. Prints JSON lines, asserts nothing.
//
// 1. Search: GET /search on the HTTP app the warm server mounts (hono on @hono/node-server, 127.0.0.1, an ephemeral
//    port, the Host/Origin guards and body caps on), next to the same `obs.search` operation run in this process on the
//    same store and engine — the difference is what the HTTP surface costs per call (socket, parsing, guards, JSON).
// 2. Load: N clients in parallel for S seconds, each looping POST /observations (a unique one) and GET /search; every
//    non-2xx answer or network error is counted, and the observations the store holds afterwards are compared with
//    the 201s received (a lost write would show as fewer rows). Three runs: searches only, writes only, and both
//    alternately. The engine is set up as the warm server sets it up: writes reach the BM25 index through the change log
//    and its overlay, and rebuilds of the base run in a worker thread (src/server/bm25-worker.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadSettings, openStore, readEnv } from '../src/core/index.js';
import { createHttpApp, HTTP_ACTOR, HTTP_CALLER, listenHttp, type Binding } from '../src/http/index.js';
import * as services from '../src/services/index.js';
import { bm25WorkerBuilder, createSearchEngine, percentile, runOperation, searchTuning, workEnvironment } from '../src/services/index.js';
import { seededRandom } from './_random.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 ? (args[index + 1] as string) : fallback;
};
const SIZE = Number(option('--size', '10000'));
const QUERIES = Number(option('--queries', '300'));
const CLIENTS = Number(option('--clients', '100'));
const SECONDS = Number(option('--seconds', '10'));
const emit = (record: Record<string, unknown>): void => console.log(JSON.stringify(record));
const round = (ms: number): number => Math.round(ms * 100) / 100;

const random = seededRandom(11);
const VOCABULARY = [
  'build', 'test', 'deploy', 'cache', 'docker', 'index', 'migration', 'schema', 'query', 'timeout', 'retry', 'lint',
  'commit', 'branch', 'merge', 'release', 'package', 'config', 'token', 'session', 'request', 'handler', 'route',
  ...Array.from({ length: 3000 }, (_, i) => `term${i.toString(36)}`),
];
const word = (): string => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(VOCABULARY.length * random() ** 3))] as string;
const sentence = (min: number, max: number): string => Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, word).join(' ');

const work = mkdtempSync(join(tmpdir(), 'engram-bench-http-'));
const env = readEnv({ HOME: work, ENGRAM_HOME: work, ENGRAM_EMBEDDER: 'none' }, { cwd: work });
const settings = loadSettings(env);
const store = openStore({ path: settings.paths.db });
const engine = createSearchEngine(store, {
  embedder: null,
  indexDir: settings.paths.index,
  tuning: searchTuning(settings.config),
  bm25Builder: bm25WorkerBuilder(option('--bm25-worker', '')),
  onWarning: (message, error) => console.error(message, error),
});
const loadAverage = (): number[] => loadavg().map((n) => Math.round(n * 100) / 100);
/** How each search got its BM25 index (memory / snapshot / rebuilt), per run. */
const sources: Record<string, number> = {};
const context = {
  store,
  settings,
  caller: { ...HTTP_CALLER, cwd: work },
  actor: HTTP_ACTOR,
  search: async (request: Parameters<typeof engine.search>[0]) => {
    const response = await engine.search(request);
    const source = response.timings.bm25_index ?? 'none';
    sources[source] = (sources[source] ?? 0) + 1;
    return response;
  },
  searchMode: 'bm25' as const,
  model: null,
  environment: (cwd: string, agent: 'claude' | 'codex' | 'unknown') => workEnvironment(settings, cwd, agent),
  now: () => new Date(),
};
const binding: Binding = { host: '127.0.0.1', port: 0, remote: false };
const app = createHttpApp({
  run: (name, params) => runOperation(name, params, context),
  log: createLogger({ dir: join(work, 'logs'), level: 'warn', name: 'bench' }),
  binding,
});
const { state, listener } = await listenHttp(app, binding);
if (state.state !== 'listening' || !listener) throw new Error(`HTTP API did not start: ${JSON.stringify(state)}`);
const url = state.url;

async function search(): Promise<void> {
  // Setup straight into the store in one transaction (an import would also look for conflicts row by row: not what
  // this measures).
  let t = performance.now();
  const at = new Date().toISOString();
  store.write(() => {
    for (let i = 0; i < SIZE; i++) {
      const text = `${sentence(10, 30)} (${i})`;
      store.engrams.insert({
        kind: 'discovery', title: text.slice(0, 60), text, content: null, category: 'bench', tags: [], prerequisites: null, source: 'manual',
        source_sessions: [], session_id: null, tool_name: null, occurrence_count: 1, times_matched: 0, last_matched_at: null, pinned: false,
        auto_pinned: false, deprecated: false, deprecated_reason: null, project: 'shop', scope: 'project', topic_key: null, revision_count: 0,
        duplicate_count: 0, created_at: at, updated_at: at, last_seen_at: at, deleted_at: null,
      });
    }
  });
  const importMs = performance.now() - t;
  // The warm server builds its text index in a worker thread at start (saves compare new texts with it); so does this
  // process. Trees without it skip this.
  const warm = (services as unknown as { warmTextIndex?: (store: unknown, builder?: unknown) => Promise<unknown>; textIndexWorkerBuilder?: (script: string) => unknown });
  let textIndexMs: number | null = null;
  if (warm.warmTextIndex && warm.textIndexWorkerBuilder && option('--text-index-worker', '')) {
    t = performance.now();
    await warm.warmTextIndex(store, warm.textIndexWorkerBuilder(option('--text-index-worker', '')));
    textIndexMs = Math.round(performance.now() - t);
  }
  const queries = Array.from({ length: QUERIES }, () => sentence(2, 4));
  // The same operation behind a bare node:http handler (no routing, guards, validation or Go shape): what any HTTP
  // server in this process costs. Our surface's own cost is the app's time over this one's.
  const bare = createServer((request, response) => {
    const q = new URL(request.url ?? '/', 'http://bench').searchParams.get('q') ?? '';
    void runOperation('obs.search', { query: q, limit: 10 }, context).then((found) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(found));
    });
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
  // A keep-alive node:http client: the client's own cost stays small and the same for both servers. (fetch, undici,
  // costs more per request in this process than the server does: measured too, for comparison with earlier notes.)
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = (path: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const outgoing = httpGet(path, { agent }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      outgoing.on('error', reject);
    });
  const inProcess: number[] = [];
  const overHttp: number[] = [];
  const overBare: number[] = [];
  const overFetch: number[] = [];
  for (const query of queries.slice(0, 20)) {
    await runOperation('obs.search', { query, limit: 10 }, context);
    await get(`${url}/search?q=${encodeURIComponent(query)}`);
    await get(`${bareUrl}/search?q=${encodeURIComponent(query)}`);
    await (await fetch(`${url}/search?q=${encodeURIComponent(query)}`)).json();
  }
  // Interleaved, so a slow moment of the machine (other helpers share it) falls on every variant alike, and in a
  // rotating order: a query's first search warms caches the later ones of the same query find.
  const variants: Array<[number[], (query: string) => Promise<void>]> = [
    [inProcess, async (query) => void (await runOperation('obs.search', { query, limit: 10 }, context))],
    [
      overHttp,
      async (query) => {
        const answer = await get(`${url}/search?q=${encodeURIComponent(query)}`);
        JSON.parse(answer.body);
        if (answer.status !== 200) throw new Error(`GET /search answered ${answer.status}`);
      },
    ],
    [overBare, async (query) => void JSON.parse((await get(`${bareUrl}/search?q=${encodeURIComponent(query)}`)).body)],
    [overFetch, async (query) => void (await (await fetch(`${url}/search?q=${encodeURIComponent(query)}`)).json())],
  ];
  for (const [i, query] of queries.entries()) {
    for (let k = 0; k < variants.length; k++) {
      const [times, run] = variants[(i + k) % variants.length] as (typeof variants)[number];
      t = performance.now();
      await run(query);
      times.push(performance.now() - t);
    }
  }
  agent.destroy();
  await new Promise((resolve) => bare.close(resolve));
  const paired = (a: number[], b: number[]): number => round(percentile(a.map((value, i) => value - (b[i] as number)), 50));
  const httpP50 = percentile(overHttp, 50);
  const localP50 = percentile(inProcess, 50);
  emit({
    bench: 'http-search',
    engrams: SIZE,
    queries: QUERIES,
    mode: 'bm25',
    client: 'node:http keep-alive',
    over_http_p50_ms: round(httpP50),
    over_http_p95_ms: round(percentile(overHttp, 95)),
    in_process_p50_ms: round(localP50),
    in_process_p95_ms: round(percentile(inProcess, 95)),
    http_overhead_p50_ms: round(httpP50 - localP50),
    http_overhead_paired_p50_ms: paired(overHttp, inProcess),
    target_overhead_ms: 2,
    bare_node_http_p50_ms: round(percentile(overBare, 50)),
    bare_overhead_paired_p50_ms: paired(overBare, inProcess),
    surface_over_bare_paired_p50_ms: paired(overHttp, overBare),
    over_fetch_p50_ms: round(percentile(overFetch, 50)),
    fetch_overhead_paired_p50_ms: paired(overFetch, inProcess),
    setup: { import_ms: Math.round(importMs), text_index_ms: textIndexMs },
    load: loadAverage(),
  });
}

/** `mix`: which requests the clients send: searches only, writes only, or both alternately. */
async function load(mix: 'read' | 'write' | 'mixed'): Promise<void> {
  const before = store.db.prepare("SELECT COUNT(*) AS n FROM engrams WHERE title LIKE 'load %'").get() as { n: number };
  const until = performance.now() + SECONDS * 1000;
  const counts = { requests: 0, saved: 0, searches: 0, errors: 0 };
  let firstError: string | null = null;
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  const client = async (n: number): Promise<void> => {
    for (let i = 0; performance.now() < until; i++) {
      const t = performance.now();
      try {
        if (mix === 'write' || (mix === 'mixed' && i % 2 === 0)) {
          const response = await fetch(`${url}/observations`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ session_id: `load-${n}`, project: 'shop', title: `load ${n}-${i}`, content: `client ${n} write ${i}: ${sentence(5, 12)}` }),
          });
          await response.text();
          if (response.status === 201) counts.saved++;
          else statuses[response.status] = (statuses[response.status] ?? 0) + 1;
        } else {
          const response = await fetch(`${url}/search?q=${encodeURIComponent(sentence(1, 3))}&limit=5`);
          await response.text();
          if (response.status === 200) counts.searches++;
          else statuses[response.status] = (statuses[response.status] ?? 0) + 1;
        }
      } catch (error) {
        counts.errors++;
        firstError ??= String((error as { cause?: unknown }).cause ?? error);
      }
      counts.requests++;
      latencies.push(performance.now() - t);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
  const seconds = (performance.now() - started) / 1000;
  const after = store.db.prepare("SELECT COUNT(*) AS n FROM engrams WHERE title LIKE 'load %'").get() as { n: number };
  emit({
    bench: 'http-load',
    mix,
    clients: CLIENTS,
    seconds: round(seconds),
    requests: counts.requests,
    requests_per_s: Math.round(counts.requests / seconds),
    writes_answered_201: counts.saved,
    writes_stored: after.n - before.n,
    lost_writes: counts.saved - (after.n - before.n),
    searches_answered_200: counts.searches,
    non_2xx: statuses,
    network_errors: counts.errors,
    first_network_error: firstError,
    latency_p50_ms: round(percentile(latencies, 50)),
    latency_p95_ms: round(percentile(latencies, 95)),
    latency_max_ms: round(Math.max(...latencies)),
    bm25_index_sources: sources,
    load: loadAverage(),
  });
  for (const key of Object.keys(sources)) delete sources[key];
}

try {
  await search();
  await load('read');
  await load('write');
  await load('mixed');
} finally {
  await engine.settled();
  await listener.close();
  store.close();
  rmSync(work, { recursive: true, force: true });
}
