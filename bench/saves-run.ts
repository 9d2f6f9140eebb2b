// The body of bench/saves.mjs (bundled by it). Prints JSON lines, asserts nothing.
//
// Per corpus and size: a store seeded straight into the table (one transaction; an import would check conflicts line
// by line, which is what is measured here), then
// 1. `index-build`: the text index built in this thread (the warm server builds it in a worker at start), its time
//    and the heap it holds;
// 2. `conflict-check`: findConflicts on new texts (the index) and the full scan it replaced, alternating per probe;
//    every answer compared;
// 3. `save`: addEngram end to end (redaction, tier, conflict check, insert, audit row, journal), one save at a time;
// 0. with `--server`, `server-first-save`: dist/server.mjs started on the store, its first save over HTTP once warm,
//    and its resident memory.
// Runs in a tree without the index too (main before it): there findConflicts is the full scan and `save` is the
// before figure.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../src/core/index.js';
import * as services from '../src/services/index.js';
import { rssOf, startBenchServer } from './_server.js';
import { analyse, ruleVerdict, type Analysis } from '../src/services/governance/conflicts.js';
import { seededRandom } from './_random.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 ? (args[index + 1] as string) : fallback;
};
const ROOT = option('--root', process.cwd());
const SIZES = option('--sizes', '10000,100000').split(',').map(Number);
const CORPORA = option('--corpora', 'lessons,skewed').split(',');
const PROBES = Number(option('--probes', '200'));
const SAVES = Number(option('--saves', '100'));
const SERVER = args.includes('--server');
const emit = (record: Record<string, unknown>): void => console.log(JSON.stringify(record));
const round = (value: number): number => Math.round(value * 100) / 100;
const load = (): number[] => loadavg().map((n) => round(n));
const pct = (values: number[], p: number): number => round([...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? 0);

const random = seededRandom(23);
const LESSONS = ['eval', 'eval-lessons'].flatMap((set) =>
  readFileSync(join(ROOT, 'fixtures', set, 'memories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { text: string }).text),
);
const VOCABULARY = [
  'build', 'test', 'deploy', 'cache', 'docker', 'index', 'migration', 'schema', 'query', 'timeout', 'retry', 'lint',
  'commit', 'branch', 'merge', 'release', 'package', 'config', 'token', 'session', 'request', 'handler', 'route',
  ...Array.from({ length: 3000 }, (_, i) => `term${i.toString(36)}`),
];
/** bench/search.mjs's word salad: texts of 30 words from 100, so every stem is in nearly every engram. */
const SALAD = Array.from({ length: 100 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`);
/** A text of the corpus: a lesson with a fifth of its words dropped and a counter, bench/http's skewed words, or salad. */
const TEXT: Record<string, (i: number) => string> = {
  salad: (i) => `${Array.from({ length: 30 }, () => SALAD[Math.floor(random() * SALAD.length)]).join(' ')} (${i})`,
  lessons: (i) => `${(LESSONS[Math.floor(random() * LESSONS.length)] as string).split(' ').filter(() => random() > 0.2).join(' ')} (${i})`,
  skewed: (i) => `${Array.from({ length: 10 + Math.floor(random() * 21) }, () => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(VOCABULARY.length * random() ** 3))]).join(' ')} (${i})`,
};
const PROJECTS = ['shop', 'billing', null];

function seedStore(store: Store, size: number, text: (i: number) => string): void {
  const at = new Date().toISOString();
  store.write(() => {
    for (let i = 0; i < size; i++) {
      const body = text(i);
      store.engrams.insert({
        kind: 'lesson', title: null, text: body, content: null, category: 'bench', tags: [], prerequisites: null, source: 'manual',
        source_sessions: [], session_id: null, tool_name: null, occurrence_count: 1, times_matched: 0, last_matched_at: null, pinned: false,
        auto_pinned: false, deprecated: false, deprecated_reason: null, project: PROJECTS[i % 3] ?? null, scope: 'project', topic_key: null, revision_count: 0,
        duplicate_count: 0, created_at: at, updated_at: at, last_seen_at: at, deleted_at: null,
      });
    }
  });
}

/** The conflict check before the text index: every active engram in scope read and judged (analyses kept per id). */
function scanner(store: Store): (probe: { text: string; project: string | null }) => Array<{ other_id: number }> {
  const analyses = new Map<number, { hash: string; analysis: Analysis }>();
  const select = store.db.prepare(
    `SELECT id, text, content_hash FROM engrams WHERE deleted_at IS NULL AND status = 'active' AND (? IS NULL OR project IS NULL OR project = ?)`,
  );
  return (probe) => {
    const mine = analyse(probe.text);
    const found: Array<{ other_id: number; overlap: number }> = [];
    for (const row of select.all(probe.project, probe.project) as Array<{ id: number; text: string; content_hash: string }>) {
      let entry = analyses.get(row.id);
      if (!entry || entry.hash !== row.content_hash) analyses.set(row.id, (entry = { hash: row.content_hash, analysis: analyse(row.text) }));
      const verdict = ruleVerdict(mine, entry.analysis);
      if (verdict.conflict) found.push({ other_id: row.id, overlap: verdict.overlap });
    }
    return found.sort((a, b) => b.overlap - a.overlap || a.other_id - b.other_id);
  };
}

/**
 * `--server`: the warm server (dist/server.mjs, no embedder) started on the store: when it is warm (and, with a text
 * index, when that is built), the first save over HTTP — before the index, it analysed every active engram — and the
 * server's resident memory after it.
 */
async function serverFirstSave(home: string): Promise<Record<string, unknown>> {
  const script = join(ROOT, 'dist', 'server.mjs');
  if (!existsSync(script)) return { skipped: 'dist/server.mjs missing (npm run build)' };
  const started = performance.now();
  const server = await startBenchServer(script, home);
  try {
    const url = server.url;
    const log = join(home, 'logs', 'server.log');
    const logged = (text: string): boolean => existsSync(log) && readFileSync(log, 'utf8').includes(text);
    const until = performance.now() + 180_000;
    while (performance.now() < until && !(logged('server warm') && (!hasIndex || logged('text index ready')))) await new Promise((resolve) => setTimeout(resolve, 100));
    const readyMs = performance.now() - started;
    const t = performance.now();
    const response = await fetch(`${url}/observations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 'bench', project: 'shop', title: 'first save', content: 'The first save after the server started: compared with every active engram before the text index.' }),
    });
    await response.text();
    const firstSaveMs = performance.now() - t;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return { http_status: response.status, warm_ms: Math.round(readyMs), first_save_ms: Math.round(firstSaveMs), ...rssOf(server.child.pid ?? 0) };
  } finally {
    await server.stop();
  }
}

const heap = (): number => {
  (globalThis as { gc?: () => void }).gc?.();
  const memory = process.memoryUsage();
  return memory.heapUsed + memory.arrayBuffers;
};
const hasIndex = 'warmTextIndex' in services;

for (const corpus of CORPORA) {
  const text = TEXT[corpus] as (i: number) => string;
  for (const size of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), 'engram-bench-saves-'));
    const store = openStore({ path: join(dir, 'engram.db') });
    try {
      let started = performance.now();
      seedStore(store, size, text);
      const seedMs = performance.now() - started;
      if (SERVER) emit({ bench: 'server-first-save', corpus, engrams: size, text_index: hasIndex, ...(await serverFirstSave(dir)), load: load() });
      if (hasIndex) {
        const before = heap();
        started = performance.now();
        await (services as unknown as { warmTextIndex: (store: Store) => Promise<unknown> }).warmTextIndex(store);
        emit({ bench: 'index-build', corpus, engrams: size, ms: Math.round(performance.now() - started), heap_mb: round((heap() - before) / 1e6), seed_ms: Math.round(seedMs), load: load() });
      }
      const scan = scanner(store);
      const probes = Array.from({ length: PROBES }, (_, i) => ({ text: text(size + i), project: PROJECTS[i % 3] ?? null }));
      started = performance.now();
      scan(probes[0] as { text: string; project: string | null });
      const scanFirst = performance.now() - started;
      const timesScan: number[] = [];
      const timesIndex: number[] = [];
      let differ = 0;
      let conflicts = 0;
      for (const probe of probes) {
        started = performance.now();
        const full = scan(probe);
        timesScan.push(performance.now() - started);
        started = performance.now();
        const indexed = services.findConflicts(store, probe);
        timesIndex.push(performance.now() - started);
        conflicts += full.length;
        if (JSON.stringify(full.map((c) => c.other_id)) !== JSON.stringify(indexed.map((c) => c.other_id))) differ++;
      }
      emit({
        bench: 'conflict-check', corpus, engrams: size, probes: PROBES, conflicts_found: conflicts, answers_differ: differ,
        scan_first_ms: round(scanFirst), scan_p50_ms: pct(timesScan, 50), scan_p95_ms: pct(timesScan, 95),
        find_p50_ms: pct(timesIndex, 50), find_p95_ms: pct(timesIndex, 95), ratio_p50: round(pct(timesIndex, 50) / pct(timesScan, 50)),
        find_is: hasIndex ? 'index' : 'scan', load: load(),
      });
      const saves: number[] = [];
      let first = 0;
      for (let i = 0; i < SAVES; i++) {
        started = performance.now();
        services.addEngram(store, { text: text(size + PROBES + i), project: PROJECTS[i % 3] ?? null }, { actor: { by: 'agent', via: 'mcp' } });
        const ms = performance.now() - started;
        if (i === 0) first = ms;
        else saves.push(ms);
      }
      emit({ bench: 'save', corpus, engrams: size, saves: SAVES, first_ms: round(first), p50_ms: pct(saves, 50), p95_ms: pct(saves, 95), conflict_check: hasIndex ? 'index' : 'scan', load: load() });
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
