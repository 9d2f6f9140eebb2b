#!/usr/bin/env node
// Hook latency benchmark: whole-process timings of the bundled hooks (dist/, as `npm run build` made it) against a
// store of 10,000 engrams, the way an agent runs them — the command line hooks/hooks.json registers, verbatim, through
// `sh -c` with CLAUDE_PLUGIN_ROOT in the environment and the event JSON on stdin (a socket, as Claude Code gives it).
// Each hook run is paired with a bare `sh -c "node -e ''"` given the same stdin, run right after it (hook, bare, hook,
// bare, …); the figure of merit is the median of the per-pair ratios, which cancels most of the machine's background
// noise. Measured with the warm background server up, then on the fallback path (ENGRAM_SERVER=off), with floors
// measured the same way — Node reading stdin (as a stream, and with blocking reads as the hook does); stdin plus one
// ping through the server's mailbox; stdin plus loading the hook's modules — which split a hook's extra milliseconds
// into start-up, module loading, the mailbox and the server's own time (from hooks.log). Also the peak RSS of a hook
// process on each path. Prints a table, then the same numbers as one JSON line; asserts nothing.
//
// Every process it starts gets an environment built from scratch (PATH, HOME, LANG, TMPDIR, Engram's and the agent's
// variables), never this shell's: in particular not NODE_EXTRA_CA_CERTS, which makes every Node start load a CA
// bundle (a bare `node -e ''` 64 ms instead of 25 on the build machine, diluting every ratio towards 1), nor
// NODE_OPTIONS. It says so on its first lines and in its JSON (`setup.environment`).
//
//   node bench/hooks.mjs [--runs 30] [--engrams 10000] [--keep] [--json] [--model ctx-use-256] [--model-dir DIR]
//                        [--layout in-place|plugin] [--store-cache DIR] [--repeat-payload]
//
// --layout plugin measures a plugin install as the agents make it: the launcher in an install folder that holds no
// dist/ or node_modules/, its runtime in a runtime folder found through the pointer in the plugin data folder
// (CLAUDE_PLUGIN_DATA; see hooks/run.cjs findRuntime); in-place (the default) is a source checkout that ran
// ./install.sh.
// --repeat-payload replays one call per event instead of a new session and target each run (after the first, nothing
// is injected: the session was shown its engrams) — to compare with measurements that replay one payload.
// --store-cache DIR keeps the imported and embedded store in DIR (keyed by the corpus, its size and the model) and
// copies it into the next run's home instead of importing again (the import takes minutes on 2 cores).
// --json prints only the JSON line. --keep keeps the temporary folder (store, logs, project) for inspection; the
// server is stopped either way. Everything lives in one temporary folder: nothing is written to the repository or
// to ~/.engram. The built install (dist/, hooks/run.cjs) is copied there first, so a rebuild during the run cannot
// pull files from under the hooks being measured; node_modules is linked, not copied.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createConnection } from 'node:net';
import os from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import launcher from '../hooks/run.cjs';
import { HOOK_NODE_OPTIONS } from '../scripts/hook-registry.mjs';
import * as input from './hooks-corpus.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const benchDir = join(root, 'bench');

// ---------------------------------------------------------------------------------------------------------------
// Options

const args = process.argv.slice(2);
const has = (name) => args.includes(name);
const option = (name, fallback) => {
  const index = args.indexOf(name);
  return index >= 0 && args[index + 1] !== undefined ? args[index + 1] : fallback;
};
const count = (name, fallback) => {
  const value = Number(option(name, String(fallback)));
  if (!Number.isInteger(value) || value < 1) fail(`${name} wants a positive whole number`);
  return value;
};
if (has('--help') || has('-h')) {
  process.stdout.write(
    'usage: node bench/hooks.mjs [--runs N (30)] [--engrams N (10000)] [--keep] [--json] [--model ID (ctx-use-256)] [--model-dir DIR]\n',
  );
  process.exit(0);
}
const RUNS = count('--runs', 30);
const ENGRAMS = count('--engrams', 10_000);
const KEEP = has('--keep');
const STORE_CACHE = option('--store-cache', null);
const JSON_ONLY = has('--json');
const MODEL = option('--model', 'ctx-use-256');
const LAYOUT = option('--layout', 'in-place');
const REPEAT_PAYLOAD = has('--repeat-payload');
if (!['in-place', 'plugin'].includes(LAYOUT)) fail('--layout wants in-place or plugin');
const MODEL_DIR = resolve(option('--model-dir', process.env.ENGRAM_MODEL_DIR ?? join(root, '..', 'shared', 'models')));
/**
 * Variables of this shell no measured process may inherit: NODE_EXTRA_CA_CERTS makes each Node start read and parse
 * a CA bundle (~40 ms here, in the hook and in the bare baseline alike: the ratio then says little about the hook);
 * NODE_OPTIONS changes what every Node process does. The environments below are built without them.
 */
const NOT_INHERITED = ['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS'];
/** Unmeasured pairs before each series: file cache, env cache, the server's first query of a kind. */
const WARMUP = 3;
/** Peak-RSS samples per case (separate runs: wrapping the timed runs would change their timings). */
const RSS_RUNS = 5;

/** Whole-process targets with the server up (median of paired ratios to a bare `node -e ''`; issue 19 for PreToolUse and SessionStart). */
const TARGETS = { PreToolUse: 1.15, UserPromptSubmit: 1.6, SessionStart: 1.15 };
/** Each event's hook entry (`run.sh <entry>`), from the launcher's own table. */
const ENTRIES = Object.fromEntries(Object.entries(launcher.HOOK_ENTRIES).map(([entry, { event }]) => [event, entry]));
/** The events measured on the server path besides the targeted ones (no target: every hook goes through the same front). */
const OTHER_EVENTS = ['PostToolUse', 'PostToolUseFailure', 'Stop', 'SessionEnd'];

function fail(message) {
  process.stderr.write(`bench:hooks: ${message}\n`);
  process.exit(2);
}
const progress = (message) => process.stderr.write(`[bench:hooks] ${message}\n`);
const tick = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------------------------
// Preflight

const needed = [
  'hooks/run.cjs',
  'hooks/run.sh',
  'dist/server.mjs',
  'dist/cli.mjs',
  'dist/hooks/fast.cjs',
  'dist/hooks/inprocess.cjs',
  'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
];
const missing = needed.filter((path) => !existsSync(join(root, path)));
if (missing.length > 0) fail(`missing ${missing.join(', ')}: run \`npm ci && npm run build\` first`);
if (!existsSync(join(MODEL_DIR, MODEL, 'config.json'))) {
  fail(`no embedding model ${MODEL} in ${MODEL_DIR} (see ../shared/models/README.md; --model-dir or ENGRAM_MODEL_DIR)`);
}

// ---------------------------------------------------------------------------------------------------------------
// Cleanup: the server is stopped and the temporary folder removed on success, failure, and Ctrl-C.

const state = { tmp: null, home: null, install: null, socket: null, server: null, aborted: false, cleaning: null };

const isAlive = (pid) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // A child that exited but is not yet reaped still answers kill(0).
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
};

/** Only servers of this run's home are ours to stop: the one we started, or one a hook started there. */
const isOurs = (pid) => {
  if (pid === state.server?.pid) return true;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(state.tmp);
  } catch {
    return !existsSync('/proc'); // no /proc: trust the pid the home's own server.json names
  }
};

function serverPids() {
  const pids = new Set();
  if (state.server?.pid) pids.add(state.server.pid);
  try {
    const info = JSON.parse(readFileSync(join(state.home, 'run', 'server.json'), 'utf8'));
    if (Number.isInteger(info.pid)) pids.add(info.pid);
  } catch {
    // No server wrote its description (or it removed it when it stopped).
  }
  return [...pids].filter((pid) => isAlive(pid) && isOurs(pid));
}

async function waitGone(pids, ms) {
  const until = Date.now() + ms;
  while (pids.some(isAlive) && Date.now() < until) await sleep(50);
  return pids.filter(isAlive);
}

/** Stops the home's server: politely over the socket, then SIGTERM, then SIGKILL. Returns what was left running. */
async function stopServer() {
  if (!state.home) return [];
  let pids = serverPids();
  if (pids.length === 0) return [];
  await ask({ v: 1, op: 'stop' }, 1_000);
  pids = await waitGone(pids, 6_000);
  for (const pid of pids) process.kill(pid, 'SIGTERM');
  pids = await waitGone(pids, 3_000);
  for (const pid of pids) process.kill(pid, 'SIGKILL');
  return waitGone(pids, 1_000);
}

function cleanup() {
  state.cleaning ??= (async () => {
    try {
      const left = await stopServer();
      if (left.length > 0) progress(`could not stop server pid(s) ${left.join(', ')}`);
    } catch (error) {
      progress(`stopping the server failed: ${error.message}`);
    }
    if (state.tmp && KEEP) progress(`kept ${state.tmp}`);
    else if (state.tmp) rmSync(state.tmp, { recursive: true, force: true });
  })();
  return state.cleaning;
}

process.on('exit', () => {
  // Last resort when cleanup could not run to its end (a second signal, a crash in cleanup itself).
  if (!state.tmp) return;
  for (const pid of serverPids()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  if (!KEEP) rmSync(state.tmp, { recursive: true, force: true });
});
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  process.on(signal, () => {
    if (state.aborted) process.exit(code);
    state.aborted = true;
    progress(`${signal}: stopping the server and removing the temporary folder`);
    void cleanup().finally(() => process.exit(code));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers

/** One request line to the home's server, one JSON line back; null when nothing answers in time. */
function ask(request, timeoutMs = 2_000) {
  return new Promise((resolve) => {
    let buffer = '';
    let settled = false;
    const connection = createConnection(state.socket);
    const finish = (value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      connection.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => finish(null), timeoutMs);
    connection.setEncoding('utf8');
    connection.on('connect', () => connection.write(`${JSON.stringify(request)}\n`));
    connection.on('data', (chunk) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      try {
        finish(JSON.parse(buffer.slice(0, end)));
      } catch {
        finish(null);
      }
    });
    connection.on('error', () => finish(null));
    connection.on('close', () => finish(null));
  });
}

/** The server's socket for a home: the rule of src/server/address.ts (long paths move to the temp folder). */
function socketPath(home) {
  const socket = join(home, 'run', 'server.sock');
  if (Buffer.byteLength(socket) <= 100) return socket;
  const key = createHash('sha256').update(home).digest('hex').slice(0, 16);
  return join(os.tmpdir(), `engram-${process.getuid?.() ?? 0}-${key}.sock`);
}

const shellQuote = (text) => `'${text.replaceAll("'", "'\\''")}'`;

function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const index = (p / 100) * (sorted.length - 1);
  const low = Math.floor(index);
  const high = Math.ceil(index);
  return sorted[low] + (sorted[high] - sorted[low]) * (index - low);
}
const round = (value, digits = 1) => (value === null || value === undefined ? null : Math.round(value * 10 ** digits) / 10 ** digits);

/** Reads the lines appended to a JSON-lines log since the last call (a rotated log is read from its start). */
function logReader(file) {
  let offset = 0;
  return () => {
    let size;
    try {
      size = statSync(file).size;
    } catch {
      return [];
    }
    if (size < offset) offset = 0;
    if (size === offset) return [];
    const buffer = Buffer.alloc(size - offset);
    const fd = openSync(file, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, offset);
    } finally {
      closeSync(fd);
    }
    const end = buffer.lastIndexOf(0x0a);
    if (end < 0) return [];
    offset += end + 1;
    return buffer
      .subarray(0, end)
      .toString('utf8')
      .split('\n')
      .flatMap((line) => {
        try {
          return [JSON.parse(line)];
        } catch {
          return [];
        }
      });
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The benchmark

async function main() {
  const started = performance.now();
  const loadStart = os.loadavg();

  // One temporary folder: the copied install, the Engram home, the user's home, the project.
  const tmp = mkdtempSync(join(os.tmpdir(), 'engram-bench-hooks-'));
  state.tmp = tmp;
  const install = join(tmp, 'install');
  const home = join(tmp, 'engram');
  const user = join(tmp, 'user');
  const cwd = join(tmp, input.PROJECT);
  state.install = install;
  state.home = home;
  state.socket = socketPath(home);
  mkdirSync(join(install, 'hooks'), { recursive: true });
  mkdirSync(join(install, 'scripts'), { recursive: true });
  for (const file of ['run.cjs', 'run.sh']) cpSync(join(root, 'hooks', file), join(install, 'hooks', file));
  for (const file of ['install-state.mjs', 'home.mjs', 'home.cjs']) cpSync(join(root, 'scripts', file), join(install, 'scripts', file));
  for (const file of ['package.json', 'package-lock.json']) cpSync(join(root, file), join(install, file));
  // Where dist/ and node_modules/ are: the install folder itself, or a runtime folder as the bootstrap leaves it.
  let runtimeDir = install;
  const pluginData = join(tmp, 'plugin-data');
  if (LAYOUT === 'plugin') {
    const states = await import(pathToFileURL(join(install, 'scripts', 'install-state.mjs')).href);
    const key = states.runtimeKey(install);
    runtimeDir = join(pluginData, 'runtime', key);
    mkdirSync(runtimeDir, { recursive: true });
    writeFileSync(join(runtimeDir, states.RUNTIME_STAMP), JSON.stringify({ key }));
    states.linkRuntime(install, runtimeDir, key, home, { CLAUDE_PLUGIN_DATA: pluginData });
  }
  cpSync(join(root, 'dist'), join(runtimeDir, 'dist'), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(runtimeDir, 'node_modules'), 'dir');
  mkdirSync(join(user, '.claude'), { recursive: true });
  mkdirSync(join(home, 'logs'), { recursive: true, mode: 0o700 });
  const git = input.makeProject(cwd);
  // The module-loading floor: an entry the launcher does not know loads everything a hook the server answers loads
  // (hooks/run.cjs; before it, also dist/hooks/fast.cjs), reads stdin to its end and exits — all of a hook but the
  // mailbox and the answer.
  const MODULES_ENTRY = 'bench-modules';

  // The same `node` for every process, first on PATH as the agent's shell would find it.
  const baseEnv = {
    PATH: [dirname(process.execPath), process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(delimiter),
    HOME: user,
    LANG: process.env.LANG ?? 'C.UTF-8',
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    ENGRAM_HOME: home,
    ENGRAM_MODEL_DIR: MODEL_DIR,
    ENGRAM_MODEL: MODEL,
    // Long enough for the whole run; short enough that a server orphaned by `kill -9` of this bench goes away.
    ENGRAM_SERVER_IDLE_MS: String(10 * 60_000),
    // The HTTP API on any free port: the user's own server (or a test's) may hold 7437.
    ENGRAM_PORT: '0',
  };
  // What Claude Code sets for a plugin's hooks (see ../shared/fixtures/hook-payloads/*/_env.*.txt).
  const hookEnv = {
    ...baseEnv,
    PWD: cwd,
    CLAUDE_PROJECT_DIR: cwd,
    CLAUDE_PLUGIN_ROOT: install,
    ...(LAYOUT === 'plugin' ? { CLAUDE_PLUGIN_DATA: pluginData } : {}),
    CLAUDE_CODE_ENTRYPOINT: 'cli',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  const fallbackEnv = { ...hookEnv, ENGRAM_SERVER: 'off' };
  for (const env of [baseEnv, hookEnv, fallbackEnv]) for (const name of NOT_INHERITED) delete env[name];
  const inheritedHere = NOT_INHERITED.filter((name) => process.env[name] !== undefined);
  progress(
    `measuring without ${NOT_INHERITED.join(' and ')}` +
      (inheritedHere.length ? ` (set in this shell: ${inheritedHere.join(', ')}; not passed to any process the bench starts)` : ' (neither is set in this shell)'),
  );

  const engram = (argv) => {
    const result = spawnSync(process.execPath, [join(runtimeDir, 'dist', 'cli.mjs'), ...argv], {
      env: baseEnv,
      cwd,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      timeout: 15 * 60_000,
    });
    if (state.aborted || result.signal === 'SIGINT') throw new Error('interrupted');
    if (result.status !== 0) throw new Error(`engram ${argv.join(' ')} exited ${result.status}: ${(result.stderr || result.stdout).slice(-2_000)}`);
    return JSON.parse(result.stdout);
  };
  const coverage = () => {
    const status = engram(['model', 'status']);
    const space = (status.vector_spaces ?? []).find((s) => String(s.model).endsWith(`:${MODEL}`) || s.model === MODEL);
    return { embedder: status.embedder, vectors: space?.vectors ?? 0, pending: space?.pending ?? null };
  };

  // 1. The store: 10,000 engrams, imported and embedded with the offline model.
  const corpus = `${input.corpusLines(root, ENGRAMS).join('\n')}\n`;
  const cacheKey = createHash('sha256').update(`${MODEL}\n${corpus}`).digest('hex').slice(0, 16);
  const cached = STORE_CACHE ? join(resolve(STORE_CACHE), cacheKey) : null;
  const STORE_FILES = ['engram.db', 'engram.db-wal', 'engram.db-shm'];
  let t = performance.now();
  let imported;
  if (cached && existsSync(join(cached, 'imported.json'))) {
    progress(`copying the store of ${ENGRAMS} engrams from ${cached}…`);
    for (const file of STORE_FILES) if (existsSync(join(cached, file))) cpSync(join(cached, file), join(home, file));
    imported = { ...JSON.parse(readFileSync(join(cached, 'imported.json'), 'utf8')), cached: true };
  } else {
    progress(`importing ${ENGRAMS} engrams (embedding with ${MODEL})…`);
    const corpusFile = join(tmp, 'corpus.jsonl');
    writeFileSync(corpusFile, corpus);
    imported = engram(['import', corpusFile]);
  }
  const importMs = performance.now() - t;
  let vectors = coverage();
  if (vectors.pending !== 0) {
    progress(`${vectors.pending} engrams lack vectors; running engram reindex…`);
    engram(['reindex']);
    vectors = coverage();
  }
  if (cached && !imported.cached) {
    // The CLI has exited, so the store is closed (checkpointed): its files copy as they are.
    mkdirSync(cached, { recursive: true });
    for (const file of STORE_FILES) if (existsSync(join(home, file))) cpSync(join(home, file), join(cached, file));
    writeFileSync(join(cached, 'imported.json'), JSON.stringify(imported));
  }
  progress(`${imported.cached ? 'copied' : 'imported'} ${imported.created} in ${(importMs / 1000).toFixed(1)} s; vectors ${vectors.vectors}, missing ${vectors.pending}`);

  // 2. The server, started as a hook would start it (detached, output to logs/server.out), then warm and hybrid.
  const out = openSync(join(home, 'logs', 'server.out'), 'a', 0o600);
  t = performance.now();
  state.server = spawn(process.execPath, [join(runtimeDir, 'dist', 'server.mjs')], {
    detached: true,
    stdio: ['ignore', out, out],
    env: hookEnv,
    cwd,
  });
  closeSync(out);
  state.server.on('error', () => {});
  state.server.unref();
  let ping = null;
  while (performance.now() - t < 180_000) {
    if (state.aborted) throw new Error('interrupted');
    ping = await ask({ v: 1, op: 'ping' }, 1_000);
    if (ping?.ok && ping.mode === 'hybrid') break;
    if (!isAlive(state.server.pid)) throw new Error(`the server exited; see ${join(home, 'logs')}`);
    await sleep(100);
  }
  if (!ping?.ok || ping.mode !== 'hybrid') throw new Error(`the server did not reach hybrid mode: ${JSON.stringify(ping)}`);
  const hybridMs = performance.now() - t;
  for (let waited = 0; (vectors = coverage()).pending !== 0 && waited < 120; waited++) await sleep(1_000);
  if (vectors.pending !== 0) throw new Error(`vectors still missing after 2 min: ${JSON.stringify(vectors)}`);
  const serverWarm = readFileSync(join(home, 'logs', 'server.log'), 'utf8')
    .split('\n')
    .flatMap((line) => (line.includes('"server warm"') ? [JSON.parse(line)] : []))
    .at(-1);
  progress(`server pid ${ping.pid} hybrid (${ping.model}) after ${Math.round(hybridMs)} ms; measuring ${RUNS} pairs per case…`);

  // 3. Timed runs.
  const hooksLog = logReader(join(home, 'logs', 'hooks.log'));
  const run = (command, stdin, env) => {
    const t0 = process.hrtime.bigint();
    const result = spawnSync('sh', ['-c', command], { input: stdin, env, cwd, encoding: 'utf8', timeout: 30_000, maxBuffer: 16 << 20 });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (state.aborted || result.signal === 'SIGINT') throw new Error('interrupted');
    // EPIPE: the process exited before taking all of its stdin (the bare `node -e ''` reads none); it ran all the same.
    if (result.error && !(result.error.code === 'EPIPE' && result.status !== null)) throw new Error(`${command}: ${result.error.message}`);
    return { ms, stdout: result.stdout, stderr: result.stderr, status: result.status };
  };
  // The command line hooks/hooks.json registers, verbatim: Claude Code hands it to `/bin/sh -c` with
  // CLAUDE_PLUGIN_ROOT in the environment (the shell expands it), the event JSON on a socket as stdin.
  const registered = JSON.parse(readFileSync(join(root, 'hooks', 'hooks.json'), 'utf8')).hooks;
  const hookCommand = (event) => {
    const command = registered[event]?.[0]?.hooks?.[0]?.command;
    if (typeof command !== 'string' || !/\/hooks\/run\.(?:cjs|sh)" /.test(command) || !command.endsWith(` ${ENTRIES[event]} --agent claude`)) {
      throw new Error(`hooks/hooks.json has no ${event} command for ${ENTRIES[event]}`);
    }
    return command;
  };
  const BARE = "node -e ''";
  // The node options hooks.json puts before the launcher (scripts/hook-registry.mjs HOOK_NODE_OPTIONS): the floors
  // run with them too, so that they split the hook's time, not the options' effect; the bare baseline stays plain.
  const hookNodeOptions = HOOK_NODE_OPTIONS.join(' ');
  const node = hookNodeOptions ? `node ${hookNodeOptions}` : 'node';

  const varied = {
    PreToolUse: (n) => input.preToolUse(cwd, user, n),
    UserPromptSubmit: ((next) => () => input.userPromptSubmit(cwd, user, next()))(input.promptSource(root)),
    SessionStart: () => input.sessionStart(cwd, user),
    PostToolUse: (n) => input.postToolUse(cwd, user, n),
    PostToolUseFailure: (n) => input.postToolUseFailure(cwd, user, n),
    Stop: () => input.stop(cwd, user),
    SessionEnd: () => input.sessionEnd(cwd, user),
  };
  // --repeat-payload: one call of each event, repeated (what a measurement that replays one payload sees: after the
  // first run the session has been shown its engrams, so the hook answers with nothing).
  const repeated = Object.fromEntries(Object.entries(varied).map(([event, make]) => {
    const once = make(0);
    return [event, () => once];
  }));
  const payloads = REPEAT_PAYLOAD ? repeated : varied;

  /** `runs` pairs: the command, then the bare baseline with the same stdin. */
  async function series({ name, event = null, path = null, command, env, payload, target = null }) {
    for (let i = 0; i < WARMUP; i++) {
      const stdin = JSON.stringify(payload(-1 - i));
      run(command, stdin, env);
      run(BARE, stdin, env);
      await tick();
    }
    const pairs = [];
    for (let i = 0; i < RUNS; i++) {
      const stdin = JSON.stringify(payload(i));
      hooksLog();
      const hook = run(command, stdin, env);
      const bare = run(BARE, stdin, env);
      // Read after the bare run: the server writes a hook's log line just after sending its answer.
      const logged = hooksLog().filter((line) => line.msg === 'hook done' || line.msg === 'hook failed');
      let injected = false;
      let badOutput = false;
      if (hook.stdout.trim() !== '') {
        try {
          injected = typeof JSON.parse(hook.stdout).hookSpecificOutput?.additionalContext === 'string';
        } catch {
          badOutput = true;
        }
      }
      pairs.push({ hook: hook.ms, bare: bare.ms, logged, injected, badOutput, status: hook.status, stderr: hook.stderr.trim() });
      await tick();
    }
    const ratios = pairs.map((p) => p.hook / p.bare);
    const answeredBy = { server: 0, 'in-process': 0, unlogged: 0 };
    for (const pair of pairs) {
      const line = pair.logged.at(-1);
      if (!line) answeredBy.unlogged++;
      else answeredBy[line.path] = (answeredBy[line.path] ?? 0) + 1;
    }
    const handler = pairs.flatMap((p) => p.logged.filter((line) => typeof line.ms === 'number').map((line) => line.ms));
    const ratio = percentile(ratios, 50);
    const summary = {
      name,
      event,
      path,
      runs: RUNS,
      hook_ms: { p50: round(percentile(pairs.map((p) => p.hook), 50)), p95: round(percentile(pairs.map((p) => p.hook), 95)) },
      baseline_ms: { p50: round(percentile(pairs.map((p) => p.bare), 50)), p95: round(percentile(pairs.map((p) => p.bare), 95)) },
      ratio_median: round(ratio, 2),
      ratio_p95: round(percentile(ratios, 95), 2),
      extra_ms_median: round(percentile(pairs.map((p) => p.hook - p.bare), 50)),
      target,
      met: target === null ? null : ratio <= target,
      ...(event
        ? {
            answered_by: answeredBy,
            fell_back: path === 'server' ? pairs.length - answeredBy.server : null,
            handler_ms: { p50: round(percentile(handler, 50)), p95: round(percentile(handler, 95)) },
            injected_runs: pairs.filter((p) => p.injected).length,
            failed_runs: pairs.filter((p) => p.status !== 0 || p.badOutput || p.logged.some((line) => line.msg === 'hook failed')).length,
            stderr_runs: pairs.filter((p) => p.stderr !== '').length,
            first_stderr: pairs.find((p) => p.stderr !== '')?.stderr.slice(0, 300) ?? null,
          }
        : {}),
      samples: { hook_ms: pairs.map((p) => round(p.hook)), baseline_ms: pairs.map((p) => round(p.bare)) },
    };
    progress(
      `${name}: p50 ${summary.hook_ms.p50} ms vs ${summary.baseline_ms.p50} ms bare → ×${summary.ratio_median}` +
        (target ? ` (target ≤ ${target})` : ''),
    );
    return summary;
  }

  // Peak RSS of one process, by GNU time when it works here, else VmHWM read at exit by a preloaded probe.
  const gnuTime = existsSync('/usr/bin/time') && /RSS=\d+/.test(spawnSync('/usr/bin/time', ['-f', 'RSS=%M', 'true'], { encoding: 'utf8' }).stderr ?? '');
  const rssMethod = gnuTime ? '/usr/bin/time -f %M (maximum resident set size of the node process)' : existsSync('/proc/self/status') ? 'VmHWM from /proc/self/status at exit (node --import bench/hooks-rss.mjs)' : null;
  function peakRss(nodeArgs, stdin, env) {
    const samples = [];
    for (let i = 0; i < RSS_RUNS && rssMethod; i++) {
      const body = typeof stdin === 'function' ? stdin(i) : stdin;
      if (gnuTime) {
        const result = spawnSync('/usr/bin/time', ['-f', 'RSS=%M', process.execPath, ...nodeArgs], { input: body, env, cwd, encoding: 'utf8', timeout: 30_000 });
        const match = /RSS=(\d+)/.exec(result.stderr ?? '');
        if (match) samples.push(Number(match[1]));
      } else {
        const file = join(tmp, 'rss.txt');
        rmSync(file, { force: true });
        const probe = pathToFileURL(join(benchDir, 'hooks-rss.mjs')).href;
        spawnSync(process.execPath, ['--import', probe, ...nodeArgs], { input: body, env: { ...env, ENGRAM_BENCH_RSS_FILE: file }, cwd, timeout: 30_000 });
        if (existsSync(file)) samples.push(Number(readFileSync(file, 'utf8').trim().split('\n').at(-1)));
      }
    }
    return samples.length ? { p50: percentile(samples, 50), max: Math.max(...samples), samples } : null;
  }
  const hookArgs = (event) => [...(hookNodeOptions ? hookNodeOptions.split(' ') : []), join(install, 'hooks', 'run.cjs'), ENTRIES[event], '--agent', 'claude'];
  const rss = {};

  const floors = [];
  const cases = [];
  const sample = JSON.stringify(payloads.PreToolUse(0));
  floors.push(
    await series({
      name: 'floor: node reads stdin (CommonJS stream)',
      command: `${node} ${shellQuote(join(benchDir, 'hooks-stdin.cjs'))}`,
      env: hookEnv,
      payload: () => payloads.PreToolUse(0),
    }),
  );
  floors.push(
    await series({
      name: 'floor: node reads stdin (blocking reads)',
      command: `${node} ${shellQuote(join(benchDir, 'hooks-stdin-sync.cjs'))}`,
      env: hookEnv,
      payload: () => payloads.PreToolUse(0),
    }),
  );
  floors.push(
    await series({
      name: 'floor: stdin + mailbox ping',
      command: `${node} ${shellQuote(join(benchDir, 'hooks-mailbox-ping.cjs'))} ${shellQuote(join(home, 'run'))}`,
      env: hookEnv,
      payload: () => payloads.PreToolUse(0),
    }),
  );
  floors.push(
    await series({
      name: 'floor: stdin + hook modules',
      command: `${node} ${shellQuote(join(install, 'hooks', 'run.cjs'))} ${MODULES_ENTRY} --agent claude`,
      env: hookEnv,
      payload: () => payloads.PreToolUse(0),
    }),
  );
  for (const event of Object.keys(TARGETS)) {
    cases.push(await series({ name: `${event} (server)`, event, path: 'server', command: hookCommand(event), env: hookEnv, payload: payloads[event], target: TARGETS[event] }));
  }
  for (const event of OTHER_EVENTS) {
    cases.push(await series({ name: `${event} (server)`, event, path: 'server', command: hookCommand(event), env: hookEnv, payload: payloads[event] }));
  }
  for (const event of Object.keys(TARGETS)) rss[`${event} (server)`] = peakRss(hookArgs(event), () => JSON.stringify(payloads[event](0)), hookEnv);
  const pingAfter = await ask({ v: 1, op: 'ping' });

  // 4. The fallback path: no server at all.
  progress('stopping the server; measuring the fallback path (ENGRAM_SERVER=off)…');
  const left = await stopServer();
  if (left.length > 0) throw new Error(`the server did not stop: ${left.join(', ')}`);
  for (const event of Object.keys(TARGETS)) {
    cases.push(await series({ name: `${event} (fallback)`, event, path: 'in-process', command: hookCommand(event), env: fallbackEnv, payload: payloads[event] }));
  }
  for (const event of Object.keys(TARGETS)) rss[`${event} (fallback)`] = peakRss(hookArgs(event), () => JSON.stringify(payloads[event](0)), fallbackEnv);
  rss['floor: node -e \'\''] = peakRss(['-e', ''], sample, hookEnv);
  rss['floor: node reads stdin'] = peakRss([join(benchDir, 'hooks-stdin-sync.cjs')], sample, hookEnv);
  const strayServer = await ask({ v: 1, op: 'ping' }, 500);

  // Where the extra milliseconds of a server-path hook go, from the floors measured in the same run (medians of
  // different series, so the parts need not add up exactly; "rest" is what is left: the hook's own code around the
  // socket call, writing the answer, exiting).
  const floorExtra = (name) => floors.find((floor) => floor.name === name)?.extra_ms_median ?? null;
  // The hook reads stdin with blocking reads (src/hooks/fast.ts), so that is its stdin floor; the mailbox ping and
  // the module floors read it the same way.
  const stdinMs = floorExtra('floor: node reads stdin (blocking reads)');
  const pingMs = floorExtra('floor: stdin + mailbox ping');
  const modulesMs = floorExtra('floor: stdin + hook modules');
  const breakdown = cases
    .filter((c) => c.path === 'server')
    .map((c) => {
      const parts = {
        node_reads_stdin: stdinMs,
        hook_modules: modulesMs === null ? null : round(modulesMs - stdinMs),
        mailbox_round_trip: round(pingMs - stdinMs),
        server_handler: c.handler_ms.p50,
      };
      const known = Object.values(parts).reduce((sum, value) => sum + (value ?? 0), 0);
      return { name: c.name, extra_ms: c.extra_ms_median, ...parts, rest: round(c.extra_ms_median - known) };
    });

  return {
    bench: 'hooks',
    engrams: ENGRAMS,
    runs: RUNS,
    warmup_pairs: WARMUP,
    baseline: "sh -c \"node -e ''\" with the same stdin, run right after each measured process",
    ratio: 'median of per-pair ratios (process / baseline)',
    machine: {
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? null,
      loadavg_start: loadStart.map((x) => round(x, 2)),
      loadavg_end: os.loadavg().map((x) => round(x, 2)),
    },
    setup: {
      layout: LAYOUT,
      payloads: REPEAT_PAYLOAD ? 'one call per event, repeated' : 'a new session and target every run',
      model: MODEL,
      import: { ms: Math.round(importMs), created: imported.created, duplicates: imported.duplicates, vectors: imported.vectors ?? null, from_cache: Boolean(imported.cached) },
      vectors,
      project_is_git_repo: git,
      server: {
        pid: ping.pid,
        mode: ping.mode,
        model: ping.model,
        hybrid_after_ms: Math.round(hybridMs),
        warm_ms: serverWarm?.ms ?? null,
        requests_during_bench: pingAfter?.requests ?? null,
      },
      fallback_started_a_server: Boolean(strayServer?.ok),
      environment: {
        built_from_scratch: Object.keys(hookEnv),
        not_inherited: NOT_INHERITED,
        set_in_bench_shell: inheritedHere,
        hook_node_options: hookNodeOptions || null,
      },
    },
    floors,
    cases,
    breakdown,
    peak_rss_kb: { method: rssMethod, runs: RSS_RUNS, ...Object.fromEntries(Object.entries(rss).map(([k, v]) => [k, v && { p50: v.p50, max: v.max }])) },
    targets_met: cases.filter((c) => c.target !== null && c.met).length,
    targets: cases.filter((c) => c.target !== null).length,
    total_s: Math.round((performance.now() - started) / 1000),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Report

function table(rows) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  const line = (row) => row.map((cell, column) => (column === 0 ? String(cell).padEnd(widths[column]) : String(cell).padStart(widths[column]))).join('  ');
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

function render(result) {
  const ms = (value) => (value === null || value === undefined ? '—' : value.toFixed(1));
  const rows = [['case', 'p50 ms', 'p95 ms', 'bare p50', 'bare p95', '+ms p50', 'ratio', 'target', 'met', 'answered by', 'handler p50/p95 ms', 'injected']];
  for (const c of [...result.floors, ...result.cases]) {
    const answered = c.answered_by
      ? Object.entries(c.answered_by)
          .filter(([, n]) => n > 0)
          .map(([path, n]) => `${path} ${n}/${c.runs}`)
          .join(', ')
      : '—';
    rows.push([
      c.name,
      ms(c.hook_ms.p50),
      ms(c.hook_ms.p95),
      ms(c.baseline_ms.p50),
      ms(c.baseline_ms.p95),
      ms(c.extra_ms_median),
      `×${c.ratio_median.toFixed(2)}`,
      c.target ? `≤ ${c.target}` : '—',
      c.met === null ? '—' : c.met ? 'yes' : 'NO',
      answered,
      c.handler_ms ? `${ms(c.handler_ms.p50)} / ${ms(c.handler_ms.p95)}` : '—',
      c.injected_runs === undefined ? '—' : `${c.injected_runs}/${c.runs}`,
    ]);
  }
  const { machine, setup } = result;
  const lines = [
    `Engram hook latency — ${result.engrams.toLocaleString('en')} engrams, ${result.runs} paired runs per case (${result.warmup_pairs} warm-up pairs unmeasured)`,
    `node ${machine.node} ${machine.platform}, ${machine.cpus} CPUs (${machine.cpu_model}), load ${machine.loadavg_start.join(' ')} → ${machine.loadavg_end.join(' ')}`,
    `layout: ${setup.layout === 'plugin' ? 'plugin (launcher in the install folder, dist/ and node_modules/ in a runtime folder)' : 'in place (a source checkout built by ./install.sh)'}; payloads: ${setup.payloads}`,
    `store: ${setup.import.created} engrams ${setup.import.from_cache ? 'copied from --store-cache' : 'imported'} in ${(setup.import.ms / 1000).toFixed(1)} s, ${setup.vectors.vectors} vectors (${setup.model}), ${setup.vectors.pending} missing; ` +
      `server ${setup.server.mode} (${setup.server.model}), warm in ${setup.server.warm_ms} ms`,
    `Each process runs as sh -c '…' with the event JSON on stdin, followed by a bare sh -c "node -e ''" with the same stdin;`,
    `environment built from scratch, without ${setup.environment.not_inherited.join(' and ')}` +
      (setup.environment.set_in_bench_shell.length ? ` (set in the bench's shell: ${setup.environment.set_in_bench_shell.join(', ')}; not passed on)` : '') +
      `; hook node options: ${setup.environment.hook_node_options ?? 'none'} (the floors use them too; the baseline is plain node -e '')`,
    `ratio = median of the per-pair ratios; +ms = median of the per-pair differences; handler = the hook's own ms from hooks.log.`,
    '',
    table(rows),
    '',
  ];
  if (result.breakdown.length > 0) {
    lines.push('Where the extra ms of a server-path hook go (medians, approximate: floors and handler are separate series)', '');
    lines.push(
      table([
        ['case', '+ms total', 'node reads stdin', 'hook modules', 'mailbox round trip', 'server handler', 'rest'],
        ...result.breakdown.map((b) => [b.name, ms(b.extra_ms), ms(b.node_reads_stdin), ms(b.hook_modules), ms(b.mailbox_round_trip), ms(b.server_handler), ms(b.rest)]),
      ]),
      '',
    );
  }
  const rss = Object.entries(result.peak_rss_kb).filter(([key]) => !['method', 'runs'].includes(key));
  if (result.peak_rss_kb.method) {
    lines.push(`Peak RSS (KB; ${result.peak_rss_kb.method}; ${result.peak_rss_kb.runs} runs each)`, '');
    lines.push(table([['process', 'p50 KB', 'max KB'], ...rss.map(([key, v]) => [key, v ? Math.round(v.p50) : '—', v ? v.max : '—'])]), '');
  } else {
    lines.push('Peak RSS: not measured (no GNU time and no /proc on this machine)', '');
  }
  const notes = [];
  for (const c of result.cases) {
    if (c.path === 'server' && c.fell_back > 0) notes.push(`${c.name}: ${c.fell_back} of ${c.runs} calls were NOT answered by the server (${JSON.stringify(c.answered_by)})`);
    if (c.failed_runs > 0) notes.push(`${c.name}: ${c.failed_runs} failed runs (non-zero exit, invalid output or "hook failed" in hooks.log)`);
    if (c.stderr_runs > 0) notes.push(`${c.name}: ${c.stderr_runs} runs wrote to stderr, e.g. ${JSON.stringify(c.first_stderr)}`);
  }
  if (setup.fallback_started_a_server) notes.push('a server was running after the fallback runs (ENGRAM_SERVER=off should never start one)');
  if (machine.loadavg_start[0] > machine.cpus) notes.push(`the machine was busy when the bench started (load ${machine.loadavg_start[0]} on ${machine.cpus} CPUs): timings are noisier than usual`);
  lines.push(`targets met: ${result.targets_met}/${result.targets} (server path); total ${result.total_s} s`);
  for (const note of notes) lines.push(`note: ${note}`);
  return `${lines.join('\n')}\n`;
}

let exitCode = 0;
try {
  const result = await main();
  if (!JSON_ONLY) process.stdout.write(`${render(result)}\n`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  if (!state.aborted && error?.message !== 'interrupted') progress(`failed: ${error?.stack ?? error}`);
  exitCode = state.aborted || error?.message === 'interrupted' ? 130 : 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
