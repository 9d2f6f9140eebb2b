/**
 * The background server (`dist/server.mjs`): one per Engram home, started on demand by a hook, detached. It keeps
 * the store open, the BM25 index and the embedding model warm, and answers hook calls over a Unix socket in
 * `$ENGRAM_HOME/run/`; it runs the background jobs hooks queue (SessionEnd), and exits after an idle period, when
 * its home or lock disappears, or on SIGTERM. It also serves the Go engram's HTTP API (src/http/) on 127.0.0.1:7437
 * unless config.json turns it off: one process, one index in memory. `engram serve` runs it in the foreground
 * (`--foreground`: no idle exit, the HTTP API required).
 * @module
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, realpathSync, rmSync, statSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  choiceForModel,
  createLlmClient,
  bulkEmbedWorkers,
  POOL_MIN_TEXTS,
  loadEmbedderPool,
  POOL_TEXTS_PER_WORKER,
  httpToken,
  isLoopbackHost,
  createLogger,
  loadEmbedder,
  loadSettingsLeniently,
  openStore,
  readEnv,
  resolveEmbedder,
  toEngramError,
  vectorModelId,
  VERSION,
  writeFileAtomic,
  type Embedder,
  type Store,
} from '../core/index.js';
import {
  bm25WorkerBuilder,
  createSearchEngine,
  embedPending,
  embeddingStatus,
  governancePolicy,
  MCP_AGENT,
  queueAbandonedSessions,
  runOperation,
  runPendingJobs,
  searchTuning,
  syncJournal,
  syncTextIndex,
  textIndexReady,
  textIndexWorkerBuilder,
  warmTextIndex,
  type Actor,
  type Caller,
  type OpContext,
  type RecordedSources,
  type SearchEngine,
} from '../services/index.js';
import { handleHookCall } from '../hooks/dispatch.js';
import { createHttpApp, HTTP_ACTOR, HTTP_CALLER, listenHttp, type Binding, type HttpListener, type HttpState, type RouteGroup } from '../http/index.js';
import { secretMatches, viewerApp } from '../ui/index.js';
import { hookEnvironment } from '../hooks/environment.js';
import type { HookRuntime } from '../hooks/events.js';
import { serverPaths } from './address.js';
import { afterAnswers } from './after-answers.js';
import { acquireLock, lockOwner, releaseLock } from './lock.js';
import { hookVersions } from './hook-version.js';
import { HOOK_ENTRIES } from '../../hooks/run.cjs';
import { openMailbox, type Mailbox } from './mailbox-server.js';
import { startMemoryProbe } from './memory-probe.js';
import { startQuietCollection } from './quiet-collection.js';
import { newerVersion, parseServerRequest, type ServerReply } from './protocol.js';

/** A request line longer than this is not a hook call (stdin is capped at 16 MiB; JSON escaping can double it). */
const MAX_LINE_BYTES = 40 * 1024 * 1024;
/** How often the server checks that it is still wanted (lock ours, socket and home present). */
const WATCH_EVERY_MS = 2_000;
/**
 * How long a folder's environment (tags, repository, MCP servers) is served from memory before its inputs are stat'ed
 * again (7 stats for a git project: 0.1 ms of every hook). A project file changed meanwhile shows in its hooks at most
 * this late.
 */
const ENVIRONMENT_RECHECK_MS = 1_000;
/** Missing vectors a hook's search embeds before answering; more is the session-end job's work. */
const HOOK_CATCH_UP = 32;

const env = readEnv();
const { settings, configError } = loadSettingsLeniently(env);
/** Flags `engram serve` passes: stay in the foreground, and where the HTTP API listens. */
const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const index = argv.indexOf(name);
  return index >= 0 ? argv[index + 1] : undefined;
};
const foreground = argv.includes('--foreground');
const paths = serverPaths(settings.paths.home);
// Nothing the server logs after its home was removed (a job finishing, a record after an answer, its last line) may
// make that home again.
const logOptions = { dir: settings.paths.logs, level: settings.config.log.level, maxBytes: settings.config.log.max_bytes, within: settings.paths.home };
const log = createLogger({ ...logOptions, name: 'server' });
const hookLog = createLogger({ ...logOptions, name: 'hooks' });
/** Runs what answered requests left to do, once the requests already received are answered too (after-answers.ts). */
const afterAnswered = afterAnswers((error) => hookLog.error('recording after the answer failed', { error, path: 'server' }));
if (configError) log.warn('config.json is invalid; using defaults', { error: configError.message });

/** Longest a session's recording may take in its child process. */
const RECORD_TIMEOUT_MS = 120_000;

/**
 * Records one transcript with `engram ingest --file` in a child process: adapting, redacting and compressing are
 * synchronous (about 0.1 s per MB), and in this process they would hold up every hook waiting for an answer.
 */
function recordFile(cwd: string, file: string): Promise<RecordedSources> {
  const cli = join(dirname(fileURLToPath(import.meta.url)), 'cli.mjs');
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [cli, 'ingest', '--file', file],
      { cwd, env: { ...process.env, ENGRAM_HOME: settings.paths.home }, timeout: RECORD_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        try {
          const report = JSON.parse(stdout) as RecordedSources;
          log.info('session recorded as tapes', { file, ms: Math.round(performance.now() - started), statuses: report.sources.map((source) => source.status) });
          resolve(report);
        } catch {
          reject(new Error(`engram ingest failed: ${(error?.message ?? '').slice(0, 300)} ${stderr.slice(0, 500)}`.trim()));
        }
      },
    );
  });
}

// `--drain`: run queued background jobs and exit, without serving (hooks use this when the server is switched off).
// Jobs are claimed in transactions, so a drain and a server never run the same one.
if (process.argv.includes('--drain')) {
  try {
    const drainStore = openStore({ path: settings.paths.db, busyTimeoutMs: 5_000 });
    const result = await runPendingJobs({
      store: drainStore,
      log,
      now: () => new Date(),
      llm: createLlmClient(settings, { store: drainStore, log }),
      describeEnvironment: (cwd) => hookEnvironment(settings, cwd, 'unknown'),
      env: settings.env,
      recordTapes: settings.config.tapes.record,
      recordFile,
      governance: governancePolicy(settings.config),
    });
    log.info('drained jobs', result);
    drainStore.close();
  } catch (error) {
    log.error('drain failed', { error });
  }
  process.exit(0);
}

if (!acquireLock(paths.lock, paths.run)) {
  log.debug('another server holds the lock; exiting', { owner: lockOwner(paths.lock) });
  process.exit(0);
}

const startedAt = new Date();
// The soak's view of this process's memory (bench/soak.mjs sets $ENGRAM_MEMORY_PROBE_MS); off otherwise.
if (env.memoryProbeMs) startMemoryProbe(settings.paths.logs, env.memoryProbeMs, (error) => log.warn('memory probe failed', { error }));
/** In the foreground (`engram serve`) the server runs until stopped. */
const idleMs = foreground ? Number.POSITIVE_INFINITY : Math.max(1_000, settings.config.server.idle_minutes * 60_000);
let requests = 0;
let busy = 0;
/** Set once warm-up is done: the watch then keeps the candidates' fields read (keepCandidateFields). */
let warm = false;
let keepingFields = false;
let lastActivity = Date.now();
let stopping = false;
// A full collection between calls, once a minute (server/quiet-collection.ts); `gc` is there with --expose-gc
// (client.ts SERVER_NODE_FLAGS), absent when dist/server.mjs is run by hand. Each is logged with how long it blocked.
const collect = (globalThis as { gc?: () => void }).gc;
if (collect) {
  startQuietCollection({
    collect,
    busy: () => busy,
    lastActivity: () => lastActivity,
    calls: () => requests,
    stopping: () => stopping,
    onCollected: (ms) => log.info('collected between calls', { ms: Math.round(ms * 10) / 10 }),
    onError: (error) => log.warn('collection between calls failed', { error }),
  });
}

let openedStore: Store;
try {
  openedStore = openStore({ path: settings.paths.db, busyTimeoutMs: 5_000 });
} catch (error) {
  // A locked, corrupt or unwritable store: hooks keep answering in-process and say why in their own log.
  log.error('cannot open the store; exiting', { error });
  releaseLock(paths.lock);
  process.exit(0);
}
const store = openedStore;
// Audit rows committed by a process that died before appending them to audit.jsonl are appended now.
syncJournal(store);
const choice = settings.config.embed.provider === 'none' ? null : resolveEmbedder(settings);
const engine: SearchEngine = createSearchEngine(store, {
  embedder: choice,
  indexDir: settings.paths.index,
  tuning: searchTuning(settings.config),
  catchUpMax: HOOK_CATCH_UP,
  // After a model change the new space fills in the background (embedInBackground); searches meanwhile use the
  // complete older space with its own model.
  loadModel: async (modelId) => {
    const older = choiceForModel(settings, modelId);
    return older.spec ? loadEmbedder(older.spec, (line) => log.debug(line)) : null;
  },
  onWarning: (message, error) => log.warn(message, { error }),
  // Rebuilds of the BM25 base run in a worker thread: a store that is being written keeps its searches answered.
  bm25Builder: bm25WorkerBuilder(join(dirname(fileURLToPath(import.meta.url)), 'bm25-worker.mjs')),
  // A warm process: KNN from an in-memory int8 index (exact distances still from sqlite-vec).
  vectorIndex: true,
});
/** The model this server embeds with; a different resolution later (a pull, a config change) means a restart. */
const activeModel = choice?.spec ? vectorModelId(choice.spec) : null;
/** Hybrid once the model is loaded; until then (and without a model) hooks get BM25 answers at once. */
let model: { name: string; kind: string } | null = null;

/** config.json as of its last change: budgets, capture and tag rules apply without a restart (a new embedding
 * model or store path needs one: the server would have to reload everything). */
const configStamp = (): string => {
  try {
    // No throw for a missing file (most homes have no config.json): building that error cost every hook call ~0.05 ms.
    const stats = statSync(settings.paths.config, { throwIfNoEntry: false });
    return stats ? `${stats.mtimeMs}:${stats.size}` : 'absent';
  } catch {
    return 'absent';
  }
};
let liveStamp = configStamp();
let live = settings;
/** Set while config.json was looked at in this turn of the event loop (cleared by the next setImmediate). */
let configLooked = false;
function liveSettings(): typeof settings {
  // Once per turn: a hook call reads the settings four times (budgets, governance, its environment) in one turn.
  if (configLooked) return live;
  configLooked = true;
  setImmediate(() => {
    configLooked = false;
  });
  const stamp = configStamp();
  if (stamp !== liveStamp) {
    liveStamp = stamp;
    const reloaded = loadSettingsLeniently(env);
    live = reloaded.settings;
    log.info('config.json changed; reloaded', reloaded.configError ? { error: reloaded.configError.message } : {});
  }
  return live;
}

const runtime: HookRuntime = {
  get settings() {
    return liveSettings();
  },
  log: hookLog,
  now: () => new Date(),
  store: () => store,
  inject: {
    get mode() {
      return model ? 'hybrid' : 'bm25';
    },
    answeredBy: 'server',
    embedderKind: () => model?.kind ?? null,
    search: (request) => engine.search(request),
  },
  environment: (cwd, agent) => hookEnvironment(liveSettings(), cwd, agent, { recheckAfterMs: ENVIRONMENT_RECHECK_MS }),
  wake: () => scheduleJobs(),
};

let jobsRunning: Promise<void> | null = null;
let jobsAgain = false;
/** Runs queued jobs in the background of this process, one batch at a time. */
function scheduleJobs(): void {
  if (jobsRunning) {
    jobsAgain = true;
    return;
  }
  jobsRunning = (async () => {
    do {
      jobsAgain = false;
      busy++;
      try {
        const loaded = model ? (await engine.embedder()).embedder : null;
        // Extraction stores lessons, checking conflicts through the text index: wait for one being built at start.
        await textIndexReady(store);
        await runPendingJobs({
          store,
          log,
          now: () => new Date(),
          llm: createLlmClient(liveSettings(), { store, log }),
          embedder: loaded,
          describeEnvironment: (cwd) => hookEnvironment(liveSettings(), cwd, 'unknown'),
          env: settings.env,
          recordTapes: liveSettings().config.tapes.record,
          recordFile,
          governance: governancePolicy(liveSettings().config),
          ...(loaded ? { embedPending: async () => (await embedPending(store, loaded)).embedded } : {}),
        });
      } catch (error) {
        log.error('jobs failed', { error });
      } finally {
        busy--;
        lastActivity = Date.now();
      }
    } while (jobsAgain && !stopping);
    jobsRunning = null;
  })();
}

/**
 * Runs one operation of services/ops for another process (the MCP server) with this server's warm store and engine.
 * An operation's own failure (bad parameters, unknown id, a locked store) is its answer, not a protocol error.
 * Whoever connects to this socket is the agent's surface (the MCP process; hooks send `hook`, not `call`): every
 * operation runs as the agent through MCP, whatever the request says — the caller schema has no actor to say it with.
 */
async function runCall(method: string, params: unknown, caller: Caller): Promise<ServerReply> {
  const started = performance.now();
  const ms = (): number => Math.round((performance.now() - started) * 10) / 10;
  try {
    // Socket callers are the agent's MCP process: what they write is audited as the agent's and reviewed as such.
    const result = await runOperation(method, params, contextFor(caller, MCP_AGENT));
    log.debug('call done', { method, agent: caller.agent, ms: ms() });
    return { ok: true, op: 'call', result, ms: ms() };
  } catch (thrown) {
    const error = toEngramError(thrown);
    if (error.code === 'INTERNAL') log.error('call failed', { method, error: thrown });
    return { ok: true, op: 'call', error: { code: error.code, message: error.message }, ms: ms() };
  }
}

/** What an operation runs with here: this server's warm store, engine and model, for one caller. */
function contextFor(caller: Caller, actor: Actor): OpContext {
  return {
    store,
    get settings() {
      return liveSettings();
    },
    caller,
    actor,
    search: (request) => engine.search(request),
    searchMode: model ? 'hybrid' : 'bm25',
    model: model?.name ?? null,
    environment: (cwd, agent) => hookEnvironment(liveSettings(), cwd, agent, { recheckAfterMs: ENVIRONMENT_RECHECK_MS }),
    now: () => new Date(),
  };
}

/** The version of the runtime a hook's install folder runs with (its dist/build.json), kept while that file is unchanged. */
const hookVersion = hookVersions(settings.paths.home);

/** A request from another Engram version is not answered (its contract or schema may differ); a newer one means
 * the plugin was updated, so this server steps aside and that caller starts the new version's server. */
function otherVersion(version: string | undefined): boolean {
  if (version === undefined || version === VERSION) return false;
  if (newerVersion(version, VERSION)) setImmediate(() => shutdown(`Engram ${version} is installed`));
  return true;
}

/**
 * Answers one request. `after` collects work to run once the answer is written (a hook's recording of what it showed
 * and its log line): the hook process is not kept waiting for them.
 */
async function reply(request: unknown, after: Array<(delivered: boolean) => void>, front?: 'sh'): Promise<ServerReply> {
  const message = parseServerRequest(request);
  if (!message) return { ok: false, error: 'invalid request' };
  switch (message.op) {
    case 'hook': {
      // The version the hook says, else the one of the runtime its install folder runs with (found here, not by the
      // hook: hook-version.ts); with neither, the call is answered (a caller that does not say).
      const version = message.version ?? (message.root === undefined ? undefined : hookVersion(message.root, message.pluginData ?? ''));
      if (version === null) return { ok: false, error: 'no runtime' };
      if (otherVersion(version)) return { ok: false, error: 'version' };
      const started = performance.now();
      const answer = await handleHookCall(message.call, runtime, { defer: (work) => after.push(work), ...(front ? { front } : {}) });
      return { ok: true, op: 'hook', stdout: answer.stdout, outcome: answer.outcome, ms: Math.round((performance.now() - started) * 10) / 10 };
    }
    case 'call':
      if (otherVersion(message.version)) return { ok: false, error: 'version' };
      return runCall(message.method, message.params, message.caller);
    case 'ping':
      return {
        ok: true,
        op: 'ping',
        pid: process.pid,
        version: VERSION,
        home: settings.paths.home,
        started_at: startedAt.toISOString(),
        requests,
        model: model?.name ?? null,
        mode: model ? 'hybrid' : 'bm25',
      };
    case 'wake':
      scheduleJobs();
      return { ok: true, op: 'wake' };
    case 'stop':
      setImmediate(() => shutdown('stop requested'));
      return { ok: true, op: 'stop' };
    case 'ui':
      return openViewer(message.port);
  }
}

function serve(socket: Socket): void {
  let buffer = '';
  socket.setEncoding('utf8');
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    if (buffer.length > MAX_LINE_BYTES) {
      socket.end(`${JSON.stringify({ ok: false, error: 'request too large' })}\n`);
      buffer = '';
      return;
    }
    const end = buffer.indexOf('\n');
    if (end < 0) return;
    const line = buffer.slice(0, end);
    buffer = '';
    requests++;
    busy++;
    lastActivity = Date.now();
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch {
      request = undefined;
    }
    // A hook that waited longer than its budget (this process was busy: a model loading, an index building) has
    // closed its end and answered by itself; handling its call now would do the work twice (a turn counted twice).
    // Its close arrives with the request when this process was blocked, so it is seen one turn of the loop later.
    setImmediate(() => handleRequest(socket, request));
  });
}

/** Answers one request line from the socket, unless it is a hook call whose hook is already gone. */
function handleRequest(socket: Socket, request: unknown): void {
  if ((socket.readableEnded || socket.destroyed) && (request as { op?: unknown } | undefined)?.op === 'hook') {
    const event = (request as { call?: { event?: unknown } }).call?.event;
    gaveUp(typeof event === 'string' ? event : null);
    busy--;
    lastActivity = Date.now();
    return;
  }
  answerRequest(request, (answer) => {
    if (!socket.destroyed) socket.end(`${JSON.stringify(answer)}\n`);
  });
}

function gaveUp(event: string | null): void {
  hookLog.info('hook gave up waiting before the server read it; not handled twice', { event, path: 'server' });
}

/** Answers one request with `respond` (the socket's or the mailbox's); the caller counted it in `busy`. */
function answerRequest(request: unknown, respond: (answer: ServerReply) => boolean | Promise<boolean> | void, front?: 'sh'): void {
  const after: Array<(delivered: boolean) => void> = [];
  void reply(request, after, front)
    .catch((error: unknown): ServerReply => {
      log.error('request failed', { error });
      return { ok: false, error: 'internal error' };
    })
    .then((answer) => {
      // After the answers of hooks posted together with this one, before the next turn's: a hook of the session
      // that arrives later sees what this one showed; one answered meanwhile sees it through services/inject's
      // unrecorded set. The request counts as busy until its work ran. Told whether the answer reached its hook (the
      // shell front's, written only while it waits; every other way is taken as delivered).
      const queueAfter = (delivered: boolean): void =>
        afterAnswered.queue([
          ...after.map((work) => () => work(delivered)),
          () => {
            busy--;
            lastActivity = Date.now();
          },
        ]);
      let delivered: boolean | Promise<boolean> | void = true;
      try {
        delivered = respond(answer);
      } finally {
        if (delivered instanceof Promise) void delivered.then(queueAfter, () => queueAfter(true));
        else queueAfter(delivered !== false);
      }
    });
}

const server = createServer(serve);

/** The hooks' mailbox (server/mailbox-server.ts), opened with the socket; null without `mkfifo`: hooks use the socket. */
let mailbox: Mailbox | null = null;

function openHookMailbox(): void {
  const opened = openMailbox(paths.mailbox, {
    onCall(call) {
      requests++;
      busy++;
      lastActivity = Date.now();
      let request: unknown;
      try {
        request = JSON.parse(call.line);
      } catch {
        request = undefined;
      }
      answerRequest(request, (answer) => call.answer(`${JSON.stringify(answer)}\n`));
    },
    onShellCall(call) {
      requests++;
      busy++;
      lastActivity = Date.now();
      const event = (HOOK_ENTRIES as Record<string, { event: string } | undefined>)[call.entry]?.event;
      // The folder as the Node launcher names it (its own path, resolved: `__dirname`), which runtime pointers are
      // keyed by; the shell has it as the agent spelled it (a trailing slash, a link in the path).
      let root = call.root;
      try {
        root = realpathSync.native(call.root);
      } catch {
        // Gone: the lookup finds no runtime and the call is declined, as a Node hook's would be.
      }
      // The request a Node hook would have posted (hooks/run.cjs askWarmServer); a payload over the cap, or an entry
      // this version does not know, is the Node launcher's to handle.
      const request =
        event === undefined || call.stdin === null
          ? undefined
          : {
              v: 1,
              op: 'hook',
              root,
              ...(call.pluginData ? { pluginData: call.pluginData } : {}),
              call: { event, stdin: call.stdin, agentFlag: call.agent, envHints: call.envHints },
            };
      answerRequest(
        request,
        (answer) => {
          if (answer.ok && answer.op === 'hook') return call.answer(answer.stdout);
          call.decline();
          return true;
        },
        'sh',
      );
    },
    onWithdrawn: (event) => gaveUp(event),
    onError: (error) => log.warn('hook mailbox', { error }),
  });
  if ('error' in opened) log.warn('no hook mailbox (hooks use the socket)', { error: opened.error });
  else mailbox = opened;
}

/** The longest a stopping server waits for a running job to finish its current step. */
const JOB_GRACE_MS = 5_000;

function shutdown(reason: string, code = 0): void {
  if (stopping) return;
  stopping = true;
  if (jobsRunning) {
    const running = jobsRunning;
    const grace = setTimeout(() => finishShutdown(reason, code), JOB_GRACE_MS);
    void running.finally(() => {
      clearTimeout(grace);
      finishShutdown(reason, code);
    });
    return;
  }
  finishShutdown(reason, code);
}

function finishShutdown(reason: string, code: number): void {
  log.info('server stopping', { reason, pid: process.pid, requests, uptime_s: Math.round((Date.now() - startedAt.getTime()) / 1000) });
  server.close();
  if (lockOwner(paths.lock) === process.pid) mailbox?.close();
  void httpListener?.close();
  void viewerListener?.listener.close();
  if (lockOwner(paths.lock) === process.pid) {
    rmSync(paths.socket, { force: true });
    rmSync(paths.info, { force: true });
  }
  releaseLock(paths.lock);
  // Records of hooks answered in this very turn (after-answers.ts) are written before the store closes.
  afterAnswered.flush();
  try {
    store.close();
  } catch {
    // Exiting anyway.
  }
  process.exit(code);
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));
process.on('uncaughtException', (error) => {
  log.error('uncaught exception', { error });
  shutdown('uncaught exception', 1);
});
process.on('unhandledRejection', (error) => log.error('unhandled rejection', { error }));

// We hold the lock, so a socket file left behind belongs to a dead server.
rmSync(paths.socket, { force: true });
server.on('error', (error) => {
  log.error('cannot listen', { error, socket: paths.socket });
  shutdown('listen failed', 1);
});
server.listen(paths.socket, () => {
  // Only the user may connect (the run folder is 0700 too; a socket moved to the temp folder has only this).
  chmodSync(paths.socket, 0o600);
  openHookMailbox();
  writeInfo();
  log.info('server listening', { pid: process.pid, version: VERSION, socket: paths.socket, idle_ms: idleMs, embedder: choice?.spec?.kind ?? null, foreground });
  scheduleJobs();
  void warmUp();
  void warmTexts();
  void startHttp();
});

/** The HTTP API's state, as server.json and `engram status` report it. */
let httpState: HttpState | { state: 'off'; detail: string } = { state: 'off', detail: 'not started yet' };
let httpListener: HttpListener | null = null;
/** A taken port is tried again this often: the Go engram may be stopped later. */
const HTTP_RETRY_MS = 30_000;

/** `run/server.json`: this server's pid, version, socket and HTTP API, for hooks, `engram status` and doctor. */
function writeInfo(): void {
  try {
    // Atomically: hooks, `engram status` and doctor read it while the HTTP state changes it.
    writeFileAtomic(
      paths.info,
      `${JSON.stringify({ pid: process.pid, version: VERSION, socket: paths.socket, started_at: startedAt.toISOString(), foreground, http: httpState })}\n`,
      { mode: 0o600 },
    );
  } catch (error) {
    log.warn('cannot write server.json', { error });
  }
}

/** Where the HTTP API listens: `engram serve`'s flags, else config.json (ENGRAM_PORT and ENGRAM_HTTP applied). */
function httpBinding(): { enabled: boolean; binding: Binding; token: string | undefined; problem: string | null } {
  const config = liveSettings().config.http;
  const host = flag('--http-host') ?? config.host;
  const portFlag = flag('--http-port');
  const port = portFlag !== undefined ? Number(portFlag) : config.port;
  const remote = !isLoopbackHost(host);
  const allowRemote = argv.includes('--allow-remote') || config.allow_remote;
  const token = remote ? httpToken(config.token_env) : undefined;
  let problem: string | null = null;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) problem = `port ${portFlag} is not a TCP port`;
  else if (remote && !allowRemote) problem = `${host} is not a loopback address; listening there needs --allow-remote (http.allow_remote) and a token`;
  else if (remote && !token) problem = `listening on ${host} needs a token in $${config.token_env} (every request must send Authorization: Bearer <token>)`;
  return { enabled: foreground || config.enabled, binding: { host, port, remote }, token, problem };
}

/**
 * Starts the HTTP API. A taken port (the Go engram still running) is logged with who holds it and tried again every
 * 30 s; the hook server goes on either way. In the foreground a listener that cannot start ends the process.
 */
async function startHttp(): Promise<void> {
  if (stopping || httpListener) return;
  const { enabled, binding, token, problem } = httpBinding();
  if (!enabled) {
    httpState = { state: 'off', detail: 'off in config.json (http.enabled) or ENGRAM_HTTP=off' };
    writeInfo();
    return;
  }
  if (problem) {
    httpState = { state: 'error', host: binding.host, port: binding.port, detail: problem };
    writeInfo();
    log.error('HTTP API not started', { detail: problem });
    if (foreground) failForeground(problem);
    return;
  }
  const app = buildHttpApp(binding, token);
  const wasInUse = httpState.state === 'port_in_use';
  const { state, listener } = await listenHttp(app, binding);
  if (stopping) {
    await listener?.close();
    return;
  }
  httpState = state;
  httpListener = listener;
  writeInfo();
  if (state.state === 'listening') {
    log.info('HTTP API listening', { url: state.url, remote: binding.remote });
    if (foreground) process.stdout.write(`${JSON.stringify({ status: 'serving', url: state.url, pid: process.pid, home: settings.paths.home, version: VERSION })}\n`);
    return;
  }
  if (!wasInUse) log.warn('HTTP API not started', { detail: state.detail });
  if (foreground) return failForeground(state.detail);
  if (state.state === 'port_in_use') setTimeout(() => void startHttp(), HTTP_RETRY_MS).unref();
}

/** The HTTP app for one listener: the Go engram's API, plus the viewer on loopback listeners (it has no token). */
function buildHttpApp(binding: Binding, token: string | undefined) {
  return createHttpApp({
    run: async (name, params) => {
      requests++;
      busy++;
      lastActivity = Date.now();
      try {
        return await runOperation(name, params, contextFor(HTTP_CALLER, HTTP_ACTOR));
      } finally {
        busy--;
        lastActivity = Date.now();
      }
    },
    log,
    binding,
    token,
    timeoutMs: liveSettings().config.http.timeout_ms,
    groups: binding.remote ? [] : [viewerGroup()],
  });
}

/** Secrets `engram ui` handed out since this server started, newest last (a few launches stay valid). */
const viewerSecrets: string[] = [];
const VIEWER_SECRETS_KEPT = 8;
/** The viewer's own loopback listener, when the HTTP API cannot serve it (off, taken, remote, or another port). */
let viewerListener: { listener: HttpListener; port: number; url: string } | null = null;
let viewerRoutes: RouteGroup | null = null;
const distDir = dirname(fileURLToPath(import.meta.url));

/** The viewer's routes, built once and shared by every listener. */
function viewerGroup(): RouteGroup {
  viewerRoutes ??= {
    path: '/ui',
    app: viewerApp({
      store,
      settings: liveSettings,
      search: (request) => engine.search(request),
      knows: (secret) => secretMatches(viewerSecrets, secret),
      assets: join(distDir, 'ui'),
      installRoot: env.installRoot ?? dirname(distDir),
      now: () => new Date(),
      touch: () => {
        lastActivity = Date.now();
      },
    }),
  };
  return viewerRoutes;
}

/** `engram ui`: a new secret, and the loopback URL the viewer answers on (starting its own listener when needed). */
async function openViewer(port: number | undefined): Promise<ServerReply> {
  lastActivity = Date.now();
  let origin: string | null = null;
  let at = 0;
  const http = httpState.state === 'listening' && httpListener && !httpBinding().binding.remote ? httpState : null;
  if (http && (port === undefined || port === http.port)) {
    origin = `http://127.0.0.1:${http.port}`;
    at = http.port;
  } else if (viewerListener && (port === undefined || port === viewerListener.port)) {
    origin = viewerListener.url;
    at = viewerListener.port;
  } else {
    const binding: Binding = { host: '127.0.0.1', port: port ?? 0, remote: false };
    const { state, listener } = await listenHttp(buildHttpApp(binding, undefined), binding);
    if (state.state !== 'listening' || !listener) return { ok: false, error: state.state === 'listening' ? 'the viewer could not listen' : state.detail };
    await viewerListener?.listener.close();
    viewerListener = { listener, port: state.port, url: state.url };
    origin = state.url;
    at = state.port;
    log.info('viewer listening on its own port', { url: state.url });
  }
  const secret = randomBytes(24).toString('base64url');
  viewerSecrets.push(secret);
  if (viewerSecrets.length > VIEWER_SECRETS_KEPT) viewerSecrets.shift();
  return { ok: true, op: 'ui', url: `${origin}/ui/#${secret}`, origin, port: at, secret };
}

/** `engram serve` asked for the HTTP API and cannot have it: say why on stdout (JSON) and stop. */
function failForeground(detail: string): void {
  process.stdout.write(`${JSON.stringify({ error: { code: 'BUSY', message: detail } })}\n`);
  shutdown('the HTTP API cannot start', 1);
}


/** Builds the BM25 index, then loads the model; hooks are answered (BM25) meanwhile. */
async function warmUp(): Promise<void> {
  const started = performance.now();
  busy++;
  try {
    await engine.search({ query: 'warm up', mode: 'bm25', topK: 1 });
    bm25Warm.settle();
    const loaded = await engine.embedder();
    if (loaded.embedder) {
      await engine.search({ query: 'warm up', mode: 'hybrid', topK: 1 });
      model = { name: loaded.embedder.model, kind: loaded.embedder.kind };
      // The in-memory vector index of a large store loads in slices between requests; warm once it is in.
      await engine.settled();
    }
    log.info('server warm', { ms: Math.round(performance.now() - started), model: model?.name ?? null, reason: loaded.reason });
    warm = true;
    keepCandidateFields();
    if (loaded.embedder) void embedInBackground(loaded.embedder);
  } catch (error) {
    bm25Warm.settle();
    log.error('warm-up failed; answering with BM25', { error });
  } finally {
    busy--;
    lastActivity = Date.now();
  }
}

/**
 * Reads the recall fields of the store's live engrams into the kept rows (core/store `keepRecallFields`), one page
 * (512 rows, 1–3 ms) per turn of the event loop and only while no request is in flight: a hook's search then finds
 * its candidates in memory instead of reading their rows (0.2–0.3 ms of a PreToolUse at 10k engrams: new targets
 * bring new candidates, so the rows kept by earlier searches mostly miss). Started after warm-up and on every watch;
 * a write to `engrams` empties the kept rows and the next watch reads them again.
 */
function keepCandidateFields(): void {
  if (keepingFields) return;
  keepingFields = true;
  let pages = 0;
  let ms = 0;
  const page = (): void => {
    let more = false;
    const started = performance.now();
    try {
      more = busy === 0 && !stopping && store.engrams.keepRecallFields();
    } catch (error) {
      log.warn('reading the candidates’ fields ahead failed', { error });
    }
    pages += 1;
    ms += performance.now() - started;
    if (more) return void setImmediate(page);
    keepingFields = false;
    if (pages > 1) log.debug('candidates’ fields read ahead', { pages, ms: Math.round(ms * 10) / 10 });
  };
  setImmediate(page);
}

const textIndexWorker = join(dirname(fileURLToPath(import.meta.url)), 'text-index-worker.mjs');
/** The embedding pool's worker (core/embed/pool.ts), for background embedding of many engrams. */
const embedWorker = join(dirname(fileURLToPath(import.meta.url)), 'embed-worker.mjs');
/** Settled once warm-up has its BM25 index: the text index is built after it, not beside it (two workers analysing
 * 100k texts at once doubled the server's peak memory). */
const bm25Warm = (() => {
  let settle = (): void => {};
  const promise = new Promise<void>((resolve) => (settle = resolve));
  return { promise, settle: () => settle() };
})();
let textsWarming = false;
let textsFailedAt = 0;
/** Set once the index was built: from then on the sweep keeps it (start-up asks for the first build). */
let textsHeld = false;
/**
 * Builds the text index saves compare new texts with (conflicts) and review's near-duplicates read, in a worker
 * thread: analysing every engram takes seconds at 100k, which a save arriving first would otherwise pay inline.
 */
async function warmTexts(): Promise<void> {
  if (textsWarming || Date.now() - textsFailedAt < 60_000) return;
  textsWarming = true;
  const started = performance.now();
  try {
    // Writes and the viewer's review wait for it (textIndexReady) rather than building it on this event loop.
    const how = await warmTextIndex(store, textIndexWorkerBuilder(textIndexWorker), { after: bm25Warm.promise });
    textsHeld = true;
    if (how === 'built') log.info('text index ready', { ms: Math.round(performance.now() - started) });
  } catch (error) {
    textsFailedAt = Date.now();
    log.warn('text index build failed; saves build it when they need it', { error });
  } finally {
    textsWarming = false;
  }
}

/** Texts per embedding call in the background: small, so a hook waiting behind one batch is not kept long. */
const BACKGROUND_BATCH = 8;


/**
 * Embeds engrams that lack vectors (added by another process, or before a model change) a few at a time. Many of
 * them with USE lite (a model change, a store filled by another process): in a pool of worker threads
 * (`embed.workers`), so the embedding runs on other cores and off this event loop, which keeps answering hooks; the
 * pool is stopped when the work is done. Otherwise, or when the pool cannot start, in small batches in this thread.
 */
async function embedInBackground(embedder: Embedder): Promise<void> {
  let total = 0;
  // Counting what is pending reads the store: only when the embedder could use a pool at all.
  const pending = bulkEmbedWorkers(embedder.kind, settings.config.embed.workers, POOL_MIN_TEXTS) > 0 ? embeddingStatus(store, settings).pending : 0;
  const workers = bulkEmbedWorkers(embedder.kind, settings.config.embed.workers, pending);
  const pool =
    workers > 0 && choice?.spec
      ? await loadEmbedderPool(choice.spec, { script: embedWorker, workers, log: (line) => log.warn(line) }).catch(() => null)
      : null;
  const using = pool && pool.workers > 0 ? pool : embedder;
  const batch = pool && pool.workers > 0 ? POOL_TEXTS_PER_WORKER * pool.workers : BACKGROUND_BATCH;
  try {
    while (!stopping) {
      const report = await embedPending(store, using, { limit: batch, batchSize: batch });
      total += report.embedded;
      if (report.embedded === 0 || report.remaining <= 0) break;
      lastActivity = Date.now();
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    await pool?.close();
  }
  if (total > 0) log.info('embedded missing vectors', { count: total, model: embedder.model, workers: using === embedder ? 0 : (pool?.workers ?? 0) });
}

/** Jobs queued while no wake reached this server (a hook that answered itself while this server was starting)
 * still run within seconds; one count query each time. */
const JOB_SWEEP_EVERY_MS = 3_000;
/** Sessions that went quiet without a SessionEnd are looked for less often: that query reads every open session. */
const ABANDONED_SWEEP_EVERY_MS = 60_000;
setInterval(() => {
  if (stopping) return;
  try {
    if (store.jobs.counts().pending > 0) scheduleJobs();
  } catch (error) {
    log.warn('job sweep failed', { error });
  }
  // What other processes wrote reaches the text index between saves; one the change log no longer reaches back to
  // is built again in the worker rather than by the next save.
  try {
    if (textsHeld && !textsWarming && !syncTextIndex(store)) void warmTexts();
  } catch (error) {
    log.warn('text index sync failed', { error });
  }
}, JOB_SWEEP_EVERY_MS).unref();
setInterval(() => {
  if (stopping) return;
  try {
    const abandoned = queueAbandonedSessions(store, new Date());
    if (abandoned > 0) {
      log.info('queued the work of sessions that ended without a SessionEnd', { sessions: abandoned });
      scheduleJobs();
    }
  } catch (error) {
    log.warn('abandoned-session sweep failed', { error });
  }
}, ABANDONED_SWEEP_EVERY_MS).unref();

/** Whether the embedder settings resolve to another model now (engram model pull, config.json, ENGRAM_MODEL). */
function modelChanged(): boolean {
  if (settings.config.embed.provider === 'none') return false;
  const now = resolveEmbedder(liveSettings());
  return (now.spec ? vectorModelId(now.spec) : null) !== activeModel;
}

setInterval(() => {
  if (stopping) return;
  if (!existsSync(settings.paths.home)) return shutdown('home removed');
  // The next hook starts a server with the new model; it re-embeds in the background and serves the old vectors
  // until that is done (services/recall: loadModel).
  if (!foreground && busy === 0 && modelChanged()) return shutdown('the embedding model changed');
  if (lockOwner(paths.lock) !== process.pid) return shutdown('lock lost');
  if (!existsSync(paths.socket)) return shutdown('socket removed');
  mailbox?.sweep();
  if (busy === 0 && Date.now() - lastActivity > idleMs) return shutdown('idle');
  if (warm) keepCandidateFields();
}, Math.min(WATCH_EVERY_MS, idleMs)).unref();
