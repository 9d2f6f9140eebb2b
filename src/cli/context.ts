import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createLogger,
  loadSettings,
  openStore,
  readEnv,
  resolveEmbedder,
  type EngramEnv,
  type Logger,
  type Settings,
  type Store,
} from '../core/index.js';
import { createSearchEngine, searchTuning, type SearchEngine } from '../services/index.js';
import type { Output } from './output.js';

/** Everything a command may touch; `runCli` builds it from the real process, tests from fakes. */
export interface CliIo extends Output {
  stdin: NodeJS.ReadableStream;
  env: Record<string, string | undefined>;
  cwd: string;
  now: () => Date;
}

/** Per-invocation state shared by the commands: lazily loaded settings and store, closed at the end. */
export interface CliContext {
  io: CliIo;
  /** The install folder (hooks/run.cjs, bin/engram, fixtures/): `$ENGRAM_INSTALL_ROOT` when bin/engram runs the CLI
   * from a runtime folder outside it, else the folder the running CLI was built in. */
  installRoot: string;
  /** The environment as Engram reads it (`--home` becomes `ENGRAM_HOME`). */
  env(): EngramEnv;
  /** Loads settings once; `--home` overrides `$ENGRAM_HOME`. */
  settings(): Settings;
  /** Opens the store once. */
  store(): Store;
  /** `$ENGRAM_HOME/logs/cli.log`: warnings that must not pollute stdout. */
  log(): Logger;
  /** A search engine over the store with the configured embedder (loaded on first vector search). */
  searchEngine(): SearchEngine;
  close(): void;
}

/** The install folder of the running bundle: dist/cli.mjs → one level up; src/cli/context.ts (tests) → two. */
function defaultInstallRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.endsWith('/src/cli') ? dirname(dirname(here)) : dirname(here);
}

/** Creates the context for one CLI run. */
export function createCliContext(io: CliIo, options: { home?: string; installRoot?: string } = {}): CliContext {
  let settings: Settings | undefined;
  let store: Store | undefined;
  let logger: Logger | undefined;
  let engine: SearchEngine | undefined;
  const vars = options.home ? { ...io.env, ENGRAM_HOME: options.home } : io.env;
  const context: CliContext = {
    io,
    installRoot: options.installRoot ?? readEnv(io.env, { cwd: io.cwd }).installRoot ?? defaultInstallRoot(),
    env: () => readEnv(vars, { cwd: io.cwd }),
    settings() {
      settings ??= loadSettings(context.env());
      return settings;
    },
    store() {
      const current = context.settings();
      store ??= openStore({ path: current.paths.db, busyTimeoutMs: current.config.store.busy_timeout_ms });
      return store;
    },
    log() {
      const current = context.settings();
      logger ??= createLogger({ dir: current.paths.logs, name: 'cli', level: current.config.log.level, maxBytes: current.config.log.max_bytes });
      return logger;
    },
    searchEngine() {
      const current = context.settings();
      engine ??= createSearchEngine(context.store(), {
        embedder: resolveEmbedder(current),
        indexDir: current.paths.index,
        tuning: searchTuning(current.config),
        batchSize: current.config.embed.batch_size,
        now: io.now,
        onWarning: (message, error) => context.log().warn(message, error === undefined ? {} : { error }),
      });
      return engine;
    },
    close() {
      store?.close();
    },
  };
  return context;
}
