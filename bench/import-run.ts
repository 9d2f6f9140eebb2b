// The import throughput benchmark itself; bench/import.mjs bundles and runs it. Prints JSON lines, asserts nothing.
//
// What `engram import` does end to end — validate, store (one transaction per batch, audited), embed the new engrams in
// batches — against a floor measured in the same run on the same lines: the same rows written by one prepared INSERT in
// one transaction, and the same texts through the same loaded embedder at the same batch size. The ratio is Engram's
// own overhead; engrams/s is the user-facing figure (targets: static model ≥ 1,500/s, USE lite ≥ 60/s).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  defaultEmbedWorkers,
  embeddingText,
  loadEmbedder,
  loadEmbedderPool,
  openStore,
  POOL_TEXTS_PER_WORKER,
  useLiteInstalled,
  type Embedder,
  type EmbedderSpec,
} from '../src/core/index.js';
import { embedPending, importEngrams, TUNING } from '../src/services/index.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 ? (args[index + 1] as string) : fallback;
};
const ROOT = option('--root', process.cwd());
const MODEL_DIR = option('--model-dir', process.env.ENGRAM_MODEL_DIR ?? join(ROOT, '..', 'shared', 'models'));
const ONLY = option('--embedders', 'none,static-use-256,use-lite,use-lite-pool').split(',');
const WORKERS = Number(option('--workers', String(defaultEmbedWorkers())));
const ROUNDS = Number(option('--rounds', '2'));
const emit = (record: Record<string, unknown>): void => console.log(JSON.stringify(record));
const round = (value: number, digits = 2): number => Math.round(value * 10 ** digits) / 10 ** digits;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

// Realistic text: the hand-written lessons of fixtures/eval, cycled with a counter so none is a duplicate.
const LESSONS = readFileSync(join(ROOT, 'fixtures', 'eval', 'memories.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => (JSON.parse(line) as { text: string }).text);
const lessonLines = (count: number, salt: string): string[] =>
  Array.from({ length: count }, (_, i) => JSON.stringify({ text: `${LESSONS[i % LESSONS.length]} (${salt}${i})`, tags: [`t${i % 13}`] }));

/** The floor: the same texts inserted by one statement in one transaction, then embedded by the same embedder. */
async function floor(dir: string, lines: string[], embedder: Embedder | null, batchSize?: number): Promise<number> {
  const db = new Database(join(dir, `floor-${Math.random()}.db`));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT, tags TEXT, v BLOB)');
  const started = performance.now();
  const insert = db.prepare('INSERT INTO t (text, tags) VALUES (?, ?)');
  const rows = lines.map((line) => JSON.parse(line) as { text: string; tags: string[] });
  db.transaction(() => rows.forEach((row) => insert.run(row.text, JSON.stringify(row.tags))))();
  if (embedder) {
    const size = batchSize ?? TUNING.batchSize[embedder.kind] ?? 32;
    const put = db.prepare('UPDATE t SET v = ? WHERE id = ?');
    for (let start = 0; start < rows.length; start += size) {
      const vectors = await embedder.embed(rows.slice(start, start + size).map((row) => embeddingText(row.text)));
      db.transaction(() => vectors.forEach((v, i) => put.run(Buffer.from(v.buffer), start + i + 1)))();
    }
  }
  const ms = performance.now() - started;
  db.close();
  return ms;
}

/** engram's import: store then embed, as the CLI does. */
async function engram(dir: string, lines: string[], embedder: Embedder | null, batchSize?: number): Promise<{ ms: number; storeMs: number; cpuMs: number }> {
  const store = openStore({ path: join(dir, `engram-${Math.random()}.db`) });
  try {
    const started = performance.now();
    const cpu = process.cpuUsage();
    importEngrams(store, lines);
    const stored = performance.now();
    if (embedder) await embedPending(store, embedder, batchSize ? { batchSize } : {});
    const used = process.cpuUsage(cpu);
    return { ms: performance.now() - started, storeMs: stored - started, cpuMs: (used.user + used.system) / 1000 };
  } finally {
    store.close();
  }
}

async function measure(label: string, spec: EmbedderSpec | null, count: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-import-'));
  try {
    const embedder = spec ? await loadEmbedder(spec) : null;
    if (embedder) await embedder.embed(['warm the embedder up']);
    const subject: number[] = [];
    const stores: number[] = [];
    const base: number[] = [];
    const ratios: number[] = [];
    const cpus: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const lines = lessonLines(count, `r${r}-`);
      const b = await floor(dir, lines, embedder);
      const s = await engram(dir, lines, embedder);
      base.push(b);
      subject.push(s.ms);
      stores.push(s.storeMs);
      cpus.push(s.cpuMs);
      ratios.push(s.ms / b);
    }
    emit({
      bench: 'import',
      embedder: label,
      engrams: count,
      rounds: ROUNDS,
      engrams_per_s: Math.round(count / (median(subject) / 1000)),
      // Per second of this process's CPU time (all threads): far steadier than wall time on a machine others load.
      engrams_per_cpu_s: Math.round(count / (median(cpus) / 1000)),
      store_only_per_s: Math.round(count / (median(stores) / 1000)),
      floor_per_s: Math.round(count / (median(base) / 1000)),
      ratio_to_floor: round(median(ratios)),
      target_per_s: label === 'use-lite' ? 60 : label === 'static-use-256' ? 1500 : null,
      load: loadavg().map((l) => round(l)),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * USE lite in a worker pool, as `engram import` runs it: import (store + pool embedding) against two floors on the
 * same lines — the single-thread encoder at its batch size (the old path's limit) and the pool at the pool's batch.
 */
async function measurePool(count: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-import-'));
  const spec: EmbedderSpec = { kind: 'use-lite', model: 'use-lite' };
  const started = performance.now();
  const pool = await loadEmbedderPool(spec, { script: join(ROOT, 'dist', 'embed-worker.mjs'), workers: WORKERS });
  const startMs = performance.now() - started;
  try {
    const single = await loadEmbedder(spec);
    await single.embed(['warm the embedder up']);
    await pool.embed(Array.from({ length: pool.workers || 1 }, () => 'warm the embedder up'));
    const batch = POOL_TEXTS_PER_WORKER * Math.max(1, pool.workers);
    const subject: number[] = [];
    const singles: number[] = [];
    const pools: number[] = [];
    const cpus: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const lines = lessonLines(count, `p${r}-`);
      singles.push(await floor(dir, lines, single));
      pools.push(await floor(dir, lines, pool, batch));
      const s = await engram(dir, lines, pool, batch);
      subject.push(s.ms);
      cpus.push(s.cpuMs);
    }
    const rate = (ms: number): number => Math.round(count / (ms / 1000));
    emit({
      bench: 'import',
      embedder: `use-lite-pool (${pool.workers} workers)`,
      engrams: count,
      rounds: ROUNDS,
      workers: pool.workers,
      pool_start_ms: Math.round(startMs),
      engrams_per_s: rate(median(subject)),
      // CPU time of the whole process, worker threads included.
      engrams_per_cpu_s: rate(median(cpus)),
      floor_single_thread_per_s: rate(median(singles)),
      floor_pool_per_s: rate(median(pools)),
      ratio_to_single_thread_floor: round(median(subject) / median(singles)),
      ratio_to_pool_floor: round(median(subject) / median(pools)),
      rss_mb: Math.round(process.memoryUsage().rss / 1e6),
      target_per_s: 60,
      load: loadavg().map((l) => round(l)),
    });
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

emit({ bench: 'import-start', node: process.version, load: loadavg().map((l) => round(l)) });
if (ONLY.includes('none')) await measure('none (BM25 only)', null, Number(option('--count-none', '5000')));
if (ONLY.includes('static-use-256')) {
  await measure('static-use-256', { kind: 'transformers', model: 'static-use-256', modelDir: MODEL_DIR, folder: join(MODEL_DIR, 'static-use-256'), quantized: true }, Number(option('--count-static', '3000')));
}
if (ONLY.includes('use-lite') && useLiteInstalled()) await measure('use-lite', { kind: 'use-lite', model: 'use-lite' }, Number(option('--count-use', '300')));
if (ONLY.includes('use-lite-pool') && useLiteInstalled()) await measurePool(Number(option('--count-use', '300')));
