// The search speed benchmark itself; bench/search.mjs bundles and runs it. Prints JSON lines, asserts nothing.
import { rssOf, startBenchServer } from './_server.js';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import bm25 from 'wink-bm25-text-search';
import { searchTerms } from '../src/services/recall/index.js';
import { createVectorIndex } from '../src/services/recall/vector-index.js';
import {
  loadEmbedder,
  openStore,
  useLiteInstalled,
  type Embedder,
  type EmbedderSpec,
  type Store,
} from '../src/core/index.js';
import {
  buildBm25Index,
  buildBm25Snapshot,
  createSearchEngine,
  embedPending,
  importEngrams,
  loadBm25Snapshot,
  percentile,
  TUNING,
  type SearchMode,
} from '../src/services/index.js';
import { seededRandom } from './_random.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** Heap and array buffers held, after a full collection. */
const held = (): number => {
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
};
const mb = (bytes: number): number => Math.round(bytes / 1e5) / 10;
const load = (): number[] => loadavg().map((n) => Math.round(n * 100) / 100);

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 ? (args[index + 1] as string) : fallback;
};
const SIZES = option('--sizes', '10000,100000').split(',').filter(Boolean).map(Number);
const QUERIES = Number(option('--queries', '200'));
const MODEL_DIR = option('--model-dir', process.env.ENGRAM_MODEL_DIR ?? join(option('--root', process.cwd()), '..', 'shared', 'models'));
const DIM = 256;

// Deterministic pseudo-random numbers, so every run searches the same corpus.
const random = seededRandom(42);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

const STEMS = [
  'build', 'test', 'deploy', 'cache', 'docker', 'index', 'migration', 'schema', 'query', 'timeout', 'retry', 'lint',
  'format', 'commit', 'branch', 'merge', 'rebase', 'review', 'release', 'version', 'package', 'lockfile', 'install',
  'bundle', 'config', 'secret', 'token', 'auth', 'session', 'cookie', 'header', 'request', 'response', 'handler',
  'route', 'server', 'client', 'worker', 'queue', 'job', 'cron', 'log', 'metric', 'trace', 'alert', 'disk', 'memory',
  'thread', 'process', 'signal', 'socket', 'port', 'proxy', 'tls', 'cert', 'dns', 'pod', 'node', 'cluster', 'helm',
  'chart', 'image', 'layer', 'volume', 'mount', 'env', 'flag', 'feature', 'toggle', 'rollout', 'canary', 'fixture',
  'mock', 'snapshot', 'flaky', 'parallel', 'shard', 'suite', 'coverage', 'type', 'interface', 'generic', 'module',
  'import', 'export', 'path', 'alias', 'compile', 'transpile', 'sourcemap', 'webpack', 'vite', 'esbuild', 'react',
  'hook', 'state', 'effect', 'render', 'prop', 'component', 'style', 'theme', 'font', 'icon', 'asset', 'upload',
];
// A long tail of rarer words, as in real text (Zipf-like: low indexes are drawn far more often).
const VOCABULARY = [...STEMS, ...Array.from({ length: 4000 }, (_, i) => `term${i.toString(36)}`)];
const word = (): string => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(VOCABULARY.length * random() ** 3))] as string;
const sentence = (min: number, max: number): string =>
  Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, word).join(' ');
const CATEGORIES = ['development/frontend', 'development/backend', 'testing', 'ops/deploy', 'database', 'tooling/git', 'preferences'];

function unitVector(dim: number): Float32Array {
  const vector = new Float32Array(dim);
  for (let i = 0; i < dim; i++) vector[i] = random() * 2 - 1;
  const norm = Math.hypot(...vector);
  for (let i = 0; i < dim; i++) vector[i] = (vector[i] as number) / norm;
  return vector;
}

/** Stands in for a model with the static model's dimension: the KNN cost depends on dimension, not on meaning. */
const randomEmbedder: Embedder = {
  kind: 'transformers',
  model: 'bench:random-256',
  dim: DIM,
  embed: async (texts) => texts.map(() => unitVector(DIM)),
};

const emit = (record: Record<string, unknown>): void => console.log(JSON.stringify(record));

function syntheticLines(count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({ text: `${sentence(10, 30)} (${i})`, category: pick(CATEGORIES), tags: [word(), word()].filter((t) => !t.startsWith('term')) }),
  );
}

/**
 * The BM25 index as it was before issue 19 (the baseline of every before/after pair, measured in the same run):
 * wink-bm25-text-search with each document's field values retained for filtering, its own search, and its
 * exportJSON as the snapshot (a header line, then wink's JSON), loaded with JSON.parse + importJSON.
 */
const RETAINED = ['f_project', 'f_category', 'f_tags', 'f_status', 'f_learned_by'];
function winkEngine() {
  const engine = bm25();
  engine.defineConfig({ fldWeights: { ...TUNING.bm25Fields }, bm25Params: { ...TUNING.bm25Params }, ovFldNames: RETAINED });
  engine.definePrepTasks([searchTerms]);
  return engine;
}
function winkBuild(store: Store, file: string): ReturnType<typeof bm25> {
  const engine = winkEngine();
  for (const e of store.engrams.iterate()) {
    engine.addDoc(
      { title: e.title ?? '', text: e.text, category: e.category.replace(/[/_.-]/g, ' '), tags: e.tags.join(' '), f_project: e.project ?? '', f_category: e.category, f_tags: e.tags, f_status: e.status, f_learned_by: e.learned_by },
      String(e.id),
    );
  }
  engine.consolidate();
  writeFileSync(file, `${JSON.stringify({ format: 2 })}\n${engine.exportJSON()}`);
  return engine;
}
function winkLoad(file: string): ReturnType<typeof bm25> {
  const text = readFileSync(file, 'utf8');
  const newline = text.indexOf('\n');
  JSON.parse(text.slice(0, newline));
  const engine = bm25();
  engine.importJSON(text.slice(newline + 1));
  engine.definePrepTasks([searchTerms]);
  return engine;
}
const activeOnly = (values: Record<string, unknown>): boolean => values.f_status === 'active';

/** Starts the V8 profiler in this process; the returned function stops it and answers the profile. */
async function startProfile(): Promise<() => Promise<object>> {
  const { Session } = await import('node:inspector');
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<{ profile?: object }>((resolve, reject) => session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result as { profile?: object }))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  return async () => {
    const { profile } = await post('Profiler.stop');
    session.disconnect();
    return profile as object;
  };
}

/** Synthetic engrams straight into the table in one transaction (an import would also check conflicts line by line). */
function fill(store: Store, size: number): void {
  const at = new Date().toISOString();
  store.write(() => {
    for (const line of syntheticLines(size)) {
      const { text, category, tags } = JSON.parse(line) as { text: string; category: string; tags: string[] };
      store.engrams.insert({
        kind: 'lesson', title: null, text, content: null, category, tags, prerequisites: null, source: 'manual', source_sessions: [],
        session_id: null, tool_name: null, occurrence_count: 1, times_matched: 0, last_matched_at: null, pinned: false, auto_pinned: false,
        deprecated: false, deprecated_reason: null, project: null, scope: 'personal', topic_key: null, revision_count: 0, duplicate_count: 0,
        created_at: at, updated_at: at, last_seen_at: at, deleted_at: null,
      });
    }
  });
}

/** The warm server's resident memory on this store: dist/server.mjs on a home holding it, after one search over HTTP. */
async function serverRss(home: string): Promise<Record<string, unknown>> {
  const server = join(option('--root', process.cwd()), 'dist', 'server.mjs');
  if (!existsSync(server)) return { skipped: 'dist/server.mjs missing (npm run build)' };
  const started = performance.now();
  const running = await startBenchServer(server, home);
  try {
    const url = running.url;
    const t = performance.now();
    const response = await fetch(`${url}/search?q=${encodeURIComponent('cache deploy')}&limit=5`);
    await response.text();
    const firstSearchMs = performance.now() - t;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return { ...rssOf(running.child.pid ?? 0), first_search_ms: Math.round(firstSearchMs), ready_ms: Math.round(t - started) };
  } finally {
    await running.stop();
  }
}

async function latency(size: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-search-'));
  const store: Store = openStore({ path: join(dir, 'engram.db') });
  try {
    let started = performance.now();
    fill(store, size);
    const importMs = performance.now() - started;
    started = performance.now();
    await embedPending(store, randomEmbedder, { batchSize: 1_000 });
    const vectorMs = performance.now() - started;
    const indexDir = join(dir, 'index');

    // BM25 before/after, paired in this run: build + persist, cold load, memory held, query time.
    const before: Record<string, number> = {};
    const after: Record<string, number> = {};
    const wfile = join(dir, 'wink-snapshot.json');
    let base = held();
    started = performance.now();
    let wink: ReturnType<typeof bm25> | undefined = winkBuild(store, wfile);
    before.build_ms = Math.round(performance.now() - started);
    wink = undefined;
    base = held();
    started = performance.now();
    wink = winkLoad(wfile);
    before.cold_load_ms = Math.round(performance.now() - started);
    before.held_mb = mb(held() - base);
    before.snapshot_mb = mb(statSync(wfile).size);
    started = performance.now();
    buildBm25Snapshot(store, indexDir);
    after.build_ms = Math.round(performance.now() - started);
    base = held();
    started = performance.now();
    let packed = loadBm25Snapshot(indexDir, store.searchState());
    after.cold_load_ms = Math.round(performance.now() - started);
    after.held_mb = mb(held() - base);
    after.snapshot_mb = mb(statSync(join(indexDir, readdirName(indexDir))).size);
    const { index: packedIndex } = buildBm25Index(store);
    packed = undefined;
    const bm25Queries = Array.from({ length: QUERIES }, () => sentence(3, 6));
    const wq: number[] = [];
    const pq: number[] = [];
    const activeFilter = { statuses: new Set(['active'] as const) };
    for (const query of bm25Queries) {
      let t = performance.now();
      wink.search(query, TUNING.pool * TUNING.bm25Overfetch, activeOnly);
      wq.push(performance.now() - t);
      t = performance.now();
      packedIndex.search(query, TUNING.pool * TUNING.bm25Overfetch, activeFilter);
      pq.push(performance.now() - t);
    }
    before.query_p50_ms = percentile(wq, 50);
    after.query_p50_ms = percentile(pq, 50);
    wink = undefined;
    emit({
      bench: 'bm25-index',
      engrams: size,
      load: load(),
      before_wink: before,
      after_packed: after,
      ratios: Object.fromEntries(Object.keys(before).map((key) => [key, Math.round(((after[key] as number) / (before[key] as number)) * 100) / 100])),
      note: 'before = wink with retained fields + exportJSON snapshot (the code before issue 19), after = packed index + binary snapshot; same store, same run',
    });
    // The in-memory vector index the warm server keeps (vector-index.ts), against sqlite-vec's KNN: load time, memory,
    // KNN time, and how many of sqlite-vec's exact top 50 it returns (ids and order).
    const vspace = store.vectors().findSpace(randomEmbedder.model, DIM)!;
    base = held();
    started = performance.now();
    let vindex: ReturnType<typeof createVectorIndex> | undefined = createVectorIndex(store, vspace);
    vindex.loadSlice(Number.POSITIVE_INFINITY);
    const vLoadMs = Math.round(performance.now() - started);
    const vHeld = mb(held() - base);
    const vq: number[] = [];
    const sq: number[] = [];
    let same = 0;
    let overlap = 0;
    const probes = Array.from({ length: QUERIES }, () => unitVector(DIM));
    for (const probe of probes) {
      let t = performance.now();
      const exact = store.vectors().knn(vspace, probe, TUNING.pool);
      sq.push(performance.now() - t);
      t = performance.now();
      const fast = vindex.knn(probe, TUNING.pool);
      vq.push(performance.now() - t);
      if (JSON.stringify(fast) === JSON.stringify(exact)) same++;
      const ids = new Set(exact.map((n) => n.id));
      overlap += fast.filter((n) => ids.has(n.id)).length / exact.length;
    }
    vindex = undefined;
    emit({
      bench: 'vector-index',
      engrams: size,
      dim: DIM,
      load: load(),
      load_ms: vLoadMs,
      held_mb: vHeld,
      sqlite_vec_knn50_p50_ms: percentile(sq, 50),
      index_knn50_p50_ms: percentile(vq, 50),
      ratio: Math.round((percentile(vq, 50) / percentile(sq, 50)) * 100) / 100,
      identical_top50_share: Math.round((same / probes.length) * 1000) / 1000,
      top50_overlap: Math.round((overlap / probes.length) * 1000) / 1000,
    });

    const engine = createSearchEngine(store, {
      embedder: null,
      loadedEmbedder: randomEmbedder,
      indexDir,
      tuning: { rrfK: TUNING.rrfK, weights: { ...TUNING.weights }, topK: 10 },
      vectorIndex: true,
    });

    const queries = Array.from({ length: QUERIES }, () => ({ text: sentence(3, 6), vector: unitVector(DIM) }));
    started = performance.now();
    const cold = await engine.search({ query: queries[0]!.text, queryVector: queries[0]!.vector });
    const coldMs = performance.now() - started;
    await engine.settled(); // the in-memory vector index loads in slices after the first search

    const modes: Record<string, number[]> = { hybrid: [], bm25: [], vector: [] };
    const MODES = ['hybrid', 'bm25', 'vector'] as SearchMode[];
    for (const mode of MODES) for (const query of queries.slice(0, 20)) await engine.search({ query: query.text, queryVector: query.vector, mode });
    if (option('--profile', '')) {
      // --profile DIR: a CPU profile of each mode's timed loop alone (open in Chrome DevTools or summarise it).
      for (const mode of MODES) {
        const profile = await startProfile();
        for (const query of queries) {
          const t = performance.now();
          await engine.search({ query: query.text, queryVector: query.vector, mode });
          modes[mode]!.push(performance.now() - t);
        }
        writeFileSync(join(option('--profile', ''), `search-${size}-${mode}.cpuprofile`), JSON.stringify(await profile()));
      }
    } else {
      // The three modes take turns on each query, so a busy moment of the shared machine falls on all of them alike.
      for (const [i, query] of queries.entries()) {
        for (let m = 0; m < MODES.length; m++) {
          const mode = MODES[(i + m) % MODES.length] as SearchMode;
          const t = performance.now();
          await engine.search({ query: query.text, queryVector: query.vector, mode });
          modes[mode]!.push(performance.now() - t);
        }
      }
    }

    // Baseline in the same run: the two raw index lookups Engram builds on (wink search + sqlite-vec KNN, k = 50),
    // without gates, fusion or row fetches. The ratio is Engram's own overhead.
    const index = packedIndex;
    const space = store.vectors().findSpace(randomEmbedder.model, DIM)!;
    const raw: number[] = [];
    for (const query of queries) {
      const t = performance.now();
      index.search(query.text, TUNING.pool);
      store.vectors().knn(space, query.vector, TUNING.pool);
      raw.push(performance.now() - t);
    }
    // The vector half with its query embedding included (static-use-256 embeds the queries; it is 256-d like the
    // stored vectors, and only its cost matters here): full hybrid, then with the decisive-BM25 skip, then the same
    // queries again (the query-vector cache). Half the queries name one stored engram by its own words, as a prompt
    // about a known lesson does; half are loose words.
    if (vectorHalf) {
      const texts = (store.engrams.list({ limit: 200 }).engrams as Array<{ text: string }>).map((e) => e.text);
      const mixed = Array.from({ length: Math.min(QUERIES, 100) }, (_, i) =>
        i % 2 === 0 ? (texts[i % texts.length] as string).split(' ').slice(0, 8).join(' ') : sentence(3, 6),
      );
      const timed = { ...vectorHalf, model: randomEmbedder.model };
      const run = async (skipDecisive: boolean, engine?: ReturnType<typeof createSearchEngine>) => {
        const e = engine ?? createSearchEngine(store, { embedder: null, loadedEmbedder: timed, indexDir, tuning: { rrfK: TUNING.rrfK, weights: { ...TUNING.weights }, topK: 10 }, skipDecisive, vectorIndex: true });
        await e.search({ query: 'warm up the engine' });
        await e.settled();
        const ms: number[] = [];
        const skippedAt = new Set<number>();
        for (const [i, query] of mixed.entries()) {
          const t = performance.now();
          const response = await e.search({ query, abstain: false });
          ms.push(performance.now() - t);
          if (response.timings.vectors === 'skipped') skippedAt.add(i);
        }
        return { engine: e, ms, p50: percentile(ms, 50), skipped: skippedAt.size / mixed.length, skippedAt };
      };
      const full = await run(false);
      const skip = await run(true);
      const cached = await run(true, skip.engine);
      // The queries the skip applied to, timed both ways: what a decisive prompt saves.
      const only = (r: { ms: number[] }) => r.ms.filter((_, i) => skip.skippedAt.has(i));
      emit({
        bench: 'vector-half',
        engrams: size,
        queries: mixed.length,
        query_embedder: 'static-use-256',
        hybrid_full_p50_ms: full.p50,
        hybrid_skip_p50_ms: skip.p50,
        skipped_share: Math.round(skip.skipped * 100) / 100,
        decisive_full_p50_ms: percentile(only(full), 50),
        decisive_skip_p50_ms: percentile(only(skip), 50),
        hybrid_repeat_p50_ms: cached.p50,
        skip_vs_full_ratio: Math.round((skip.p50 / full.p50) * 100) / 100,
        repeat_vs_full_ratio: Math.round((cached.p50 / full.p50) * 100) / 100,
      });
    }

    const hybridP50 = percentile(modes.hybrid!, 50);
    emit({
      bench: 'search-latency',
      engrams: size,
      queries: QUERIES,
      dim: DIM,
      hybrid_p50_ms: hybridP50,
      hybrid_p95_ms: percentile(modes.hybrid!, 95),
      bm25_p50_ms: percentile(modes.bm25!, 50),
      vector_p50_ms: percentile(modes.vector!, 50),
      raw_indexes_p50_ms: percentile(raw, 50),
      hybrid_vs_raw_ratio: Math.round((hybridP50 / percentile(raw, 50)) * 100) / 100,
      first_search_ms: Math.round(coldMs),
      first_search_bm25: cold.timings.bm25_index,
      target_p50_ms: size <= 10_000 ? 8 : 60,
      setup: { import_ms: Math.round(importMs), vectors_ms: Math.round(vectorMs) },
      load: load(),
    });
    if (args.includes('--server-rss')) {
      store.close();
      emit({ bench: 'server-rss', engrams: size, ...(await serverRss(dir)), load: load() });
    }
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Import throughput is measured on realistic text: the hand-written lessons of fixtures/eval (1–3 sentences each),
// cycled with a counter so none is a duplicate. Synthetic word salad tokenises into far more pieces than prose.
const LESSONS = readFileSync(join(option('--root', process.cwd()), 'fixtures', 'eval', 'memories.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => (JSON.parse(line) as { text: string }).text);
const lessonLines = (count: number): string[] =>
  Array.from({ length: count }, (_, i) => JSON.stringify({ text: `${LESSONS[i % LESSONS.length]} (${i})` }));

/** engram import throughput with a real model: store + embed, end to end, engrams per second. */
async function importRate(label: string, spec: EmbedderSpec | null, count: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-import-'));
  const store = openStore({ path: join(dir, 'engram.db') });
  try {
    const embedder = spec ? await loadEmbedder(spec) : null;
    const lines = lessonLines(count);
    const started = performance.now();
    importEngrams(store, lines);
    const stored = performance.now();
    if (embedder) await embedPending(store, embedder);
    const done = performance.now();
    const queryEmbed: number[] = [];
    if (embedder) {
      for (let i = 0; i < 50; i++) {
        const t = performance.now();
        await embedder.embed([LESSONS[i % LESSONS.length] as string]);
        queryEmbed.push(performance.now() - t);
      }
    }
    emit({
      bench: 'import',
      embedder: label,
      engrams: count,
      engrams_per_s: Math.round(count / ((done - started) / 1000)),
      store_only_per_s: Math.round(count / ((stored - started) / 1000)),
      target_per_s: label === 'use-lite' ? 40 : label === 'static-use-256' ? 500 : null,
      query_embed_p50_ms: queryEmbed.length ? percentile(queryEmbed, 50) : null,
    });
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const staticSpec: EmbedderSpec = {
  kind: 'transformers',
  model: 'static-use-256',
  modelDir: MODEL_DIR,
  folder: join(MODEL_DIR, 'static-use-256'),
  quantized: true,
};
const vectorHalf = existsSync(join(MODEL_DIR, 'static-use-256')) ? await loadEmbedder(staticSpec) : null;
if (!args.includes('--latency-only')) {
await importRate('none (BM25 only)', null, 5_000);
await importRate('static-use-256', staticSpec, 2_000);
if (useLiteInstalled()) await importRate('use-lite', { kind: 'use-lite', model: 'use-lite' }, 400);
}
const readdirName = (folder: string): string => (readdirSync(folder).find((name) => name.endsWith('.bin')) as string);
for (const size of SIZES) await latency(size);
