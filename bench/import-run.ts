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
import { embeddingText, loadEmbedder, openStore, useLiteInstalled, type Embedder, type EmbedderSpec } from '../src/core/index.js';
import { embedPending, importEngrams, TUNING } from '../src/services/index.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 ? (args[index + 1] as string) : fallback;
};
const ROOT = option('--root', process.cwd());
const MODEL_DIR = option('--model-dir', process.env.ENGRAM_MODEL_DIR ?? join(ROOT, '..', 'shared', 'models'));
const ONLY = option('--embedders', 'none,static-use-256,use-lite').split(',');
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
async function floor(dir: string, lines: string[], embedder: Embedder | null): Promise<number> {
  const db = new Database(join(dir, `floor-${Math.random()}.db`));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT, tags TEXT, v BLOB)');
  const started = performance.now();
  const insert = db.prepare('INSERT INTO t (text, tags) VALUES (?, ?)');
  const rows = lines.map((line) => JSON.parse(line) as { text: string; tags: string[] });
  db.transaction(() => rows.forEach((row) => insert.run(row.text, JSON.stringify(row.tags))))();
  if (embedder) {
    const size = TUNING.batchSize[embedder.kind] ?? 32;
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
async function engram(dir: string, lines: string[], embedder: Embedder | null): Promise<{ ms: number; storeMs: number; cpuMs: number }> {
  const store = openStore({ path: join(dir, `engram-${Math.random()}.db`) });
  try {
    const started = performance.now();
    const cpu = process.cpuUsage();
    importEngrams(store, lines);
    const stored = performance.now();
    if (embedder) await embedPending(store, embedder);
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

emit({ bench: 'import-start', node: process.version, load: loadavg().map((l) => round(l)) });
if (ONLY.includes('none')) await measure('none (BM25 only)', null, Number(option('--count-none', '5000')));
if (ONLY.includes('static-use-256')) {
  await measure('static-use-256', { kind: 'transformers', model: 'static-use-256', modelDir: MODEL_DIR, folder: join(MODEL_DIR, 'static-use-256'), quantized: true }, Number(option('--count-static', '3000')));
}
if (ONLY.includes('use-lite') && useLiteInstalled()) await measure('use-lite', { kind: 'use-lite', model: 'use-lite' }, Number(option('--count-use', '300')));
