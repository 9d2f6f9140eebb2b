/**
 * The MCP server's fallback: runs operations in its own process when the background server cannot answer (switched
 * off, cannot start, another version). Loaded only then, with a dynamic import, so a normal MCP process never opens
 * the store or builds an index of its own. Search here is BM25 from the persisted snapshot; no model is loaded.
 * @module
 */
import { openStore, type Logger, type Settings, type Store } from '../core/index.js';
import { createSearchEngine, MCP_AGENT, runOperation, searchTuning, workEnvironment, type Caller, type SearchEngine } from '../services/ops/index.js';

/** Runs operations in this process; the store and the engine open on first use and stay open until `close`. */
export interface InProcessRunner {
  run(method: string, params: unknown, caller: Caller): Promise<unknown>;
  close(): void;
}

export function createInProcessRunner(settings: Settings, log: Logger): InProcessRunner {
  let store: Store | undefined;
  let engine: SearchEngine | undefined;
  const openedStore = (): Store =>
    (store ??= openStore({ path: settings.paths.db, busyTimeoutMs: settings.config.store.busy_timeout_ms }));
  return {
    run(method, params, caller) {
      return runOperation(method, params, {
        get store() {
          return openedStore();
        },
        settings,
        caller,
        // The MCP process answering for the server it could not reach: the agent, as the server would have it.
        actor: MCP_AGENT,
        search(request) {
          engine ??= createSearchEngine(openedStore(), {
            embedder: null,
            indexDir: settings.paths.index,
            tuning: searchTuning(settings.config),
            onWarning: (message, error) => log.warn(message, { error }),
          });
          return engine.search(request);
        },
        searchMode: 'bm25',
        model: null,
        environment: (cwd, agent) => workEnvironment(settings, cwd, agent),
        now: () => new Date(),
      });
    },
    close() {
      try {
        store?.close();
      } catch {
        // Closing on exit cannot fail in a way the agent should see.
      }
    },
  };
}
