import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EngramError, type EngramEnv } from '../../core/index.js';
import { adoptDocs, type AdoptReport } from './adopt.js';
import type { FoldAgent } from './agent.js';
import { readBriefing } from './briefing.js';
import { loadKnowledgeConfig, type KnowledgeConfig } from './config.js';
import { compactIfLarge, type DispatchContext, type DispatchEvent, type DispatchOutcome } from './dispatch.js';
import { reviewDispatch } from './recover.js';
import { committedGraveyards, definedIds, lintDocSet, readDocSet } from './docset.js';
import { correctionBlock, appendBlock, moveToGraveyard } from './graveyard.js';
import { counters } from './ids.js';
import { continuationDate, foldForward, markSessionsRead, prepareProject, repositoryRoot, seedFromDate, seedFromToday, syncProjectCounters, type PrepareResult } from './init.js';
import { acquireRunLock, LOCK_FILE } from './_lock.js';
import type { Violation } from './lint.js';
import { parseDoc } from './parse.js';
import { runServer, type RunEvent } from './run.js';
import { headCommit } from './sources.js';
import { writeFileAtomic } from './_atomic.js';
import { gitOutput } from './_git.js';
import { checkPointers } from './pointers.js';
import { dispatchesIn, openState, pendingItems, recentDispatches, serverState, setServerState, type Dispatch, type KnowledgeState } from './state.js';

/**
 * The knowledge docs as the surfaces see them: one function per command (`engram docs …`, `engram fold`,
 * `engram run`), each opening what it needs and closing it again. Surfaces parse arguments and print; everything else
 * is here.
 */

/** The agents' folders (session history) and Engram's home. */
export type KnowledgeEnv = Pick<EngramEnv, 'home' | 'claudeConfigDir' | 'codexHome' | 'userHome'>;

/** Builds the fold agent once the project's config is known (the CLI passes Engram's LLM client in command mode). */
export type AgentFactory = (config: KnowledgeConfig) => FoldAgent;

/** The repository and its validated config. */
export function openProject(cwd: string): { root: string; config: KnowledgeConfig } {
  const root = repositoryRoot(cwd);
  return { root, config: loadKnowledgeConfig(root) };
}

/** Result of {@link lintProject}. */
export interface LintReport {
  root: string;
  ok: boolean;
  files: number;
  chars: number;
  entries: number;
  violations: Violation[];
  ms: number;
}

/** `engram docs lint`: every rule over the six docs, the graveyards checked against their last commit. */
export function lintProject(options: { cwd: string }): LintReport {
  const { root, config } = openProject(options.cwd);
  const started = performance.now();
  const set = readDocSet(config, root);
  const violations = lintDocSet(set, config, { graveyardBaseline: committedGraveyards(set, root) });
  const texts = Object.values(set.texts);
  return {
    root,
    ok: violations.length === 0,
    files: texts.length,
    chars: texts.reduce((sum, text) => sum + (text?.length ?? 0), 0),
    entries: definedIds(set).size,
    violations,
    ms: Math.round(performance.now() - started),
  };
}

function withState<T>(root: string, fn: (state: KnowledgeState) => T): T {
  const state = openState(root);
  try {
    return fn(state);
  } finally {
    state.close();
  }
}

async function withStateAsync<T>(root: string, fn: (state: KnowledgeState) => Promise<T>): Promise<T> {
  const state = openState(root);
  try {
    return await fn(state);
  } finally {
    state.close();
  }
}

/** Result of {@link projectStatus}. */
export interface StatusReport {
  root: string;
  server: { running: boolean; pid: number | null; since: string | null };
  buffer: { items: number; chars: number; by_source: Record<string, { items: number; chars: number }> };
  drift: { orphans: number; contested: number; stale: number; workflows: number; thresholds: KnowledgeConfig['thresholds'] };
  ids: { next: Record<'C' | 'E' | 'W', string> };
  dispatches: Array<Pick<Dispatch, 'id' | 'kind' | 'state' | 'retries' | 'items' | 'chars' | 'reserved' | 'error' | 'created_at' | 'committed_at'>>;
  needs_review: number[];
  last_poll_commit: string | null;
  last_poll_at: string | null;
  last_dispatch_time: string | null;
  continuation_date: string | null;
  backoff_until: string | null;
  briefing: { file: string; present: boolean };
}

/** `engram docs status`: buffer, drift, ids, the last dispatches and their states, and whether a server runs. */
export function projectStatus(options: { cwd: string; limit?: number }): StatusReport {
  const { root, config } = openProject(options.cwd);
  let lock: { pid?: number; since?: string } | null = null;
  try {
    lock = JSON.parse(readFileSync(join(root, LOCK_FILE), 'utf8')) as { pid?: number; since?: string };
  } catch {
    lock = null;
  }
  const running = lock?.pid !== undefined && (() => {
    try {
      process.kill(lock!.pid!, 0);
      return true;
    } catch {
      return false;
    }
  })();
  return withState(root, (state) => {
    const pending = pendingItems(state);
    const bySource: Record<string, { items: number; chars: number }> = {};
    for (const item of pending) {
      const bucket = (bySource[item.source] ??= { items: 0, chars: 0 });
      bucket.items++;
      bucket.chars += item.chars;
    }
    const count = (type: string) => pending.filter((item) => item.drift_type === type).length;
    const server = serverState(state);
    const next = counters(state);
    const pad = (prefix: 'C' | 'E' | 'W') => `${prefix}${String(next[prefix]).padStart(3, '0')}`;
    return {
      root,
      server: { running, pid: running ? lock!.pid! : null, since: running ? (lock!.since ?? null) : null },
      buffer: { items: pending.filter((item) => item.chars > 0).length, chars: server.buffer_chars_total, by_source: bySource },
      drift: { orphans: count('orphan'), contested: count('contested'), stale: count('stale'), workflows: count('workflow'), thresholds: config.thresholds },
      ids: { next: { C: pad('C'), E: pad('E'), W: pad('W') } },
      dispatches: recentDispatches(state, options.limit ?? 10).map((d) => ({
        id: d.id, kind: d.kind, state: d.state, retries: d.retries, items: d.items, chars: d.chars, reserved: d.reserved, error: d.error, created_at: d.created_at, committed_at: d.committed_at,
      })),
      needs_review: dispatchesIn(state, ['held']).map((d) => d.id),
      last_poll_commit: server.last_poll_commit,
      last_poll_at: server.last_poll_at,
      last_dispatch_time: server.last_dispatch_time,
      continuation_date: server.continuation_date,
      backoff_until: server.backoff_until,
      briefing: { file: config.briefing.file, present: readBriefing(root, config) !== null },
    };
  });
}

/** How `engram docs init` fills the docs. */
export type InitMode = { path: 'today' } | { path: 'date'; date: string } | { path: 'adopt'; continueFrom?: string } | { path: 'none' };

/** Result of {@link initProject}. */
export interface InitReport extends Omit<PrepareResult, 'config'> {
  mode: InitMode['path'];
  seed: Pick<Dispatch, 'id' | 'state'> | null;
  fold: Array<Pick<Dispatch, 'id' | 'state'>>;
  adopt: AdoptReport | null;
  ids: Record<'C' | 'E' | 'W', number>;
  continuation_date: string | null;
}

const brief = (outcome: DispatchOutcome) => ({ id: outcome.dispatch.id, state: outcome.dispatch.state });

/** `engram docs init --from-today | --from-date D | --adopt`: the opt-in, then one bootstrap path. */
export async function initProject(options: {
  cwd: string;
  mode: InitMode;
  agent: AgentFactory;
  env: KnowledgeEnv;
  now?: () => Date;
  signal?: AbortSignal;
  onEvent?: (event: DispatchEvent) => void;
}): Promise<InitReport> {
  const root = repositoryRoot(options.cwd);
  const now = options.now ?? (() => new Date());
  const prepared = prepareProject(root);
  const { config } = prepared;
  if ((options.mode.path === 'today' || options.mode.path === 'date') && prepared.hasEntries) {
    throw new EngramError('INVALID_INPUT', `the docs under ${root} already hold entries; adopt them with 'engram docs init --adopt', or fold new history with 'engram fold'`);
  }
  const lock = acquireRunLock(root, `engram docs init (${options.mode.path})`);
  try {
    return await withStateAsync(root, async (state) => {
      const context: DispatchContext = {
        root, config, state, agent: options.agent(config), now,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onEvent ? { onEvent: options.onEvent } : {}),
      };
      const report: InitReport = { root, created: prepared.created, hasEntries: prepared.hasEntries, mode: options.mode.path, seed: null, fold: [], adopt: null, ids: counters(state), continuation_date: null };
      if (options.mode.path === 'today') {
        report.seed = brief(await seedFromToday(context, options.env));
      } else if (options.mode.path === 'date') {
        const result = await seedFromDate(context, options.mode.date, options.env);
        report.seed = brief(result.seed);
        report.fold = result.fold.map(brief);
      } else if (options.mode.path === 'adopt') {
        report.adopt = adoptDocs(root, config, counters(state));
        syncProjectCounters({ root, config, state });
        const continuation = options.mode.continueFrom ?? lastDocsCommitDate(root, config);
        // Sessions so far count as read: `engram fold` brings back those after the continuation date.
        markSessionsRead(root, config, state, options.env, now(), null);
        setServerState(state, { continuation_date: continuation, last_poll_commit: headCommit(root), last_poll_at: now().toISOString(), last_scan_at: now().toISOString() });
      } else {
        // The opt-in alone: `engram run` starts from now, not from the whole history of commits and sessions.
        syncProjectCounters({ root, config, state });
        markSessionsRead(root, config, state, options.env, now(), null);
        if (serverState(state).last_poll_commit === null) setServerState(state, { last_poll_commit: headCommit(root), last_poll_at: now().toISOString(), last_scan_at: now().toISOString() });
      }
      report.ids = counters(state);
      report.continuation_date = continuationDate(state);
      return report;
    });
  } finally {
    lock.release();
  }
}

/** The date of the last commit that touched the living docs (where a v2 fold stopped), else today. */
function lastDocsCommitDate(root: string, config: KnowledgeConfig): string {
  const date = gitOutput(root, ['log', '-1', '--format=%aI', '--', ...Object.values(config.living_docs)])?.trim();
  return (date ? new Date(date) : new Date()).toISOString().slice(0, 10);
}


/** `engram fold [--from DATE]`: folds history since the date (default: the continuation date) into the docs. */
export async function foldProject(options: {
  cwd: string;
  from?: string;
  agent: AgentFactory;
  env: KnowledgeEnv;
  now?: () => Date;
  signal?: AbortSignal;
  onEvent?: (event: DispatchEvent) => void;
}): Promise<{ root: string; from: string; chunks: Array<Pick<Dispatch, 'id' | 'state' | 'error'>> }> {
  const { root, config } = openProject(options.cwd);
  const lock = acquireRunLock(root, 'engram fold');
  try {
    return await withStateAsync(root, async (state) => {
      const from = options.from ?? continuationDate(state);
      if (!from) throw new EngramError('USAGE', 'no continuation date is recorded; give --from YYYY-MM-DD');
      const context: DispatchContext = {
        root, config, state, agent: options.agent(config), now: options.now ?? (() => new Date()),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onEvent ? { onEvent: options.onEvent } : {}),
      };
      const outcomes = await foldForward(context, { since: from }, undefined, options.env);
      return { root, from, chunks: outcomes.map((outcome) => ({ id: outcome.dispatch.id, state: outcome.dispatch.state, error: outcome.dispatch.error })) };
    });
  } finally {
    lock.release();
  }
}

/** `engram run`: the server loop until the signal aborts (or once). */
export async function runProject(options: {
  cwd: string;
  agent: AgentFactory;
  env: KnowledgeEnv;
  now?: () => Date;
  signal?: AbortSignal;
  once?: boolean;
  pollSeconds?: number;
  onEvent?: (event: RunEvent) => void;
}): Promise<{ root: string; dispatches: number }> {
  const { root, config } = openProject(options.cwd);
  return withStateAsync(root, async (state) => {
    const result = await runServer({
      root, config, state, agent: options.agent(config), env: options.env,
      ...(options.now ? { now: options.now } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.once ? { once: true } : {}),
      ...(options.pollSeconds ? { pollSeconds: options.pollSeconds } : {}),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    });
    return { root, dispatches: result.dispatches };
  });
}

/** `engram docs accept|reject <chunk>`: a person's decision on a held (or failed) chunk. */
export function reviewChunk(options: { cwd: string; id: number; decision: 'accept' | 'reject'; requeue?: boolean; now?: () => Date }): Pick<Dispatch, 'id' | 'state' | 'error'> {
  const { root, config } = openProject(options.cwd);
  const lock = acquireRunLock(root, `engram docs ${options.decision}`);
  try {
    return withState(root, (state) => {
      const noAgent: FoldAgent = { describe: 'none', run: () => Promise.reject(new EngramError('INTERNAL', 'no agent in a review')) };
      const outcome = reviewDispatch({ root, config, state, agent: noAgent, now: options.now ?? (() => new Date()) }, options.id, options.decision, { requeue: options.requeue ?? false });
      return { id: outcome.dispatch.id, state: outcome.dispatch.state, error: outcome.dispatch.error };
    });
  } finally {
    lock.release();
  }
}

/** `engram docs compact`: DEAD/EVOLVED/refuted entries still in full form move to their graveyards; an oversized timeline collapses. */
export function compactProject(options: { cwd: string; now?: () => Date }): { moved: string[]; timeline: string[] } {
  const { root, config } = openProject(options.cwd);
  const lock = acquireRunLock(root, 'engram docs compact');
  try {
    const set = readDocSet(config, root);
    const moved: string[] = [];
    for (const [role, graveyardRole, statuses] of [
      ['concepts', 'conceptGraveyard', ['DEAD', 'EVOLVED']],
      ['epistemic', 'epistemicGraveyard', ['REFUTED']],
    ] as const) {
      let living = set.docs[role];
      let graveyard = set.docs[graveyardRole];
      if (!living || !graveyard) continue;
      for (const entry of living.entries.filter((candidate) => candidate.correction === null && (statuses as readonly string[]).includes(candidate.statusKey) && candidate.bodyLines > 0)) {
        const result = moveToGraveyard(living, graveyard, entry.id, set.paths[graveyardRole]);
        living = parseDoc(role, living.file, result.living);
        graveyard = parseDoc(graveyardRole, graveyard.file, result.graveyard);
        moved.push(entry.id);
      }
      if (moved.length > 0) {
        writeFileAtomic(set.paths[graveyardRole], `${graveyard.lines.join('\n').replace(/\s+$/, '')}\n`);
        writeFileAtomic(set.paths[role], `${living.lines.join('\n').replace(/\s+$/, '')}\n`);
      }
    }
    const timeline = compactIfLarge({ root, config, now: options.now ?? (() => new Date()) });
    return { moved, timeline };
  } finally {
    lock.release();
  }
}

/**
 * `engram docs correct <id> --to STATUS [--successor ID] [--note TEXT]`: appends a CORRECTION block to the id's
 * graveyard (never editing what is there) and makes the living stub say the new status.
 */
export function correctEntry(options: { cwd: string; id: string; to: string; successor?: string; note?: string; now?: () => Date }): { id: string; block: string; stub: string | null } {
  const { root, config } = openProject(options.cwd);
  const id = options.id.toUpperCase();
  const to = options.to.toUpperCase();
  const set = readDocSet(config, root);
  const graveyardRole = id.startsWith('C') ? 'conceptGraveyard' : id.startsWith('E') ? 'epistemicGraveyard' : null;
  if (!graveyardRole) throw new EngramError('INVALID_INPUT', `${id}: only concepts and claims have graveyards; a workflow is corrected in the workflow registry`);
  const graveyard = set.docs[graveyardRole];
  const original = graveyard?.entries.find((entry) => entry.id === id && entry.correction === null);
  if (!graveyard || !original) throw new EngramError('NOT_FOUND', `${id} has no graveyard entry to correct in ${graveyard?.file ?? graveyardRole}`);
  const allowed = graveyardRole === 'conceptGraveyard' ? ['DEAD', 'EVOLVED'] : ['REFUTED'];
  if (!allowed.includes(to)) throw new EngramError('INVALID_INPUT', `a correction in ${graveyard.file} reclassifies to ${allowed.join(' or ')}; to revive an entry, write it again in its living doc`);
  const date = (options.now?.() ?? new Date()).toISOString().slice(0, 10);
  const from = original.status.toUpperCase();
  const block = correctionBlock(id, date, `${from} → ${to}${options.successor ? ` → ${options.successor.toUpperCase()}` : ''}`, options.note ?? `Original ${from} entry above is superseded.`);
  const lock = acquireRunLock(root, 'engram docs correct');
  try {
    writeFileAtomic(set.paths[graveyardRole], appendBlock(set.texts[graveyardRole] ?? '', block));
    const livingRole = graveyardRole === 'conceptGraveyard' ? 'concepts' : 'epistemic';
    const living = set.docs[livingRole];
    const stub = living?.entries.find((entry) => entry.id === id && entry.correction === null);
    let stubText: string | null = null;
    if (living && stub) {
      const lines = [...living.lines];
      lines[stub.line - 1] = lines[stub.line - 1]!.replace(/\(([^()]*)\)(\s*(?:→|->))/, `(${livingRole === 'epistemic' ? to.toLowerCase() : to})$2`);
      stubText = lines[stub.line - 1]!;
      writeFileAtomic(set.paths[livingRole], lines.join('\n'));
    }
    return { id, block, stub: stubText };
  } finally {
    lock.release();
  }
}

/** Concept liveness for `engram docs status --pointers` and tests: which ACTIVE concepts lost their code. */
export function conceptLiveness(options: { cwd: string }) {
  const { root, config } = openProject(options.cwd);
  const set = readDocSet(config, root);
  return set.docs.concepts ? checkPointers(root, config, set.docs.concepts) : [];
}
