/**
 * A real HTTP API on an ephemeral loopback port, in this process: the app the warm server builds (src/http), over a
 * store in a temporary home and the operations catalog, driven with fetch.
 */
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { createLogger, loadSettings, readEnv, type Store } from '../../src/core/index.js';
import { createHttpApp, HTTP_ACTOR, HTTP_CALLER, listenHttp, type Binding, type HttpListener } from '../../src/http/index.js';
import { createSearchEngine, runOperation, searchTuning, workEnvironment, type Caller } from '../../src/services/ops/index.js';
import { tempDir, tempStore } from '../_helpers.js';

const listeners: HttpListener[] = [];
afterEach(async () => {
  while (listeners.length) await listeners.pop()?.close();
});

/** A started API: its URL, its store, and a fetch bound to it. */
export interface TestApi {
  url: string;
  port: number;
  store: Store;
  home: string;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** fetch, then the JSON body with the status. */
  json(path: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers }>;
}

export async function startApi(options: { store?: Store; token?: string; timeoutMs?: number; host?: string } = {}): Promise<TestApi> {
  const home = tempDir();
  const store = options.store ?? tempStore();
  const env = readEnv({ HOME: home, ENGRAM_HOME: home, ENGRAM_EMBEDDER: 'none' });
  const settings = loadSettings(env);
  const log = createLogger({ dir: join(home, 'logs'), level: 'debug', name: 'server' });
  const engine = createSearchEngine(store, { embedder: null, indexDir: join(home, 'index'), tuning: searchTuning(settings.config) });
  const caller: Caller = { ...HTTP_CALLER, cwd: home };
  const binding: Binding = { host: options.host ?? '127.0.0.1', port: 0, remote: options.token !== undefined };
  const app = createHttpApp({
    run: (name, params) =>
      runOperation(name, params, {
        store,
        settings,
        caller,
        actor: HTTP_ACTOR,
        search: (request) => engine.search(request),
        searchMode: 'bm25',
        model: null,
        environment: (cwd, agent) => workEnvironment(settings, cwd, agent),
        now: () => new Date(),
      }),
    log,
    binding,
    token: options.token,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
  const { state, listener } = await listenHttp(app, binding);
  if (state.state !== 'listening' || !listener) throw new Error(`API did not start: ${JSON.stringify(state)}`);
  listeners.push(listener);
  const url = state.url;
  const fetchApi = (path: string, init?: RequestInit): Promise<Response> => fetch(`${url}${path}`, init);
  return {
    url,
    port: state.port,
    store,
    home,
    fetch: fetchApi,
    async json(path, init) {
      const response = await fetchApi(path, init);
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: the test sees the text.
      }
      return { status: response.status, body, headers: response.headers };
    },
  };
}

/** A JSON POST/PATCH init. */
export const send = (method: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method,
  headers: { 'content-type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
