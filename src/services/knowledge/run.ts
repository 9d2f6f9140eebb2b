import type { FSWatcher } from 'chokidar';
import type { EngramEnv } from '../../core/index.js';
import type { FoldAgent } from './agent.js';
import { chunkBudget } from './chunk.js';
import type { KnowledgeConfig } from './config.js';
import { buildDispatch, runDispatch, type DispatchContext, type DispatchEvent } from './dispatch.js';
import { recoverDispatches } from './recover.js';
import { readDocSet } from './docset.js';
import { decide, driftItems, scanDrift, type Decision, type DriftReport } from './drift.js';
import { acquireRunLock } from './_lock.js';
import { fileItem, ownAbsolutePaths, pollGit, pollSessions, scanFolders, watchedFolders, type SessionMemory } from './sources.js';
import {
  clearPendingDrift,
  dispatchesIn,
  enqueue,
  pendingItems,
  serverState,
  sessionCursor,
  setServerState,
  type BufferItem,
  type KnowledgeState,
} from './state.js';

/**
 * `engram run` (seed 002, "Server Mechanics"): a foreground loop, supervised by the user's process manager. It
 * recovers unfinished dispatches, then every `dispatch.poll_seconds` polls git and the session history, while a
 * watcher (chokidar) reports changes in the doc and issue folders as they happen; drift is rescanned, and when the
 * rule says so one chunk is dispatched. Dispatches are serial: what arrives meanwhile waits in the buffer.
 */

/** What the loop reports besides dispatches. */
export type RunEvent =
  | { type: 'started'; root: string; agent: string; watching: string[]; recovered: number }
  | { type: 'poll'; commits: number; files: number; sessions: number; drift: number; decision: Decision }
  | ({ type: 'dispatch' } & DispatchEvent)
  | { type: 'error'; message: string }
  | { type: 'stopped'; dispatches: number };

/** Options of {@link runServer}. */
export interface RunOptions {
  root: string;
  config: KnowledgeConfig;
  state: KnowledgeState;
  agent: FoldAgent;
  /** The agents' folders, for session history. */
  env: Pick<EngramEnv, 'home' | 'claudeConfigDir' | 'codexHome' | 'userHome'>;
  now?: () => Date;
  /** Stops the loop (and a running agent; its dispatch is recovered at the next start). */
  signal?: AbortSignal;
  /** One poll and at most one dispatch, without waiting for the settle time, then return. @default false */
  once?: boolean;
  /** Poll interval override, seconds. @default config.dispatch.poll_seconds */
  pollSeconds?: number;
  onEvent?: (event: RunEvent) => void;
}

/** Drift dispatched in the last week is not raised again: the agent looked at it. */
const DRIFT_COOLDOWN_MS = 7 * 86_400_000;

function recentlyHandledDrift(state: KnowledgeState, now: Date): Set<string> {
  const since = new Date(now.getTime() - DRIFT_COOLDOWN_MS).toISOString();
  const rows = state.db
    .prepare(
      `SELECT b.ref FROM buffer_items b JOIN dispatches d ON d.id = b.dispatch_id
       WHERE b.source = 'drift' AND d.state = 'committed' AND d.committed_at >= ?`,
    )
    .all(since) as Array<{ ref: string }>;
  return new Set(rows.map((row) => row.ref));
}

/** Session items of the last 30 days, pending or not: repetitions span dispatches. */
function recentSessions(state: KnowledgeState, now: Date): BufferItem[] {
  const since = new Date(now.getTime() - 30 * 86_400_000).toISOString();
  return (state.db.prepare("SELECT * FROM buffer_items WHERE source = 'session' AND kind = 'session' AND date >= ? ORDER BY date LIMIT 2000").all(since) as Array<BufferItem & { detail: string }>).map(
    (row) => ({ ...row, detail: JSON.parse(row.detail as unknown as string) as Record<string, unknown> }),
  );
}

/** Rescans drift, replaces the pending drift items, and returns the report with handled drift left out. */
export function refreshDrift(root: string, config: KnowledgeConfig, state: KnowledgeState, now: Date): DriftReport {
  const set = readDocSet(config, root);
  const report = scanDrift(root, config, set, state, recentSessions(state, now), now);
  const handled = recentlyHandledDrift(state, now);
  const items = driftItems(report, now).filter((item) => !handled.has(item.ref));
  const keep = new Set(items.map((item) => item.ref));
  const filtered: DriftReport = {
    orphans: report.orphans.filter((concept) => keep.has(`orphan:${concept.id}`)),
    contested: report.contested.filter((claim) => keep.has(`contested:${claim.id}`)),
    stale: report.stale.filter((claim) => keep.has(`stale:${claim.id}`)),
    workflows: report.workflows.filter((workflow) => keep.has(`workflow:${workflow.key}`)),
    triggered: [],
  };
  if (filtered.orphans.length > config.thresholds.orphan_triage) filtered.triggered.push('orphans');
  if (filtered.contested.length > config.thresholds.contested_count) filtered.triggered.push('contested');
  if (filtered.stale.length > config.thresholds.stale_count) filtered.triggered.push('stale');
  if (filtered.workflows.length > 0) filtered.triggered.push('workflows');
  clearPendingDrift(state);
  enqueue(state, items, now);
  return filtered;
}

/** One poll: new commits and sessions into the buffer, drift rescanned. */
export function pollOnce(options: Pick<RunOptions, 'root' | 'config' | 'state' | 'env'> & { now: Date; memory: SessionMemory }): { commits: number; sessions: number; drift: DriftReport } {
  const { root, config, state, now } = options;
  const server = serverState(state);
  const git = pollGit(root, config, server.last_poll_commit, server.last_poll_at);
  enqueue(state, git.items, now);
  const sessions = pollSessions(root, config, options.env, (path) => sessionCursor(state, path), options.memory);
  enqueue(state, sessions, now);
  setServerState(state, { last_poll_commit: git.head ?? server.last_poll_commit, last_poll_at: now.toISOString() });
  const drift = refreshDrift(root, config, state, now);
  return { commits: git.items.length, sessions: sessions.filter((item) => item.chars > 0).length, drift };
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** Runs the knowledge server until `signal` aborts (or once). Takes the one-writer lock for its whole life. */
export async function runServer(options: RunOptions): Promise<{ dispatches: number }> {
  const { root, config, state } = options;
  const now = options.now ?? (() => new Date());
  const emit = options.onEvent ?? (() => {});
  const lock = acquireRunLock(root, options.once ? 'engram run --once' : 'engram run');
  let watcher: FSWatcher | undefined;
  let dispatches = 0;
  const context: DispatchContext = {
    root,
    config,
    state,
    agent: options.agent,
    now,
    ...(options.signal ? { signal: options.signal } : {}),
    onEvent: (event) => emit({ type: 'dispatch', ...event }),
  };
  try {
    const open = dispatchesIn(state, ['building', 'dispatched', 'retry', 'validated']);
    await recoverDispatches(context, open);
    const started = now();
    // What changed in the watched folders while the server was not running.
    const scanned = scanFolders(root, config, serverState(state).last_scan_at, started);
    enqueue(state, scanned, started);
    setServerState(state, { last_scan_at: started.toISOString() });
    const folders = watchedFolders(config, root);
    if (!options.once && folders.length > 0) {
      const own = ownAbsolutePaths(config, root);
      const sourceOf = (path: string) => folders.find((folder) => path === folder.path || path.startsWith(`${folder.path}/`))?.source ?? 'doc';
      // Loaded here, not at import: the watcher is only the server's (and esbuild keeps it out of the shared bundle).
      const { watch } = await import('chokidar');
      watcher = watch(
        folders.map((folder) => folder.path),
        { ignoreInitial: true, ignored: (path: string) => own.has(path) || /(^|\/)(\.git|node_modules)(\/|$)/.test(path), awaitWriteFinish: { stabilityThreshold: 300, pollInterval: 100 } },
      );
      const onChange = (removed: boolean) => (path: string) => {
        try {
          const item = fileItem(root, config, sourceOf(path), path, removed, now());
          if (item) enqueue(state, [item], now());
          setServerState(state, { last_scan_at: now().toISOString() });
        } catch (error) {
          emit({ type: 'error', message: `watcher: ${(error as Error).message}` });
        }
      };
      watcher.on('add', onChange(false)).on('change', onChange(false)).on('unlink', onChange(true));
      watcher.on('error', (error) => emit({ type: 'error', message: `watcher: ${(error as Error).message}` }));
      await new Promise<void>((resolve) => watcher!.once('ready', () => resolve()));
    }
    emit({ type: 'started', root, agent: options.agent.describe, watching: folders.map((folder) => folder.path), recovered: open.length });

    const memory: SessionMemory = new Map();
    for (;;) {
      if (options.signal?.aborted) break;
      const at = now();
      const polled = pollOnce({ root, config, state, env: options.env, now: at, memory });
      const pending = pendingItems(state);
      const set = readDocSet(config, root);
      const docsChars = Object.values(set.texts).reduce((sum, text) => sum + (text?.length ?? 0), 0);
      const held = dispatchesIn(state, ['held'])[0]?.id ?? null;
      const decision = decide(pending, polled.drift, serverState(state), {
        budget: chunkBudget(config, docsChars),
        settleSeconds: config.dispatch.settle_seconds,
        now: at,
        force: options.once ?? false,
        held,
      });
      emit({ type: 'poll', commits: polled.commits, files: scanned.length, sessions: polled.sessions, drift: pending.filter((item) => item.source === 'drift').length, decision });
      if (decision.dispatch) {
        try {
          const dispatch = buildDispatch(context, { kind: 'fold', items: pending });
          if (dispatch) {
            dispatches++;
            await runDispatch(context, dispatch);
          }
        } catch (error) {
          emit({ type: 'error', message: (error as Error).message });
        }
      }
      if (options.once) break;
      await sleep((options.pollSeconds ?? config.dispatch.poll_seconds) * 1000, options.signal);
    }
  } finally {
    await watcher?.close();
    lock.release();
    emit({ type: 'stopped', dispatches });
  }
  return { dispatches };
}
