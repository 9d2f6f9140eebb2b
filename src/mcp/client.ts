/**
 * How the MCP server runs an operation: it asks the warm background server over its socket (one store, one index,
 * one model for hooks and MCP alike), starting it when none runs, as hooks do. Only when the server cannot answer —
 * switched off, failing to start, another Engram version — does it run the operation itself (inprocess.ts, loaded
 * on demand). A write whose request reached the server but got no answer is never re-run elsewhere: it may have been
 * applied, so the agent is told so instead.
 * @module
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EngramError, VERSION, type ErrorCode, type Logger, type Settings } from '../core/index.js';
import { serverPaths } from '../server/address.js';
import { callServer } from '../server/call.js';
import { startServer } from '../server/client.js';
import type { ServerReply } from '../server/protocol.js';
import type { Caller } from '../services/ops/index.js';
import type { InProcessRunner } from './inprocess.js';

/**
 * Operations that never need the store's warm state: run where the caller is (explain reads tape files, a doc entry
 * the repository's docs). Kept in
 * step with the catalog's `local` flags by a test (importing the catalog here would load every service).
 */
export const LOCAL = new Set(['engram.explain', 'obs.suggest_topic_key', 'docs.entry']);
/** Operations that do not write (the catalog's `writes: false`): safe to answer in-process after a server that took too long. */
export const READS = new Set([
  'engram.search', 'engram.list', 'engram.status', 'engram.explain', 'engram.why', 'context.recall', 'docs.entry',
  'obs.get', 'obs.search', 'obs.recent', 'obs.timeline', 'obs.context', 'obs.stats', 'obs.suggest_topic_key',
  'session.recent', 'prompt.recent', 'prompt.search', 'go.export',
]);

/** How long a call may take in the server (a first search builds the BM25 index of a large store). */
const CALL_TIMEOUT_MS = 30_000;
/** How long to wait for a server this process started to listen. */
const START_WAIT_MS = 5_000;
/** After a server failed to start, calls run in-process for this long before starting one is tried again. */
const RETRY_START_MS = 30_000;

/** Where an answer came from (for the log and the benchmark). */
export type AnsweredBy = 'server' | 'in-process' | 'local';

export interface OpsClient {
  /** The result, who answered, and (from the server) how long the operation itself took there. */
  call(method: string, params: unknown, caller: Caller): Promise<{ result: unknown; by: AnsweredBy; serverMs?: number }>;
  close(): void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Options for {@link createOpsClient}. */
export interface OpsClientOptions {
  settings: Settings;
  log: Logger;
  /** The folder holding dist/server.mjs, dist/mcp-inprocess.mjs and their node_modules: the install folder when built
   * in place, else its runtime folder (a plugin install's folder holds neither). */
  runtimeDir: string;
}

export function createOpsClient(options: OpsClientOptions): OpsClient {
  const { settings, log } = options;
  const paths = serverPaths(settings.paths.home);
  const serverOn = settings.config.server.enabled;
  let runner: Promise<InProcessRunner> | undefined;
  let startFailedAt = 0;

  const inProcess = (): Promise<InProcessRunner> =>
    (runner ??= (async () => {
      // A computed URL, so the bundler keeps the store, search and services out of the MCP process until needed.
      const module = (await import(pathToFileURL(join(options.runtimeDir, 'dist', 'mcp-inprocess.mjs')).href)) as typeof import('./inprocess.js');
      return module.createInProcessRunner(settings, log);
    })());

  const runHere = async (method: string, params: unknown, caller: Caller, by: AnsweredBy) => ({
    result: await (await inProcess()).run(method, params, caller),
    by,
  });

  /** Starts a server and waits until it listens; false when it did not come up (it is not tried again for a while). */
  const startAndWait = async (): Promise<boolean> => {
    if (Date.now() - startFailedAt < RETRY_START_MS) return false;
    startServer({ paths, runtimeDir: options.runtimeDir, home: settings.paths.home, logs: settings.paths.logs });
    const deadline = Date.now() + START_WAIT_MS;
    while (Date.now() < deadline) {
      await sleep(50);
      const ping = await callServer<ServerReply>(paths.socket, { v: 1, op: 'ping' }, 1_000);
      if (ping.kind === 'answer' && ping.answer.ok) return true;
    }
    startFailedAt = Date.now();
    log.warn('the background server did not start; answering in-process', { socket: paths.socket });
    return false;
  };

  const ask = (method: string, params: unknown, caller: Caller) =>
    callServer<ServerReply>(paths.socket, { v: 1, op: 'call', version: VERSION, method, params, caller }, CALL_TIMEOUT_MS);

  return {
    async call(method, params, caller) {
      if (LOCAL.has(method)) return runHere(method, params, caller, 'local');
      if (!serverOn) return runHere(method, params, caller, 'in-process');
      let outcome = await ask(method, params, caller);
      if (outcome.kind === 'unreachable' && (await startAndWait())) outcome = await ask(method, params, caller);
      if (outcome.kind === 'unreachable') return runHere(method, params, caller, 'in-process');
      if (outcome.kind === 'no-answer') {
        if (READS.has(method)) {
          log.warn('the background server did not answer; answering in-process', { method, reason: outcome.reason });
          return runHere(method, params, caller, 'in-process');
        }
        throw new EngramError(
          'STORE_UNAVAILABLE',
          `the Engram server took the request but did not answer (${outcome.reason}); the change may or may not have been applied — check before repeating it`,
        );
      }
      const reply = outcome.answer;
      if (!reply.ok) {
        // Another Engram version's server does not answer us (a newer one steps aside and the next call starts ours).
        if (reply.error === 'version') return runHere(method, params, caller, 'in-process');
        throw new EngramError('INTERNAL', `the Engram server refused the request: ${reply.error}`);
      }
      if (reply.op !== 'call') throw new EngramError('INTERNAL', `unexpected answer from the Engram server (${reply.op})`);
      if ('error' in reply) throw new EngramError(reply.error.code as ErrorCode, reply.error.message);
      return { result: reply.result, by: 'server', serverMs: reply.ms };
    },
    close() {
      void runner?.then((loaded) => loaded.close()).catch(() => {});
    },
  };
}
