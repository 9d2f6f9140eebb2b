// The warm server's UserPromptSubmit handler, in process, on a copy of bench/hooks.mjs's store with its prompts:
// where the handler's milliseconds go. Bundled and run by bench/prompt-path.mjs. Asserts nothing.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { loadSettings, openStore, readEnv, resolveEmbedder } from '../src/core/index.js';
import { createSearchEngine, searchTuning, workEnvironment } from '../src/services/index.js';
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

const found = readdirSync(cacheDir).map((name) => join(cacheDir, name, 'engram.db')).find((file) => statSync(file, { throwIfNoEntry: false }));
if (!found) throw new Error(`no engram.db under ${cacheDir}`);
const home = mkdtempSync(join(os.tmpdir(), 'engram-prompt-path-'));
copyFileSync(found, join(home, 'engram.db'));
const project = join(home, corpus.PROJECT);
mkdirSync(project, { recursive: true });
corpus.makeProject(project);
const user = join(home, 'user');
mkdirSync(user, { recursive: true });

const settings = loadSettings(readEnv({ ENGRAM_HOME: home, ENGRAM_MODEL_DIR: modelDir, ENGRAM_MODEL: model, HOME: user, PATH: process.env.PATH ?? '' }));
const store = openStore({ path: settings.paths.db, busyTimeoutMs: 5_000 });
const engine = createSearchEngine(store, { embedder: resolveEmbedder(settings), indexDir: settings.paths.index, tuning: searchTuning(settings.config), catchUpMax: 32, vectorIndex: true });
const after: Array<() => void> = [];
const runtime: HookRuntime = {
  settings,
  log: { debug() {}, info() {}, warn() {}, error() {} } as unknown as HookRuntime['log'],
  now: () => new Date(),
  store: () => store,
  inject: { mode: 'hybrid', answeredBy: 'server', embedderKind: () => 'transformers', search: (request) => engine.search(request) },
  environment: (cwd, agent) => workEnvironment(settings, cwd, agent, { recheckAfterMs: 1_000 }),
  wake: () => {},
};
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
const marks = ((globalThis as { __marks?: Record<string, number[]> }).__marks ??= {});
for (const key of Object.keys(marks)) delete marks[key];
let injected = 0;
for (let i = 0; i < calls + 20; i++) {
  if (i === 20) for (const key of Object.keys(marks)) delete marks[key];
  const payload = corpus.userPromptSubmit(project, user, next());
  const usage = process.cpuUsage();
  const started = performance.now();
  const answer = await handleHookCall(
    { event: 'UserPromptSubmit', stdin: JSON.stringify(payload), envHints: { codex: false, claude: true }, agentFlag: 'claude' },
    runtime,
    { defer: (work) => after.push(work) },
  );
  const ms = performance.now() - started;
  for (let work = after.shift(); work; work = after.shift()) work();
  const used = process.cpuUsage(usage);
  if (i >= 20) {
    handler.push(ms);
    cpu.push((used.user + used.system) / 1000);
    if (answer.injected.length) injected++;
  }
  await sleep(gapMs);
}
const pct = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number) * 100) / 100;
};
const breakdown: Record<string, { p50: number; mean: number; n: number }> = {};
for (const [key, values] of Object.entries(marks)) {
  breakdown[key] = { p50: pct(values, 50), mean: Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 100) / 100, n: values.length };
}
process.stdout.write(
  `${JSON.stringify({ bench: 'prompt-path', calls, injected, load: os.loadavg().map((x) => Math.round(x * 100) / 100), handler_p50: pct(handler, 50), handler_p90: pct(handler, 90), cpu_p50: pct(cpu, 50), breakdown }, null, 1)}\n`,
);
store.close();
rmSync(home, { recursive: true, force: true });
process.exit(0);
