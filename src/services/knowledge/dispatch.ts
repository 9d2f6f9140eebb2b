import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EngramError, toEngramError } from '../../core/index.js';
import type { FoldAgent } from './agent.js';
import { generateBriefing, writeBriefing, type BriefingWrite } from './briefing.js';
import { chunkBudget, expectedGrowth, foldPrompt, idRequest, renderChunk, renderItem, renderRetry, retryPrompt, selectItems } from './chunk.js';
import { docPaths, type KnowledgeConfig } from './config.js';
import { definedIds, lintDocSet, livingIds, readDocSet, type DocSet } from './docset.js';
import { compactTimeline } from './graveyard.js';
import { reserveIds, returnUnused } from './ids.js';
import type { Violation } from './lint.js';
import { parseDoc, DOC_ROLES } from './parse.js';
import { chunkDir, chunkInputName, currentDocs, docsChanged, loadSnapshot, restoreSnapshot, saveSnapshot, snapshotDiff, type Snapshot } from './snapshot.js';
import { writeFileAtomic } from './_atomic.js';
import {
  createDispatch,
  getDispatch,
  releaseDispatch,
  serverState,
  setServerState,
  trackStatuses,
  updateDispatch,
  type BufferItem,
  type Dispatch,
  type KnowledgeState,
} from './state.js';

/**
 * One dispatch, end to end (seed 002, "Dispatch mechanics" and "Crash recovery"): build the chunk and reserve its ids
 * (`building`), snapshot the docs and run the fold agent (`dispatched`), lint, send a correction prompt at most
 * `fold.max_retries` times (`retry`), then `validated`: the L0 briefing is regenerated and the dispatch is
 * `committed`. A diff over twice the expected growth is `held` for a person; a chunk that still breaks the schema
 * after its retries is `failed` and the docs are restored. Every state change is written before the step it
 * announces, so a restart knows exactly where to pick up.
 */

/** What a dispatch reports as it goes (the CLI prints one line per event). */
export interface DispatchEvent {
  chunk: number;
  state: Dispatch['state'] | 'agent';
  kind: Dispatch['kind'];
  items?: number;
  chars?: number;
  reserved?: string[];
  attempt?: number;
  violations?: number;
  ms?: number;
  briefing?: BriefingWrite['status'];
  error?: string;
}

/** Everything a dispatch needs. */
export interface DispatchContext {
  /** The repository: state, `.engram/fold/`, the docs and the briefing. */
  root: string;
  config: KnowledgeConfig;
  state: KnowledgeState;
  agent: FoldAgent;
  now: () => Date;
  /** Aborting stops the running agent; the dispatch stays `dispatched` and a restart recovers it. */
  signal?: AbortSignal;
  onEvent?: (event: DispatchEvent) => void;
}

/** How a dispatch ended. */
export interface DispatchOutcome {
  dispatch: Dispatch;
  violations: Violation[];
}

/** A chunk to build: buffered items (fold), or a seed read of the repository with a preface. */
export interface BuildRequest {
  kind: Dispatch['kind'];
  items: readonly BufferItem[];
  /** Where the agent runs and the docs are edited (a bootstrap worktree); default the repository. */
  workRoot?: string;
  preface?: string;
  period?: { from: string; to: string } | null;
  /** Ids per kind; default from the items. */
  ids?: { C?: number; E?: number; W?: number };
}

const BACKOFF_MS = { first: 10 * 60_000, max: 6 * 60 * 60_000 };

export const stamp = (context: DispatchContext) => context.now().toISOString();

export function emit(context: DispatchContext, dispatch: Pick<Dispatch, 'id' | 'kind'>, event: Omit<DispatchEvent, 'chunk' | 'kind'>): void {
  context.onEvent?.({ chunk: dispatch.id, kind: dispatch.kind, ...event });
}

/** Builds a chunk: chooses items within the budget, reserves ids, writes the input file and the snapshot. */
export function buildDispatch(context: DispatchContext, request: BuildRequest): Dispatch | null {
  const workRoot = request.workRoot ?? context.root;
  const set = readDocSet(context.config, workRoot);
  const docsChars = Object.values(set.texts).reduce((sum, text) => sum + (text?.length ?? 0), 0);
  const budget = chunkBudget(context.config, docsChars);
  if (budget <= 0 && request.kind === 'fold') {
    throw new EngramError(
      'INVALID_INPUT',
      `the docs (${docsChars} characters) leave no room in budget.context_limit_chars (${context.config.budget.context_limit_chars}); compact them (engram docs compact) or raise the limit`,
    );
  }
  const { chosen, chars } = request.kind === 'fold' ? selectItems(request.items, budget) : { chosen: [...request.items], chars: request.items.reduce((sum, item) => sum + item.chars, 0) };
  if (request.kind === 'fold' && chosen.length === 0) return null;
  const defined = definedIds(set);
  const reserved = reserveIds(context.state, request.ids ?? idRequest(chosen, request.kind === 'fold' ? 'fold' : 'seed'), defined.keys());
  const dispatch = createDispatch(
    context.state,
    {
      kind: request.kind,
      reserved,
      expected_growth: request.kind === 'fold' ? expectedGrowth(reserved.length, chosen.length) : 0,
      work_root: request.workRoot ?? null,
      itemIds: chosen.map((item) => item.id),
      chars,
    },
    context.now(),
  );
  try {
    const perItem = Math.max(2_000, Math.floor(budget / Math.max(1, chosen.length)));
    const rendered = chosen.map((item) => renderItem(item, context.root, context.config, item.chars > perItem && chosen.length === 1 ? budget : Math.max(item.chars, perItem)));
    const text = renderChunk({
      number: dispatch.id,
      kind: request.kind === 'fold' ? 'fold' : 'seed',
      docs: set,
      workRoot,
      reserved,
      items: chosen,
      rendered,
      config: context.config,
      period: request.period ?? null,
      ...(request.preface ? { preface: request.preface } : {}),
    });
    const input = chunkInputName(dispatch.id);
    writeFileAtomic(join(context.root, input), text);
    if (workRoot !== context.root) writeFileAtomic(join(workRoot, input), text);
    saveSnapshot(chunkDir(context.root, dispatch.id), 'before', currentDocs(set.paths));
    updateDispatch(context.state, dispatch.id, { state: 'dispatched', chunk_file: input, dispatched_at: stamp(context) }, context.now());
  } catch (error) {
    discard(context, dispatch, toEngramError(error).message);
    throw error;
  }
  const built = getDispatch(context.state, dispatch.id)!;
  emit(context, built, { state: 'dispatched', items: chosen.length, chars, reserved });
  return built;
}

/** Gives a building dispatch's items back and its unused ids (a crash while building, an error). */
export function discard(context: DispatchContext, dispatch: Dispatch, error: string): void {
  releaseDispatch(context.state, dispatch.id, 'discarded', context.now(), error);
  const set = readDocSet(context.config, dispatch.work_root ?? context.root);
  returnUnused(context.state, dispatch.reserved, new Set(definedIds(set).keys()));
}

/** The docs of a dispatch's work root. */
export const pathsOf = (context: DispatchContext, dispatch: Dispatch) => docPaths(context.config, dispatch.work_root ?? context.root);

/** Lints a dispatch's docs against its snapshot: the chunk rules plus the schema. */
export function lintDispatch(context: DispatchContext, dispatch: Dispatch, before: Snapshot): { set: DocSet; violations: Violation[] } {
  const workRoot = dispatch.work_root ?? context.root;
  const set = readDocSet(context.config, workRoot);
  const beforeSet: DocSet = { root: workRoot, paths: set.paths, texts: {}, docs: {}, problems: [] };
  for (const role of DOC_ROLES) {
    const text = before[role];
    if (text === null) continue;
    beforeSet.texts[role] = text;
    beforeSet.docs[role] = parseDoc(role, role, text);
  }
  const after = currentDocs(set.paths);
  const violations = lintDocSet(set, context.config, {
    graveyardBaseline: {
      ...(before.conceptGraveyard !== null ? { conceptGraveyard: before.conceptGraveyard } : {}),
      ...(before.epistemicGraveyard !== null ? { epistemicGraveyard: before.epistemicGraveyard } : {}),
    },
    chunk: {
      reserved: new Set(dispatch.reserved),
      knownBefore: new Set(definedIds(beforeSet).keys()),
      livingBefore: livingIds(beforeSet),
      // The growth guard compares with the expected growth of steady-state chunks; a seed writes the docs from nothing.
      ...(dispatch.kind === 'fold' ? { diffChars: snapshotDiff(before, after), expectedGrowth: dispatch.expected_growth } : {}),
    },
  });
  return { set, violations };
}

/** Runs (or resumes) a dispatched chunk: agent, lint, retries, then validated/held/failed. */
export async function runDispatch(context: DispatchContext, dispatch: Dispatch, options: { resumeWith?: Violation[] } = {}): Promise<DispatchOutcome> {
  const dir = join(chunkDir(context.root, dispatch.id), 'before');
  const before = loadSnapshot(dir);
  if (!before) throw new EngramError('IO', `the snapshot of chunk ${dispatch.id} (${dir}) is missing`);
  const workRoot = dispatch.work_root ?? context.root;
  const input = dispatch.chunk_file ?? chunkInputName(dispatch.id);
  let attempt = options.resumeWith ? dispatch.retries + 1 : dispatch.retries;
  let pending: Violation[] | undefined = options.resumeWith;
  for (;;) {
    let prompt: string;
    if (attempt === 0 || !pending) {
      prompt = foldPrompt(dispatch.id, input);
    } else {
      const retryName = join(dirname(input), `chunk_${String(dispatch.id).padStart(3, '0')}_retry_${attempt}.md`);
      const text = renderRetry(dispatch.id, attempt, pending, join(dirname(input), `chunk_${String(dispatch.id).padStart(3, '0')}`, 'before'));
      writeFileAtomic(join(context.root, retryName), text);
      if (workRoot !== context.root) {
        writeFileAtomic(join(workRoot, retryName), text);
        saveSnapshot(join(workRoot, dirname(input), `chunk_${String(dispatch.id).padStart(3, '0')}`), 'before', before);
      }
      prompt = retryPrompt(dispatch.id, attempt, input, retryName);
      updateDispatch(context.state, dispatch.id, { state: 'retry', retries: attempt }, context.now());
    }
    emit(context, dispatch, { state: 'agent', attempt });
    let agentError: EngramError | null = null;
    const started = Date.now();
    try {
      await context.agent.run({
        prompt,
        cwd: workRoot,
        purpose: `fold chunk ${dispatch.id}`,
        ...(context.signal ? { signal: context.signal } : {}),
        onSpawn: (pid) => updateDispatch(context.state, dispatch.id, { agent_pid: pid }, context.now()),
      });
    } catch (error) {
      agentError = toEngramError(error);
    }
    updateDispatch(context.state, dispatch.id, { agent_pid: null }, context.now());
    if (context.signal?.aborted) {
      // Stopped from outside (SIGTERM): the state stays dispatched/retry and a restart recovers it.
      return { dispatch: getDispatch(context.state, dispatch.id)!, violations: [] };
    }
    const changed = docsChanged(before, currentDocs(pathsOf(context, dispatch)));
    if (agentError && !changed) return agentFailed(context, dispatch, before, agentError);
    const { violations } = lintDispatch(context, dispatch, before);
    const errors = violations.filter((violation) => violation.severity === 'error');
    emit(context, dispatch, { state: errors.length ? 'retry' : 'validated', attempt, violations: violations.length, ms: Date.now() - started, ...(agentError ? { error: agentError.message } : {}) });
    if (errors.length === 0 && violations.length > 0) {
      updateDispatch(context.state, dispatch.id, { state: 'held', violations, error: violations[0]!.message }, context.now());
      emit(context, dispatch, { state: 'held', violations: violations.length });
      return { dispatch: getDispatch(context.state, dispatch.id)!, violations };
    }
    if (errors.length === 0) {
      updateDispatch(context.state, dispatch.id, { state: 'validated', violations: [], validated_at: stamp(context) }, context.now());
      return finishDispatch(context, getDispatch(context.state, dispatch.id)!);
    }
    if (attempt >= context.config.fold.max_retries) return lintFailed(context, dispatch, before, violations, attempt);
    pending = errors;
    attempt++;
  }
}

/** Out of retries: the docs go back to how they were; the agent's last version is kept for a person. */
export function lintFailed(context: DispatchContext, dispatch: Dispatch, before: Snapshot, violations: Violation[], attempts: number): DispatchOutcome {
  const errors = violations.filter((violation) => violation.severity === 'error');
  saveSnapshot(chunkDir(context.root, dispatch.id), 'failed', currentDocs(pathsOf(context, dispatch)));
  restoreSnapshot(pathsOf(context, dispatch), before);
  const error = `${errors.length} violation(s) after ${attempts} retr${attempts === 1 ? 'y' : 'ies'}: ${errors[0]!.file}:${errors[0]!.line} ${errors[0]!.message}`;
  updateDispatch(context.state, dispatch.id, { state: 'failed', violations, error }, context.now());
  emit(context, dispatch, { state: 'failed', violations: violations.length, error });
  return { dispatch: getDispatch(context.state, dispatch.id)!, violations };
}

/**
 * The agent itself failed (not found, not logged in, timed out) and left the docs as they were: its items go back to
 * the buffer and the server waits before the next dispatch (10 minutes, doubling to 6 hours), so a broken agent is
 * neither hammered nor forgotten.
 */
function agentFailed(context: DispatchContext, dispatch: Dispatch, before: Snapshot, error: EngramError): DispatchOutcome {
  restoreSnapshot(pathsOf(context, dispatch), before);
  releaseDispatch(context.state, dispatch.id, 'failed', context.now(), `the fold agent failed: ${error.message}`);
  const set = readDocSet(context.config, dispatch.work_root ?? context.root);
  returnUnused(context.state, dispatch.reserved, new Set(definedIds(set).keys()));
  const failures = serverState(context.state).agent_failures + 1;
  const wait = Math.min(BACKOFF_MS.max, BACKOFF_MS.first * 2 ** (failures - 1));
  setServerState(context.state, { agent_failures: failures, backoff_until: new Date(context.now().getTime() + wait).toISOString() });
  emit(context, dispatch, { state: 'failed', error: error.message });
  return { dispatch: getDispatch(context.state, dispatch.id)!, violations: [] };
}

/**
 * A validated dispatch's last steps: the docs of a bootstrap worktree go to the repository, the L0 briefing is
 * regenerated, unused ids are returned, claim statuses are tracked, an oversized timeline is compacted, and the
 * dispatch is `committed`. Safe to repeat (crash recovery of `validated`).
 */
export function finishDispatch(context: DispatchContext, dispatch: Dispatch): DispatchOutcome {
  if (dispatch.work_root && dispatch.work_root !== context.root) {
    const from = docPaths(context.config, dispatch.work_root);
    const to = docPaths(context.config, context.root);
    for (const role of DOC_ROLES) {
      try {
        writeFileAtomic(to[role], readFileSync(from[role], 'utf8'));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  }
  compactIfLarge(context);
  const set = readDocSet(context.config, context.root);
  const briefing = writeBriefing(context.root, context.config, generateBriefing(set, context.config, { now: context.now(), chunk: dispatch.id }));
  returnUnused(context.state, dispatch.reserved, new Set(definedIds(set).keys()));
  const claims = new Map((set.docs.epistemic?.entries ?? []).filter((entry) => entry.correction === null).map((entry) => [entry.id, entry.statusKey]));
  trackStatuses(context.state, claims, context.now());
  updateDispatch(context.state, dispatch.id, { state: 'committed', committed_at: stamp(context) }, context.now());
  setServerState(context.state, { last_dispatch_time: stamp(context), agent_failures: 0, backoff_until: null });
  emit(context, dispatch, { state: 'committed', briefing: briefing.status });
  return { dispatch: getDispatch(context.state, dispatch.id)!, violations: [] };
}

/** Timeline compaction (seed: when timeline.md exceeds the threshold, phases older than N months collapse). */
export function compactIfLarge(context: Pick<DispatchContext, 'root' | 'config' | 'now'>): string[] {
  const path = docPaths(context.config, context.root).timeline;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  if (text.length <= context.config.thresholds.timeline_compact_chars) return [];
  const cutoff = new Date(context.now());
  cutoff.setUTCMonth(cutoff.getUTCMonth() - context.config.thresholds.timeline_compact_months);
  const result = compactTimeline(parseDoc('timeline', path, text), cutoff.toISOString().slice(0, 10));
  if (result.compacted.length > 0) writeFileAtomic(path, result.text);
  return result.compacted;
}
