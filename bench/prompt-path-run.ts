// The warm server's UserPromptSubmit handler, in process, on a copy of bench/hooks.mjs's cached store with its prompts
// (the server's engine: in-memory vector index, candidates' fields kept): where the handler's milliseconds go — the
// search (its query embedding apart), the rest of the handler, KNN queries per search, garbage collection, CPU.
// Bundled and run by bench/prompt-path.mjs. Asserts nothing.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { join } from 'node:path';
import { loadSettings, openStore, readEnv, resolveEmbedder } from '../src/core/index.js';
import { createSearchEngine, searchTuning, workEnvironment, type SearchResponse } from '../src/services/index.js';
import { handleHookCall } from '../src/hooks/dispatch.js';
import type { HookRuntime } from '../src/hooks/events.js';
// @ts-expect-error plain ESM of the bench
import * as corpus from './hooks-corpus.mjs';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 && args[index + 1] !== undefined ? (args[index + 1] as string) : fallback;
};
const root = option('--root', process.cwd());
const cacheDir = option('--store-cache', '/tmp/hookstore');
const modelDir = option('--model-dir', join(root, '..', 'shared', 'models'));
const model = option('--model', 'ctx-use-256');
const calls = Number(option('--calls', '200'));
const gapMs = Number(option('--gap-ms', '30'));

// The cached store embedded with this model (bench/hooks.mjs keys its folders by corpus, size and model).
const found = readdirSync(cacheDir)
  .map((name) => join(cacheDir, name))
  .find((dir) => statSync(join(dir, 'engram.db'), { throwIfNoEntry: false }) && readFileSync(join(dir, 'imported.json'), 'utf8').includes(`:${model}"`));
if (!found) throw new Error(`no store embedded with ${model} under ${cacheDir} (run bench/hooks.mjs --store-cache ${cacheDir} first)`);
const home = mkdtempSync(join(os.tmpdir(), 'engram-prompt-path-'));
copyFileSync(join(found, 'engram.db'), join(home, 'engram.db'));
const project = join(home, corpus.PROJECT);
mkdirSync(project, { recursive: true });
corpus.makeProject(project);
const user = join(home, 'user');
mkdirSync(user, { recursive: true });

const settings = loadSettings(readEnv({ ENGRAM_HOME: home, ENGRAM_MODEL_DIR: modelDir, ENGRAM_MODEL: model, HOME: user, PATH: process.env.PATH ?? '' }));
const store = openStore({ path: settings.paths.db, busyTimeoutMs: 5_000 });
const engine = createSearchEngine(store, { embedder: resolveEmbedder(settings), indexDir: settings.paths.index, tuning: searchTuning(settings.config), catchUpMax: 32, vectorIndex: true });
const after: Array<(delivered: boolean) => void> = [];
let last: SearchResponse['timings'] | undefined;
const runtime: HookRuntime = {
  settings,
  log: { debug() {}, info() {}, warn() {}, error() {} } as unknown as HookRuntime['log'],
  now: () => new Date(),
  store: () => store,
  inject: {
    mode: 'hybrid',
    answeredBy: 'server',
    embedderKind: () => 'transformers',
    search: async (request) => {
      const response = await engine.search(request);
      last = response.timings;
      return response;
    },
  },
  environment: (cwd, agent) => workEnvironment(settings, cwd, agent, { recheckAfterMs: 1_000 }),
  wake: () => {},
};
// Files changed in the last 2 s are not trusted by the environment cache (core/environment): let the project's settle,
// as bench/hooks.mjs's have by the time its server answers.
await new Promise((resolve) => setTimeout(resolve, 2_100));
await engine.embedder();
await engine.search({ query: 'warm up the search engine', mode: 'hybrid' });
await engine.settled();
await engine.search({ query: 'warm up the search engine again', mode: 'hybrid' });
// The server keeps the candidates' recall fields in memory once warm (server/main.ts keepCandidateFields).
while (store.engrams.keepRecallFields());

const next = corpus.promptSource(root);
const handler: number[] = [];
const cpu: number[] = [];
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const steps: Record<string, number[]> = { search: [], embed: [], 'search without the embedding': [], 'handler without the search': [], knn_runs: [] };
let injected = 0;
// What the hooks printed, in order: two builds that rank alike print the same digest.
const printed = createHash('sha256');
// Garbage collections during the measured calls (their pauses, by kind: 1 minor, 4 incremental marking, 2 major).
const collections: Array<{ kind: number; ms: number }> = [];
let measuring = false;
new PerformanceObserver((list) => {
  if (measuring) for (const entry of list.getEntries()) collections.push({ kind: (entry as unknown as { detail?: { kind: number } }).detail?.kind ?? 0, ms: entry.duration });
}).observe({ entryTypes: ['gc'] });
for (let i = 0; i < calls + 20; i++) {
  if (i === 20) measuring = true;
  const payload = corpus.userPromptSubmit(project, user, next());
  last = undefined;
  const usage = process.cpuUsage();
  const started = performance.now();
  const answer = await handleHookCall(
    { event: 'UserPromptSubmit', stdin: JSON.stringify(payload), envHints: { codex: false, claude: true }, agentFlag: 'claude' },
    runtime,
    { defer: (work) => after.push(work) },
  );
  const ms = performance.now() - started;
  for (let work = after.shift(); work; work = after.shift()) work(true);
  const used = process.cpuUsage(usage);
  // Set by the search the handler ran (TypeScript cannot see the assignment through the callback).
  const timings = last as SearchResponse['timings'] | undefined;
  if (i >= 20 && timings) {
    handler.push(ms);
    steps.search!.push(timings.total_ms);
    steps.embed!.push(timings.embed_ms);
    steps['search without the embedding']!.push(timings.total_ms - timings.embed_ms);
    steps['handler without the search']!.push(ms - timings.total_ms);
    steps.knn_runs!.push(timings.knn_runs ?? 0);
    cpu.push((used.user + used.system) / 1000);
    if (answer.injected.length) injected++;
    printed.update(`${answer.stdout}\n`);
  }
  await sleep(gapMs);
}
const pct = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number) * 100) / 100;
};
const breakdown: Record<string, { p50: number; mean: number; n: number }> = {};
for (const [key, values] of Object.entries(steps)) {
  breakdown[key] = { p50: pct(values, 50), mean: Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 100) / 100, n: values.length };
}
process.stdout.write(
  `${JSON.stringify({
    bench: 'prompt-path',
    calls,
    gap_ms: gapMs,
    injected,
    stdout_sha256: printed.digest('hex').slice(0, 16),
    load: os.loadavg().map((x) => Math.round(x * 100) / 100),
    handler_ms: { p50: pct(handler, 50), p90: pct(handler, 90) },
    cpu_ms: { p50: pct(cpu, 50), p90: pct(cpu, 90) },
    gc_ms_per_call: Math.round((collections.reduce((sum, c) => sum + c.ms, 0) / calls) * 100) / 100,
    gc_by_kind: collections.reduce<Record<string, number>>((by, c) => ({ ...by, [c.kind]: (by[c.kind] ?? 0) + 1 }), {}),
    breakdown,
  })}\n`,
);
store.close();
rmSync(home, { recursive: true, force: true });
process.exit(0);
