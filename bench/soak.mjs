#!/usr/bin/env node
// Soak: concurrent simulated agent sessions against one Engram home for a fixed time, with the background server
// killed (SIGKILL) at random moments, then an audit of what the agents saw and what was kept.
//
//   node bench/soak.mjs [--minutes 30] [--sessions 4] [--kills 5] [--think-ms 600] [--seed 1] [--keep] [--json]
//   [--memory-every-s 15] [--heap-snapshots 12,28] [--heap-dir DIR]
//
// Each simulated session is Claude Code as the hooks see it: the hook commands of hooks/hooks.json run through
// `sh -c` with the event's JSON on stdin and the agent's time limit (plugin.json's timeouts; SessionEnd 1.5 s), and a
// real transcript file growing under $HOME/.claude/projects/ (prompts, answers, tool calls and results) for the
// session-end job to record as tapes. A session is SessionStart, 3–6 turns of UserPromptSubmit → 1–3 tool calls
// (PreToolUse, PostToolUse) → Stop, then SessionEnd; prompts are the labelled questions of fixtures/eval, whose
// lessons are the store, so engrams are shown. Evaluation and extraction call an OpenAI-compatible model served by
// this script on 127.0.0.1 (one answer in ten is unusable, to exercise retries). The server is killed --kills times at
// random moments in the first third of the run, so the rest of it shows whether its memory is stable.
//
// Printed figures (the targets of issue 19): hook errors seen by the agent (a non-zero exit, a timeout, output that is
// not the contract's JSON, anything on stderr) — target 0; lost writes (every prompt, tool call and shown engram the
// hooks reported, and a tape for every ended session, found in the store and the tapes folder afterwards) — target 0;
// PRAGMA integrity_check — ok; the server's RSS over time, and its growth over the last 20 minutes (the last two
// thirds of a shorter run) — target ≤ 10 %, judged on the Theil–Sen trend of the window's samples, with the raw first
// → last sample and the medians of its first and last 3 minutes beside it (bench/memory-growth.mjs says why). The
// server samples its own memory (server/memory-probe.ts: heapUsed, heapTotal, external, anonymous and file-backed RSS,
// V8's spaces), printed the same way; --heap-snapshots asks it for V8 heap snapshots (compare them with
// bench/heap-diff.mjs; a snapshot costs the process ~150 MB of RSS it keeps, so never in a run whose RSS is judged).
// Also: hook latency per event, which path answered, why hooks fell back, how long the server took to come back after
// each kill, jobs done and failed.
//
// Loopback only; everything lives in one temporary folder (removed unless --keep), the server is stopped and every
// process of the run's home killed at the end, on failure and on Ctrl-C; a hard deadline of the run time plus 10
// minutes ends it whatever happens. CPU-heavy: about one core while it runs.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { createConnection } from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hookCommand } from '../scripts/hook-registry.mjs';
import { growth } from './memory-growth.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const number = (name, fallback, min) => {
  const value = Number(option(name, String(fallback)));
  if (!Number.isFinite(value) || value < min) fail(`${name} wants a number ≥ ${min}`);
  return value;
};
function fail(message) {
  process.stderr.write(`bench:soak: ${message}\n`);
  process.exit(2);
}
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write('usage: node bench/soak.mjs [--minutes 30] [--sessions 4] [--kills 5] [--think-ms 600] [--seed 1] [--keep] [--json] [--memory-every-s 15] [--heap-snapshots MIN,MIN] [--heap-dir DIR]\n');
  process.exit(0);
}
const MINUTES = number('--minutes', 30, 0.5);
const SESSIONS = number('--sessions', 4, 1);
const KILLS = number('--kills', 5, 0);
const THINK_MS = number('--think-ms', 600, 0);
const KEEP = args.includes('--keep');
/** How often the server samples its own memory (ENGRAM_MEMORY_PROBE_MS, server/memory-probe.ts). */
const MEMORY_EVERY_S = number('--memory-every-s', 15, 1);
/** Minutes of the run at which the server writes a heap snapshot (SIGUSR2), e.g. `--heap-snapshots 12,28`. */
const HEAP_SNAPSHOTS = (option('--heap-snapshots', '') || '').split(',').filter(Boolean).map(Number);
const HEAP_DIR = option('--heap-dir', join(os.tmpdir(), `engram-soak-heaps-${process.pid}`));
if (HEAP_SNAPSHOTS.some((m) => !Number.isFinite(m) || m < 0)) fail('--heap-snapshots wants minutes, comma-separated');
const JSON_ONLY = args.includes('--json');
const RUN_MS = MINUTES * 60_000;
/** After the run: time for the last sessions to end and the server to run their jobs. */
const DRAIN_MS = 5 * 60_000;
const HARD_DEADLINE_MS = RUN_MS + 10 * 60_000;
/** The agent's time limit per hook, from plugin.json; Claude Code gives SessionEnd 1.5 s in all. */
const plugin = JSON.parse(readFileSync(join(root, 'plugin.json'), 'utf8'));
const LIMIT_MS = Object.fromEntries(plugin.hooks.map((hook) => [hook.event, hook.event === 'SessionEnd' ? 1_500 : hook.timeout * 1000]));
const ENTRY = Object.fromEntries(plugin.hooks.map((hook) => [hook.event, hook.entry]));

let seed = number('--seed', 1, 0) | 0 || 1;
const random = () => {
  seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
  return ((seed >>> 0) % 1_000_000) / 1_000_000;
};
const pick = (items) => items[Math.floor(random() * items.length)];
const between = (low, high) => low + Math.floor(random() * (high - low + 1));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const progress = (message) => {
  if (!JSON_ONLY) process.stderr.write(`[bench:soak ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
};
for (const file of ['dist/hooks/fast.cjs', 'dist/server.mjs', 'dist/cli.mjs', 'node_modules/better-sqlite3/build/Release/better_sqlite3.node']) {
  if (!existsSync(join(root, file))) fail(`missing ${file}: run npm ci && npm run build first`);
}

// ---------------------------------------------------------------------------------------------------------------
// The temporary world: an install (built in place), the Engram home, the user's home with Claude Code's folders, the
// project, and a model to judge and extract.

const tmp = mkdtempSync(join(os.tmpdir(), 'engram-soak-'));
const install = join(tmp, 'install');
const home = join(tmp, 'engram');
const user = join(tmp, 'user');
const project = join(tmp, 'shop');
const transcripts = join(user, '.claude', 'projects', project.replace(/[^A-Za-z0-9]/g, '-'));
const state = { llm: null, aborted: false, cleaned: false };

function homeProcesses() {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`ENGRAM_HOME=${home}`)) found.push(pid);
    } catch {
      // Gone, or not ours.
    }
  }
  return found;
}

function serverInfo() {
  try {
    return JSON.parse(readFileSync(join(home, 'run', 'server.json'), 'utf8'));
  } catch {
    return null;
  }
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** True when the home's server is up: its description names a live process whose socket accepts a connection. */
function serverUp() {
  const info = serverInfo();
  if (!info || !alive(info.pid)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const connection = createConnection(info.socket);
    const done = (up) => {
      connection.destroy();
      resolve(up);
    };
    connection.on('connect', () => done(true));
    connection.on('error', () => done(false));
  });
}

async function cleanup() {
  if (state.cleaned) return;
  state.cleaned = true;
  const info = serverInfo();
  if (info && alive(info.pid)) process.kill(info.pid, 'SIGTERM'); // it lets a running job finish its step, then exits
  const until = Date.now() + 8_000;
  while (homeProcesses().length > 0 && Date.now() < until) await sleep(200);
  for (const pid of homeProcesses()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  state.llm?.close();
  if (HEAP_SNAPSHOTS.length > 0) {
    // The snapshots and the memory samples outlive the run's folder.
    mkdirSync(HEAP_DIR, { recursive: true });
    for (const name of existsSync(join(home, 'logs')) ? readdirSync(join(home, 'logs')) : []) {
      if (name.endsWith('.heapsnapshot') || name === 'memory.jsonl') cpSync(join(home, 'logs', name), join(HEAP_DIR, name));
    }
    progress(`heap snapshots and memory samples in ${HEAP_DIR}`);
  }
  if (KEEP) progress(`kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    state.aborted = true;
    progress(`${signal}: stopping`);
    void cleanup().finally(() => process.exit(130));
  });
}
const hardStop = setTimeout(() => {
  progress('hard deadline reached: stopping');
  state.aborted = true;
  void cleanup().finally(() => process.exit(3));
}, HARD_DEADLINE_MS);
hardStop.unref();

/** The judge: evaluation answers a score (one in ten unusable), extraction finds no lesson. Loopback only. */
async function startModel() {
  let calls = 0;
  let unusable = 0;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      calls++;
      let content = '{"score": 1, "evidence": ""}';
      try {
        const messages = JSON.parse(body).messages ?? [];
        if (JSON.stringify(messages).includes('"engrams"')) content = '{"engrams": []}';
        else if (random() < 0.1) {
          unusable++;
          content = 'It probably helped, hard to say.';
        }
      } catch {
        // Answer anyway.
      }
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          id: `soak-${calls}`,
          object: 'chat.completion',
          model: 'soak-judge',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 200, completion_tokens: 20, total_tokens: 220 },
        }),
      );
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: server.address().port, close: () => server.close(), stats: () => ({ calls, unusable }) };
}

// ---------------------------------------------------------------------------------------------------------------
// One simulated agent session.

const lessons = readFileSync(join(root, 'fixtures', 'eval', 'memories.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => {
  const { text, category, tags } = JSON.parse(line);
  return { text, category, tags };
});
const questions = ['queries-dev.jsonl', 'queries-test.jsonl'].flatMap((file) =>
  readFileSync(join(root, 'fixtures', 'eval', file), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line).q),
);
const TOOLS = [
  () => ({ tool: 'Bash', input: { command: pick(['git status', 'npm test', 'git log -1', 'ls src', 'docker compose ps']), description: 'check' }, output: 'ok\n' }),
  () => ({ tool: 'Read', input: { file_path: join(project, 'README.md') }, output: '     1\t# shop\n' }),
  () => ({ tool: 'Grep', input: { pattern: pick(['retry', 'timeout', 'cache', 'migration']), path: project }, output: 'src/app.ts\n' }),
];

const results = {
  hooks: [], // { event, ms, ok, problem, injected: number[] }
  expected: { prompts: [], tools: [], shown: [], ended: [] },
  kills: [], // { at_s, pid, back_after_ms }
  rss: [], // { t_s, pid, rss_kb }
  snapshots: [], // { at_s, pid, file }
};

const quote = (text) => `'${text.replaceAll("'", "'\\''")}'`;
const hookEnv = {
  PATH: process.env.PATH,
  HOME: user,
  ENGRAM_HOME: home,
  CLAUDE_PROJECT_DIR: project,
  CLAUDE_PLUGIN_ROOT: install,
  LANG: 'C.UTF-8',
  // The HTTP API on any free port: the user's own server (or a test's) may hold 7437.
  ENGRAM_PORT: '0',
  // The server appends process.memoryUsage() to logs/memory.jsonl this often and writes a heap snapshot on SIGUSR2.
  ENGRAM_MEMORY_PROBE_MS: String(MEMORY_EVERY_S * 1000),
};

/** Runs one hook as the agent does; records what the agent would have seen. */
function runHook(event, payload) {
  return new Promise((resolve) => {
    const started = performance.now();
    // The registered command line (scripts/hook-registry.mjs), with this install's folder.
    const child = spawn('sh', ['-c', hookCommand(install, ENTRY[event], 'claude')], {
      env: hookEnv,
      cwd: project,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, LIMIT_MS[event]);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      let problem = null;
      let injected = [];
      if (timedOut) problem = `timed out after ${LIMIT_MS[event]} ms`;
      else if (code !== 0) problem = `exit ${code ?? signal}`;
      else if (stderr.trim() !== '') problem = `stderr: ${stderr.trim().slice(0, 200)}`;
      else if (stdout !== '') {
        try {
          const output = JSON.parse(stdout);
          const specific = output.hookSpecificOutput;
          if (specific && specific.hookEventName !== event) problem = `output for ${specific.hookEventName}`;
          injected = [...String(specific?.additionalContext ?? '').matchAll(/EG#(\d+)/g)].map((m) => Number(m[1]));
        } catch {
          problem = `stdout is not JSON: ${stdout.slice(0, 200)}`;
        }
      }
      results.hooks.push({ event, ms, ok: problem === null, problem, injected });
      resolve({ injected });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

async function simulateSession(worker) {
  const sessionId = randomUUID();
  const transcript = join(transcripts, `${sessionId}.jsonl`);
  let parent = null;
  const line = (record) => {
    const uuid = randomUUID();
    appendFileSync(
      transcript,
      `${JSON.stringify({ parentUuid: parent, isSidechain: false, userType: 'external', cwd: project, sessionId, version: '2.1.197', gitBranch: 'main', uuid, timestamp: new Date().toISOString(), ...record })}\n`,
    );
    parent = uuid;
  };
  const common = { session_id: sessionId, transcript_path: transcript, cwd: project, permission_mode: 'default' };
  const think = () => sleep(between(Math.round(THINK_MS / 3), Math.round((THINK_MS * 5) / 3)));
  const shown = (event, injected) => {
    for (const id of injected) results.expected.shown.push({ session: sessionId, engram: id, event });
  };

  line({ type: 'system', subtype: 'session_start', content: 'startup' });
  shown('SessionStart', (await runHook('SessionStart', { ...common, hook_event_name: 'SessionStart', source: 'startup' })).injected);
  const turns = between(3, 6);
  for (let turn = 0; turn < turns; turn++) {
    const prompt = `${pick(questions)} (worker ${worker}, turn ${turn + 1})`;
    line({ type: 'user', message: { role: 'user', content: prompt } });
    results.expected.prompts.push({ session: sessionId, prompt });
    shown('UserPromptSubmit', (await runHook('UserPromptSubmit', { ...common, hook_event_name: 'UserPromptSubmit', prompt })).injected);
    await think();
    for (let call = between(1, 3); call > 0; call--) {
      const { tool, input, output } = pick(TOOLS)();
      const toolUseId = `toolu_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
      const payload = { ...common, tool_name: tool, tool_input: input, tool_use_id: toolUseId };
      shown('PreToolUse', (await runHook('PreToolUse', { ...payload, hook_event_name: 'PreToolUse' })).injected);
      line({ type: 'assistant', message: { id: `msg_${randomUUID()}`, role: 'assistant', model: 'claude-opus-4-8', content: [{ type: 'tool_use', id: toolUseId, name: tool, input }] } });
      await sleep(between(20, 200));
      line({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: output }] }, toolUseResult: { stdout: output, stderr: '', interrupted: false } });
      await runHook('PostToolUse', { ...payload, hook_event_name: 'PostToolUse', tool_response: { stdout: output, stderr: '', interrupted: false } });
      results.expected.tools.push({ session: sessionId, tool_use_id: toolUseId });
      await think();
    }
    const answer = `Done with turn ${turn + 1}: checked it and it works.`;
    line({ type: 'assistant', message: { id: `msg_${randomUUID()}`, role: 'assistant', model: 'claude-opus-4-8', content: [{ type: 'text', text: answer }] } });
    await runHook('Stop', { ...common, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: answer });
    await think();
  }
  await runHook('SessionEnd', { ...common, hook_event_name: 'SessionEnd', reason: 'other' });
  results.expected.ended.push(sessionId);
}

// ---------------------------------------------------------------------------------------------------------------
// The run.

function cli(argv, extraEnv = {}) {
  const result = spawnSync(process.execPath, [join(install, 'dist', 'cli.mjs'), ...argv], {
    env: { ...hookEnv, ...extraEnv },
    cwd: project,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    timeout: 10 * 60_000,
  });
  if (result.status !== 0) throw new Error(`engram ${argv.join(' ')} exited ${result.status}: ${(result.stderr || result.stdout).slice(-1000)}`);
  return JSON.parse(result.stdout);
}

/** The server's own memory samples (logs/memory.jsonl), every server of the run. */
function memorySamples() {
  try {
    return readFileSync(join(home, 'logs', 'memory.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}

function readRss(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

const median = (values) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const percentile = (values, p) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const round = (value, digits = 1) => (value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits);
const roundFigure = (figure) => Object.fromEntries(Object.entries(figure).map(([key, value]) => [key, typeof value === 'number' ? round(value) : value]));

async function main() {
  const loadStart = os.loadavg();
  // The install, built in place (as ./install.sh leaves a checkout); node_modules linked.
  mkdirSync(join(install, 'hooks'), { recursive: true });
  for (const file of ['run.cjs', 'run.sh']) cpSync(join(root, 'hooks', file), join(install, 'hooks', file));
  cpSync(join(root, 'scripts'), join(install, 'scripts'), { recursive: true });
  cpSync(join(root, 'dist'), join(install, 'dist'), { recursive: true });
  for (const file of ['package.json', 'package-lock.json', 'plugin.json']) cpSync(join(root, file), join(install, file));
  symlinkSync(join(root, 'node_modules'), join(install, 'node_modules'), 'dir');
  mkdirSync(transcripts, { recursive: true });
  mkdirSync(project, { recursive: true });
  spawnSync('git', ['init', '-q'], { cwd: project });
  writeFileSync(join(project, 'README.md'), '# shop\n');
  mkdirSync(home, { recursive: true, mode: 0o700 });

  state.llm = await startModel();
  // A real model when ../shared/models has one (what a user's server holds in memory), else the hashing one.
  const models = join(root, '..', 'shared', 'models');
  const model = existsSync(join(models, 'static-use-256', 'onnx', 'model_quantized.onnx')) ? 'static-use-256' : null;
  if (model) Object.assign(hookEnv, { ENGRAM_MODEL_DIR: models, ENGRAM_MODEL: model });
  else hookEnv.ENGRAM_EMBEDDER = 'test';
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({
      llm: {
        provider: 'openai',
        base_url: `http://127.0.0.1:${state.llm.port}/v1`,
        model: 'soak-judge',
        max_retries: 0,
        timeout_ms: 10_000,
        max_calls_per_day: 1_000_000,
        max_tokens_per_day: 1_000_000_000,
        max_calls_per_session: 1_000,
        max_tokens_per_session: 10_000_000,
      },
    }),
  );
  const corpus = join(tmp, 'lessons.jsonl');
  writeFileSync(corpus, `${lessons.map((lesson) => JSON.stringify(lesson)).join('\n')}\n`);
  const imported = cli(['import', corpus]);
  progress(`store: ${imported.created} lessons (${model ?? 'hashing embedder'}); judge on 127.0.0.1:${state.llm.port}; ${SESSIONS} sessions for ${MINUTES} min, ${KILLS} server kills`);

  const started = Date.now();
  const elapsed = () => (Date.now() - started) / 1000;
  const runEnds = started + RUN_MS;

  // RSS of the server, every 15 s.
  const sampler = setInterval(() => {
    const info = serverInfo();
    if (info) results.rss.push({ t_s: round(elapsed()), pid: info.pid, rss_kb: readRss(info.pid) });
  }, 15_000);

  // Kills at random moments in the first third of the run, at least 10 s apart — or, when the run is too short for
  // that (a 2-minute run has 34 s for 5 kills), as far apart as fits: a fixed 10 s made a short run draw forever.
  const killTimes = [];
  const window = RUN_MS * 0.28;
  const gap = Math.min(10_000, window / (KILLS * 1.5));
  while (killTimes.length < KILLS) {
    const at = RUN_MS * 0.05 + random() * window;
    if (killTimes.every((other) => Math.abs(other - at) >= gap)) killTimes.push(at);
  }
  killTimes.sort((a, b) => a - b);
  // Heap snapshots of the server at the asked minutes; only a server that runs the probe (it listens for SIGUSR2,
  // which would otherwise end it) is signalled.
  const snapshotter = (async () => {
    for (const minute of [...HEAP_SNAPSHOTS].sort((a, b) => a - b)) {
      await sleep(Math.max(0, started + minute * 60_000 - Date.now()));
      if (state.aborted || Date.now() > runEnds) return;
      const info = serverInfo();
      if (!info || !memorySamples().some((sample) => sample.pid === info.pid)) {
        progress(`no probed server for the heap snapshot at minute ${minute}`);
        continue;
      }
      process.kill(info.pid, 'SIGUSR2');
      results.snapshots.push({ at_s: round(elapsed()), pid: info.pid });
      progress(`heap snapshot asked of the server (pid ${info.pid})`);
    }
  })();
  const killer = (async () => {
    for (const at of killTimes) {
      await sleep(Math.max(0, started + at - Date.now()));
      if (state.aborted) return;
      const info = serverInfo();
      if (!info) {
        results.kills.push({ at_s: round(elapsed()), pid: null, back_after_ms: null, note: 'no server running at that moment' });
        continue;
      }
      try {
        process.kill(info.pid, 'SIGKILL');
      } catch {
        // Exited meanwhile.
      }
      const killedAt = Date.now();
      const kill = { at_s: round(elapsed()), pid: info.pid, back_after_ms: null };
      results.kills.push(kill);
      progress(`killed the server (pid ${info.pid})`);
      while (Date.now() - killedAt < 120_000 && !state.aborted) {
        const next = serverInfo();
        if (next && next.pid !== info.pid && (await serverUp())) {
          kill.back_after_ms = Date.now() - killedAt;
          break;
        }
        await sleep(100);
      }
    }
  })();

  // The sessions: each worker runs sessions back to back until the run time is over (the last one is finished).
  let sessionsRun = 0;
  const workers = Array.from({ length: SESSIONS }, async (_, worker) => {
    await sleep(worker * 500);
    while (Date.now() < runEnds && !state.aborted) {
      await simulateSession(worker);
      sessionsRun++;
    }
  });
  const ticker = setInterval(() => {
    const failed = results.hooks.filter((hook) => !hook.ok).length;
    progress(`${Math.round(elapsed())} s: ${sessionsRun} sessions, ${results.hooks.length} hooks, ${failed} seen failing, server ${serverInfo()?.pid ?? 'down'}`);
  }, 60_000);
  await Promise.all([...workers, killer, snapshotter]);
  clearInterval(ticker);
  const runSeconds = elapsed();

  // Let the server finish the ended sessions' jobs (SessionEnd woke it; it also sweeps for pending ones).
  progress(`run over after ${Math.round(runSeconds)} s (${sessionsRun} sessions); waiting for the session-end jobs`);
  const Database = createRequire(join(root, 'package.json'))('better-sqlite3');
  const openDb = () => new Database(join(home, 'engram.db'), { readonly: true, fileMustExist: true });
  const drainUntil = Date.now() + DRAIN_MS;
  let jobs = null;
  while (Date.now() < drainUntil && !state.aborted) {
    const db = openDb();
    try {
      jobs = Object.fromEntries(db.prepare('SELECT status, count(*) AS n FROM jobs GROUP BY status').all().map((row) => [row.status, row.n]));
    } finally {
      db.close();
    }
    if (!jobs.pending && !jobs.running) break;
    // A running server looks for pending jobs every few seconds; with none running, a hook starts one, as the agent's would.
    if (!(await serverUp())) await runHook('Stop', { session_id: 'soak-wake', transcript_path: join(tmp, 'none.jsonl'), cwd: project, hook_event_name: 'Stop', stop_hook_active: false });
    await sleep(2_000);
  }
  clearInterval(sampler);
  const drainSeconds = (Date.now() - started) / 1000 - runSeconds;

  // The audit.
  const db = openDb();
  let audit;
  try {
    const integrity = db.pragma('integrity_check', { simple: true });
    const has = (sql, ...params) => db.prepare(sql).get(...params) !== undefined;
    const lostPrompts = results.expected.prompts.filter((p) => !has('SELECT 1 FROM user_prompts WHERE session_id = ? AND content = ?', p.session, p.prompt));
    const lostTools = results.expected.tools.filter((t) => !has('SELECT 1 FROM tool_events WHERE session_id = ? AND tool_use_id = ?', t.session, t.tool_use_id));
    const lostShown = results.expected.shown.filter((s) => !has('SELECT 1 FROM session_shown_engrams WHERE session_id = ? AND engram_id = ?', s.session, s.engram));
    const jobRows = db.prepare("SELECT session_id, status, error FROM jobs WHERE kind = 'session-end'").all();
    const jobOf = new Map(jobRows.map((row) => [row.session_id, row]));
    const notDone = results.expected.ended.filter((id) => jobOf.get(id)?.status !== 'done');
    const evaluations = Object.fromEntries(db.prepare('SELECT eval_status AS status, count(*) AS n FROM session_audit GROUP BY eval_status').all().map((row) => [row.status, row.n]));
    audit = { integrity, lostPrompts, lostTools, lostShown, notDone, jobs: Object.fromEntries(['pending', 'running', 'done', 'failed'].map((s) => [s, jobRows.filter((row) => row.status === s).length])), evaluations, failedJobs: jobRows.filter((row) => row.status === 'failed').slice(0, 5) };
  } finally {
    db.close();
  }
  const taped = new Set(cli(['tapes']).map((tape) => tape.session.id));
  const untaped = results.expected.ended.filter((id) => !taped.has(id));

  // Why hooks answered by themselves, from hooks.log (and its rotated predecessor).
  const hookLines = ['hooks.log.1', 'hooks.log'].flatMap((name) => {
    try {
      return readFileSync(join(home, 'logs', name), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
    } catch {
      return [];
    }
  });
  const paths = {};
  const fallbacks = {};
  for (const entry of hookLines.filter((e) => e.msg === 'hook done' || e.msg === 'hook failed')) {
    paths[entry.path] = (paths[entry.path] ?? 0) + 1;
    if (entry.fallback) fallbacks[entry.fallback] = (fallbacks[entry.fallback] ?? 0) + 1;
  }
  const logErrors = hookLines.filter((e) => e.level === 'error').length;

  // RSS: the growth over the last 20 minutes (two thirds of a shorter run) of the server alive at the end.
  const windowS = MINUTES >= 25 ? 20 * 60 : (runSeconds * 2) / 3;
  const lastPid = results.rss.at(-1)?.pid;
  const inWindow = results.rss.filter((s) => s.t_s >= runSeconds - windowS && s.t_s <= runSeconds && s.pid === lastPid && s.rss_kb);
  const rssGrowth = growth(inWindow.map((s) => ({ t_s: s.t_s, value: s.rss_kb / 1024 })));
  // The server's own figures over the same window (server/memory-probe.ts), times made relative to the run's start.
  const memory = memorySamples().map((sample) => ({ ...sample, t_s: round((Date.parse(sample.t) - started) / 1000) }));
  const memoryInWindow = memory.filter((s) => s.t_s >= runSeconds - windowS && s.t_s <= runSeconds && s.pid === lastPid);
  const memoryGrowth = Object.fromEntries(
    ['rss_kb', 'heap_used_kb', 'heap_total_kb', 'external_kb', 'array_buffers_kb', 'rss_anon_kb', 'rss_file_kb'].map((field) => [
      field.replace(/_kb$/, ''),
      growth(memoryInWindow.filter((s) => s[field] !== null).map((s) => ({ t_s: s.t_s, value: s[field] / 1024 }))),
    ]),
  );
  // Judged on the trend (memory-growth.mjs says why): not moved by one collection, moved in full by a steady leak.
  const judged = rssGrowth.trend?.pct ?? null;

  const seen = results.hooks.filter((hook) => !hook.ok);
  const byEvent = {};
  for (const hook of results.hooks) (byEvent[hook.event] ??= []).push(hook.ms);
  const lost = audit.lostPrompts.length + audit.lostTools.length + audit.lostShown.length + untaped.length;
  const result = {
    bench: 'soak',
    minutes: MINUTES,
    sessions_concurrent: SESSIONS,
    sessions_run: sessionsRun,
    think_ms: THINK_MS,
    machine: { node: process.version, cpus: os.cpus().length, loadavg_start: loadStart.map((x) => round(x, 2)), loadavg_end: os.loadavg().map((x) => round(x, 2)) },
    embedder: model ?? 'test',
    run_s: Math.round(runSeconds),
    drain_s: Math.round(drainSeconds),
    hooks: results.hooks.length,
    hook_errors_seen_by_agent: seen.length,
    hook_error_examples: [...new Set(seen.map((hook) => `${hook.event}: ${hook.problem}`))].slice(0, 10),
    hook_latency_ms: Object.fromEntries(Object.entries(byEvent).map(([event, values]) => [event, { n: values.length, p50: round(median(values)), p95: round(percentile(values, 95)), max: round(Math.max(...values)) }])),
    answered_by: paths,
    fallback_reasons: fallbacks,
    hook_log_errors: logErrors,
    lost_writes: lost,
    lost: {
      prompts: `${audit.lostPrompts.length} of ${results.expected.prompts.length}`,
      tool_calls: `${audit.lostTools.length} of ${results.expected.tools.length}`,
      shown_records: `${audit.lostShown.length} of ${results.expected.shown.length}`,
      tapes: `${untaped.length} of ${results.expected.ended.length} ended sessions without a tape`,
    },
    session_end_jobs: { ...audit.jobs, not_done_for_ended_sessions: audit.notDone.length, failed_examples: audit.failedJobs },
    evaluations: audit.evaluations,
    judge: state.llm.stats(),
    integrity_check: audit.integrity,
    kills: results.kills,
    rss: {
      samples: results.rss,
      window_s: Math.round(windowS),
      server_pid: lastPid ?? null,
      judged_on: 'trend',
      growth_pct: judged === null ? null : round(judged),
      raw: rssGrowth.raw && roundFigure(rssGrowth.raw),
      medians: rssGrowth.medians && roundFigure(rssGrowth.medians),
      trend: rssGrowth.trend && roundFigure(rssGrowth.trend),
    },
    server_memory: {
      samples: memory,
      window: Object.fromEntries(Object.entries(memoryGrowth).map(([field, g]) => [field, g.trend ? { raw: roundFigure(g.raw), medians: roundFigure(g.medians), trend: roundFigure(g.trend) } : null])),
    },
    heap_snapshots: results.snapshots,
    heap_dir: HEAP_SNAPSHOTS.length > 0 ? HEAP_DIR : null,
    targets: {
      hook_errors: seen.length === 0,
      lost_writes: lost === 0,
      integrity: audit.integrity === 'ok',
      rss_growth_le_10pct: judged !== null && judged <= 10,
    },
  };
  return result;
}

function render(r) {
  const mb = (kb) => (kb ? (kb / 1024).toFixed(0) : '—');
  const signed = (pct) => (pct === null ? '—' : `${pct >= 0 ? '+' : ''}${pct} %`);
  const figure = (f) => (f ? `${f.from} → ${f.to} MB (${signed(f.pct)})` : '—');
  const lines = [
    `Engram soak — ${r.minutes} min, ${r.sessions_concurrent} concurrent sessions (${r.sessions_run} sessions in all, think ${r.think_ms} ms), ${r.kills.length} server kills, embedder ${r.embedder}`,
    `node ${r.machine.node}, ${r.machine.cpus} CPUs, load ${r.machine.loadavg_start.join(' ')} → ${r.machine.loadavg_end.join(' ')}; run ${r.run_s} s, then ${r.drain_s} s for the last jobs`,
    '',
    `hook errors seen by the agent   ${r.hook_errors_seen_by_agent} of ${r.hooks} hooks ${r.targets.hook_errors ? '(target 0: met)' : '(target 0: NOT met)'}`,
    ...r.hook_error_examples.map((example) => `    ${example}`),
    `lost writes                     ${r.lost_writes} ${r.targets.lost_writes ? '(target 0: met)' : '(target 0: NOT met)'} — prompts ${r.lost.prompts}, tool calls ${r.lost.tool_calls}, shown ${r.lost.shown_records}, tapes ${r.lost.tapes}`,
    `PRAGMA integrity_check          ${r.integrity_check}`,
    `server RSS, last ${Math.round(r.rss.window_s / 60)} min           trend ${figure(r.rss.trend)} ${r.targets.rss_growth_le_10pct ? '(target ≤ 10 %: met)' : '(target ≤ 10 %: NOT met)'}${r.heap_snapshots.length ? ' — heap snapshots were taken: not a figure to judge' : ''}`,
    `                                medians of 3 min ${figure(r.rss.medians)}; raw first → last sample ${figure(r.rss.raw)}`,
    ...Object.entries(r.server_memory.window)
      .filter(([, g]) => g)
      .map(([field, g]) => `    server ${field.padEnd(14)} trend ${figure(g.trend)}; medians ${figure(g.medians)}; raw ${figure(g.raw)}`),
    '',
    `answered by: ${Object.entries(r.answered_by).map(([path, n]) => `${path} ${n}`).join(', ')}; in-process because: ${Object.entries(r.fallback_reasons).map(([why, n]) => `${why} ${n}`).join(', ') || '—'}; error lines in hooks.log: ${r.hook_log_errors}`,
    `server kills: ${r.kills.map((k) => `${k.at_s} s → back after ${k.back_after_ms === null ? '—' : `${k.back_after_ms} ms`}`).join('; ') || 'none'}`,
    `session-end jobs: done ${r.session_end_jobs.done}, failed ${r.session_end_jobs.failed}, pending ${r.session_end_jobs.pending}, running ${r.session_end_jobs.running}; ended sessions without a done job: ${r.session_end_jobs.not_done_for_ended_sessions}`,
    `evaluations: ${Object.entries(r.evaluations).map(([status, n]) => `${status} ${n}`).join(', ')}; judge calls ${r.judge.calls} (${r.judge.unusable} unusable answers on purpose)`,
    '',
    'hook latency (ms)         n      p50      p95      max',
    ...Object.entries(r.hook_latency_ms).map(([event, l]) => `${event.padEnd(20)} ${String(l.n).padStart(6)} ${String(l.p50).padStart(8)} ${String(l.p95).padStart(8)} ${String(l.max).padStart(8)}`),
    '',
    'server memory over time (one sample a minute, MB; pid changes are restarts): RSS, then the server\'s own heapUsed, heapTotal, external, RSS anonymous / file-backed',
    ...r.rss.samples.filter((_, i) => i % 4 === 0).map((s) => {
      const own = r.server_memory.samples.filter((m) => m.pid === s.pid && Math.abs(m.t_s - s.t_s) <= 10).at(-1);
      const mine = own ? `  heap ${mb(own.heap_used_kb)} / ${mb(own.heap_total_kb)}  external ${mb(own.external_kb)}  anon ${mb(own.rss_anon_kb)}  file ${mb(own.rss_file_kb)}` : '';
      return `  ${String(Math.round(s.t_s / 60)).padStart(3)} min  pid ${s.pid}  ${mb(s.rss_kb).padStart(4)}${mine}`;
    }),
    ...(r.heap_snapshots.length ? ['', `heap snapshots: ${r.heap_snapshots.map((h) => `${h.at_s} s (pid ${h.pid})`).join(', ')} → ${r.heap_dir}`] : []),
    '',
    JSON.stringify({ ...r, rss: { ...r.rss, samples: r.rss.samples.length }, server_memory: { ...r.server_memory, samples: r.server_memory.samples.length } }),
  ];
  return lines.join('\n');
}

try {
  const result = await main();
  await cleanup();
  process.stdout.write(`${JSON_ONLY ? JSON.stringify(result) : render(result)}\n`);
  process.exit(0);
} catch (error) {
  process.stderr.write(`bench:soak: ${error.stack ?? error}\n`);
  await cleanup();
  process.exit(1);
}
