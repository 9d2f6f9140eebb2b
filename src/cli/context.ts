import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createLlmClient,
  createLogger,
  loadSettings,
  openStore,
  readEnv,
  resolveEmbedder,
  choiceForModel,
  loadEmbedder,
  type EngramEnv,
  type LlmClient,
  type Logger,
  type Settings,
  type Store,
} from '../core/index.js';
import { createSearchEngine, governancePolicy, searchTuning, syncJournal, type GovernancePolicy, type SearchEngine } from '../services/index.js';
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
  /** The folder the running CLI's bundles and node_modules are in: the install folder when built in place, else the
   * runtime folder bin/engram found (what starts dist/server.mjs and loads the other bundles). */
  runtimeDir: string;
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
  /** config.json `governance` (tiers, autopromote, decay). */
  governance(): GovernancePolicy;
  /** The configured LLM (`none` when there is none), for conflict checks; usage counted in the store. */
  llm(): LlmClient;
  close(): void;
}

/**
 * The folder of the running bundle: dist/ → one level up, dist/chunks/ (where the bundler puts the code the
 * CLI loads on demand) → two, src/cli/context.ts (tests) → two.
 */
function bundleRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.endsWith('/src/cli') || here.endsWith('/dist/chunks') ? dirname(dirname(here)) : dirname(here);
}

/** Creates the context for one CLI run. */
export function createCliContext(io: CliIo, options: { home?: string; installRoot?: string } = {}): CliContext {
  let settings: Settings | undefined;
  let store: Store | undefined;
  let logger: Logger | undefined;
  let engine: SearchEngine | undefined;
  let llm: LlmClient | undefined;
  const vars = options.home ? { ...io.env, ENGRAM_HOME: options.home } : io.env;
  const context: CliContext = {
    io,
    installRoot: options.installRoot ?? readEnv(io.env, { cwd: io.cwd }).installRoot ?? bundleRoot(),
    runtimeDir: bundleRoot(),
    env: () => readEnv(vars, { cwd: io.cwd }),
    settings() {
      settings ??= loadSettings(context.env());
      return settings;
    },
    store() {
      const current = context.settings();
      if (!store) {
        store = openStore({ path: current.paths.db, busyTimeoutMs: current.config.store.busy_timeout_ms });
        // Audit rows committed by a process that died before appending them to audit.jsonl are appended now.
        const journal = syncJournal(store);
        if (journal.error) context.log().warn('audit journal not brought up to date', { error: journal.error });
      }
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
        loadModel: async (modelId) => {
          const choice = choiceForModel(current, modelId);
          return choice.spec ? loadEmbedder(choice.spec) : null;
        },
        onWarning: (message, error) => context.log().warn(message, error === undefined ? {} : { error }),
      });
      return engine;
    },
    governance: () => governancePolicy(context.settings().config),
    llm() {
      llm ??= createLlmClient(context.settings(), { store: context.store(), log: context.log() });
      return llm;
    },
    close() {
      store?.close();
    },
  };
  return context;
}
