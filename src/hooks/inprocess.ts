/**
 * The fallback path: the hook answers by itself, with BM25 alone (loading an embedding model here would cost more
 * than the hook's whole budget), and starts the background server for the next hook. Loaded only when the server
 * did not answer, so the fast path never parses this code.
 * @module
 */
import BundledSqlite from 'better-sqlite3';
import {
  createLogger,
  isEngramError,
  loadSettingsLeniently,
  openStore,
  readEnv,
  useBundledSqlite,
  type Store,
} from '../core/index.js';
import { createSearchEngine, searchTuning } from '../services/index.js';
import { startBootstrap } from '../../scripts/install-state.mjs';
import { serverPaths } from '../server/address.js';
import { ask } from '../server/ask.js';
import { startServer } from '../server/client.js';
import { handleHookCall, type HookCall } from './dispatch.js';
import { hookEnvironment } from './environment.js';
import type { HookRuntime } from './events.js';

/** Why the in-process path ran, for the log. */
export type FallbackReason = 'server-off' | 'no-answer' | 'stdin-problem';

/** Runs one hook in this process and returns what to print. Never throws. */
export async function runInProcess(
  call: HookCall,
  options: {
    reason: FallbackReason;
    /** With `no-answer`: why the server did not answer (written to the hook log with the answer). */
    serverFailure?: string;
    /** The install folder (the plugin root): what the bootstrap is started for. */
    installRoot: string;
    /** The folder holding the bundles and dependencies (the install folder itself when built in place). */
    runtimeDir?: string;
    env?: Record<string, string | undefined>;
    /** How long loading this bundle took the fast path, and whether V8 had its code cache (fallback-loader.ts). */
    loaded?: { ms: number; codeCache: string };
  },
): Promise<string> {
  // This bundle carries better-sqlite3's JavaScript (scripts/build.mjs): compiled from the code cache, not node_modules.
  useBundledSqlite(BundledSqlite);
  const env = readEnv(options.env ?? process.env);
  const { settings, configError } = loadSettingsLeniently(env);
  const log = createLogger({
    dir: settings.paths.logs,
    name: 'hooks',
    level: settings.config.log.level,
    maxBytes: settings.config.log.max_bytes,
  });
  if (configError) log.warn('config.json is invalid; using defaults', { event: call.event, error: configError.message });
  const home = settings.paths.home;
  const paths = serverPaths(home);
  const serverWanted = settings.config.server.enabled && options.reason !== 'stdin-problem';
  const runtimeDir = options.runtimeDir ?? options.installRoot;
  const vars = options.env ?? process.env;
  const wakeServer = (): void => {
    if (serverWanted) startServer({ paths, runtimeDir, home, logs: settings.paths.logs, env: vars });
  };
  /** Queued jobs run in the server (woken, or started), or — when it is switched off — in a one-off process. */
  const runJobs = async (): Promise<void> => {
    if (settings.config.server.enabled) {
      // A running server that did not answer in time still takes a wake; otherwise start one (it drains at start,
      // and sweeps for pending jobs every few seconds if it was starting already).
      if (!(await ask(paths.socket, { v: 1, op: 'wake' }, 300))) wakeServer();
    } else {
      startServer({ paths, runtimeDir, home, logs: settings.paths.logs, drainOnly: true, env: vars });
    }
  };

  let store: Store | undefined;
  const openHookStore = (): Store =>
    (store ??= openStore({ path: settings.paths.db, busyTimeoutMs: settings.config.hooks.busy_timeout_ms }));
  const runtime: HookRuntime = {
    settings,
    log,
    now: () => new Date(),
    store: openHookStore,
    inject: {
      mode: 'bm25',
      answeredBy: 'in-process',
      embedderKind: () => null,
      search: (request) =>
        createSearchEngine(openHookStore(), {
          embedder: null,
          indexDir: settings.paths.index,
          tuning: searchTuning(settings.config),
          onWarning: (message, error) => log.warn(message, { event: call.event, error }),
        }).search(request),
    },
    environment: (cwd, agent) => hookEnvironment(settings, cwd, agent),
    wake: runJobs,
    fallback: options.reason === 'no-answer' ? (options.serverFailure ?? 'no-answer') : options.reason,
    ...(options.loaded ? { loaded: { load_ms: options.loaded.ms, code_cache: options.loaded.codeCache } } : {}),
  };
  let answered = false;
  try {
    const answer = await handleHookCall(call, runtime);
    // Garbage on stdin is not a reason to start anything.
    answered = answer.outcome !== 'ignored';
    if (answered) log.debug('answered in-process', { event: call.event, reason: options.reason });
    if (isEngramError(answer.error, 'NATIVE_MODULE_MISSING')) {
      // Built for another Node (the user upgraded Node): rebuild in the background for the next hook.
      startBootstrap(options.installRoot, { home, reason: `hook ${call.event}: native module failed`, rebuildNative: true });
    }
    return answer.stdout;
  } finally {
    try {
      store?.close();
    } catch {
      // Closing cannot fail in a way the agent should see.
    }
    // The next hook should find the server warm.
    if (answered && options.reason === 'no-answer') wakeServer();
  }
}
