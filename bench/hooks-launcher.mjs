#!/usr/bin/env node
// What finding the runtime costs a hook process: the launcher (hooks/run.cjs findRuntime → the runtime's
// dist/hooks/fast.cjs) in each install layout, against the floor of a CommonJS script that only reads stdin. Each
// round runs every variant once, in a rotating order, as the agent runs a hook (`sh -c 'node …/hooks/run.cjs <entry>
// --agent claude'` with a PreToolUse payload on stdin); the entry is one the fast path does not know, so the process
// loads everything a hook loads, reads stdin and exits, without a socket or a store. Figures are medians of the
// per-round differences to the floor (paired, so the machine's background load mostly cancels).
//
//   node bench/hooks-launcher.mjs [--rounds 60] [--baseline-launcher FILE] [--json]
//
// --baseline-launcher adds an in-place variant run by another hooks/run.cjs (e.g. `git show <commit>:hooks/run.cjs >
// /tmp/old-run.cjs`), to compare a change of the launcher in the same run. Variants:
// - in-place: a source checkout that ran ./install.sh (dist/ and node_modules/ in the install folder);
// - plugin: an install folder with neither, its runtime found through its pointer in the plugin data folder the agent
//   gives the hooks (CLAUDE_PLUGIN_DATA; the layout every marketplace install has once bootstrapped);
// - plugin, no data folder: the same found through $ENGRAM_HOME/runtime/roots/ (hooks registered by hand).
// Everything lives in a temporary folder (dist/ copied from this checkout's build, node_modules linked), removed at
// the end. Asserts nothing.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const ROUNDS = Number(option('--rounds', '60'));
const BASELINE = option('--baseline-launcher', null);
const JSON_ONLY = args.includes('--json');
if (!Number.isInteger(ROUNDS) || ROUNDS < 5) throw new Error('--rounds wants a whole number ≥ 5');
for (const file of ['dist/hooks/fast.cjs', 'node_modules/better-sqlite3/package.json']) {
  if (!existsSync(join(root, file))) throw new Error(`missing ${file}: run npm ci && npm run build first`);
}

const tmp = mkdtempSync(join(os.tmpdir(), 'engram-bench-launcher-'));
const home = join(tmp, 'engram');
mkdirSync(home, { recursive: true });

/** An install folder with the launcher and the scripts it loads; with `runtime`, dist/ and node_modules/ in it. */
function installFolder(name, { inPlace, launcher = join(root, 'hooks', 'run.cjs') }) {
  const dir = join(tmp, name);
  mkdirSync(join(dir, 'hooks'), { recursive: true });
  cpSync(launcher, join(dir, 'hooks', 'run.cjs'));
  cpSync(join(root, 'scripts'), join(dir, 'scripts'), { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) cpSync(join(root, file), join(dir, file));
  if (inPlace) {
    cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  }
  return dir;
}

const states = await import(pathToFileURL(join(root, 'scripts', 'install-state.mjs')).href);
const inPlace = installFolder('in-place', { inPlace: true });
const plugin = installFolder('plugin', { inPlace: false });
const key = states.runtimeKey(plugin);
const pluginData = join(tmp, 'plugin-data');
const runtime = join(pluginData, 'runtime', key);
mkdirSync(runtime, { recursive: true });
cpSync(join(root, 'dist'), join(runtime, 'dist'), { recursive: true });
symlinkSync(join(root, 'node_modules'), join(runtime, 'node_modules'), 'dir');
writeFileSync(join(runtime, states.RUNTIME_STAMP), JSON.stringify({ key }));
states.linkRuntime(plugin, runtime, key, home, { CLAUDE_PLUGIN_DATA: pluginData });
for (const env of [{ CLAUDE_PLUGIN_DATA: pluginData }, { HOME: tmp, ENGRAM_HOME: home }]) {
  if (states.findRuntime(plugin, env)?.dir !== runtime) throw new Error('the plugin layout does not resolve');
}

const quote = (text) => `'${text.replaceAll("'", "'\\''")}'`;
const launch = (folder) => `node ${quote(join(folder, 'hooks', 'run.cjs'))} bench-modules --agent claude`;
const variants = [
  { name: 'floor: CommonJS reads stdin', command: `node ${quote(join(root, 'bench', 'hooks-stdin.cjs'))}` },
  { name: 'in-place', command: launch(inPlace) },
  { name: 'plugin (runtime folder)', command: `CLAUDE_PLUGIN_DATA=${quote(pluginData)} ${launch(plugin)}` },
  { name: 'plugin, no data folder', command: launch(plugin) },
];
if (BASELINE) variants.push({ name: 'in-place, baseline launcher', command: launch(installFolder('baseline', { inPlace: true, launcher: BASELINE })) });

const payload = JSON.stringify({
  session_id: 'bench',
  transcript_path: join(tmp, 't.jsonl'),
  cwd: tmp,
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'git status' },
  tool_use_id: 'toolu_bench',
});
const env = { PATH: process.env.PATH, HOME: tmp, ENGRAM_HOME: home, ENGRAM_SERVER: 'off' };
const run = (command) => {
  const t0 = process.hrtime.bigint();
  const result = spawnSync('sh', ['-c', command], { input: payload, env, cwd: tmp, encoding: 'utf8', timeout: 30_000 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (result.status !== 0 || result.stdout !== '' || result.stderr !== '') throw new Error(`${command}: exit ${result.status} ${result.stderr}`);
  return ms;
};

const samples = variants.map(() => []);
const started = performance.now();
const load = os.loadavg();
try {
  for (let i = 0; i < 3; i++) for (const v of variants) run(v.command); // warm the file cache
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < variants.length; k++) {
      const index = (round + k) % variants.length;
      samples[index].push(run(variants[index].command));
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const r = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const floor = samples[0];
const rows = variants.map((v, i) => ({
  name: v.name,
  p50_ms: r(median(samples[i])),
  extra_over_floor_ms: i === 0 ? 0 : r(median(samples[i].map((ms, j) => ms - floor[j]))),
  ratio_to_floor: r(median(samples[i].map((ms, j) => ms / floor[j])), 3),
}));
const result = {
  bench: 'hooks-launcher',
  rounds: ROUNDS,
  machine: { node: process.version, cpus: os.cpus().length, loadavg_start: load.map((x) => r(x)), loadavg_end: os.loadavg().map((x) => r(x)) },
  variants: rows,
  total_s: Math.round((performance.now() - started) / 1000),
};
if (JSON_ONLY) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  const lines = [
    `Hook launcher cost — ${ROUNDS} rounds, every variant once per round (rotating order), paired with the floor`,
    `node ${process.version}, ${result.machine.cpus} CPUs, load ${result.machine.loadavg_start.join(' ')} → ${result.machine.loadavg_end.join(' ')}`,
    '',
    `${'variant'.padEnd(30)}  p50 ms  +ms vs floor (median of pairs)  ratio to floor`,
    ...rows.map((row) => `${row.name.padEnd(30)}  ${String(row.p50_ms).padStart(6)}  ${String(row.extra_over_floor_ms).padStart(30)}  ${String(row.ratio_to_floor).padStart(14)}`),
    '',
    JSON.stringify(result),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
