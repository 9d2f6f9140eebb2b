import { storeSize, VERSION, type EngramCounts, type Settings, type Store } from '../../core/index.js';
import { EVALUATION } from '../learn/index.js';
import { installStatus, type InstallStatus } from './install.js';
import { embeddingStatus, type EmbeddingStatus } from '../recall/index.js';

/** `engram status`: what is stored and where. */
export interface StatusReport {
  version: string;
  home: string;
  config: { path: string; source: 'file' | 'defaults' };
  store: { path: string; schema_version: number; journal_mode: string; db_bytes: number; wal_bytes: number };
  engrams: EngramCounts;
  sessions: { total: number; open: number; prompts: number; last_started_at: string | null };
  /**
   * Evaluations by state; `retrying`: failed with attempts left (an unusable LLM answer, a failing model, a spent
   * budget), asked again at the next drain; `gave_up`: failed three times; `unusable_answer`: of the failed, those whose
   * last answer was unusable.
   */
  evaluations: { pending: number; running: number; completed: number; skipped: number; retrying: number; gave_up: number; unusable_answer: number };
  logs: string;
  /** Where the code runs from and any first-run bootstrap in progress (present when the caller names its install). */
  install?: InstallStatus;
  /** The active embedding model, its coverage, and the re-embedding under way after a model change. */
  embeddings: EmbeddingStatus;
}

/** Reads the store's counts in one snapshot, and the install's state when `options.installRoot` is given. */
export function storeStatus(
  store: Store,
  settings: Settings,
  options: { installRoot?: string; vars?: Record<string, string | undefined> } = {},
): StatusReport {
  const install = options.installRoot ? installStatus(options.installRoot, settings.paths.home, options.vars) : undefined;
  return store.read(() => {
    const sessions = store.sessions.counts();
    return {
      version: VERSION,
      home: settings.paths.home,
      config: { path: settings.paths.config, source: settings.configSource },
      store: {
        path: store.path,
        schema_version: store.migration.to,
        journal_mode: String(store.db.pragma('journal_mode', { simple: true })),
        ...storeSize(store.path),
      },
      engrams: store.engrams.counts(),
      sessions: {
        total: sessions.sessions,
        open: sessions.open_sessions,
        prompts: sessions.prompts,
        last_started_at: sessions.last_started_at,
      },
      evaluations: (() => {
        const { pending, running, completed, skipped } = store.activity.evaluationCounts();
        return { pending, running, completed, skipped, ...store.activity.evaluationRetries(EVALUATION.maxAttempts) };
      })(),
      logs: settings.paths.logs,
      ...(install ? { install } : {}),
      embeddings: embeddingStatus(store, settings),
    };
  });
}
