import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EngramError } from '../../core/index.js';
import { definedIds, readDocSet } from './docset.js';
import { discard, emit, finishDispatch, lintDispatch, lintFailed, pathsOf, runDispatch, stamp, type DispatchContext, type DispatchOutcome } from './dispatch.js';
import { returnUnused } from './ids.js';
import { chunkDir, currentDocs, docsChanged, loadSnapshot, restoreSnapshot, saveSnapshot } from './snapshot.js';
import { getDispatch, releaseDispatch, updateDispatch, type Dispatch } from './state.js';

/**
 * What happens to a dispatch after the normal path: crash recovery at start (seed 002, "Crash recovery") and a
 * person's decision on a held or failed chunk.
 */

/** Is the pid still the agent we started (alive, and marked as Engram's LLM child)? Linux checks the environment. */
function isOurAgent(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return false;
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes('ENGRAM_LLM_CHILD=1');
  } catch {
    return false;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** Stops an agent left running by a server that died (its process group), waiting for it to go. */
async function stopOrphanAgent(pid: number): Promise<void> {
  if (!isOurAgent(pid)) return;
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    try {
      process.kill(-pid, signal);
    } catch {
      return;
    }
    for (let i = 0; i < 20 && isOurAgent(pid); i++) await sleep(100);
    if (!isOurAgent(pid)) return;
  }
}

/**
 * Crash recovery, at start (seed's table): `building` → discarded and rebuilt from the buffer; `dispatched`/`retry`
 * → any agent still running from before is stopped, then the docs are compared with the snapshot: changed → lint
 * (and retry or validate as usual), unchanged → dispatched again; `validated` → briefing regenerated and committed.
 */
export async function recoverDispatches(context: DispatchContext, open: readonly Dispatch[]): Promise<DispatchOutcome[]> {
  const outcomes: DispatchOutcome[] = [];
  for (const dispatch of open) {
    if (dispatch.state === 'building') {
      discard(context, dispatch, 'interrupted while building; rebuilt from the buffer');
      emit(context, dispatch, { state: 'discarded' });
      continue;
    }
    if (dispatch.state === 'validated') {
      outcomes.push(finishDispatch(context, dispatch));
      continue;
    }
    if (dispatch.state !== 'dispatched' && dispatch.state !== 'retry') continue;
    if (dispatch.agent_pid) {
      await stopOrphanAgent(dispatch.agent_pid);
      updateDispatch(context.state, dispatch.id, { agent_pid: null }, context.now());
    }
    const before = loadSnapshot(join(chunkDir(context.root, dispatch.id), 'before'));
    if (!before) {
      // The crash came before the snapshot was complete: nothing was dispatched from it.
      discard(context, dispatch, 'interrupted before its snapshot was saved; rebuilt from the buffer');
      emit(context, dispatch, { state: 'discarded' });
      continue;
    }
    if (dispatch.work_root && !isWorkTree(dispatch.work_root)) {
      // A bootstrap worktree that went with the crash: the chunk is rebuilt by the bootstrap that owns it.
      discard(context, dispatch, `its work tree ${dispatch.work_root} is gone`);
      emit(context, dispatch, { state: 'discarded' });
      continue;
    }
    if (!docsChanged(before, currentDocs(pathsOf(context, dispatch)))) {
      updateDispatch(context.state, dispatch.id, { state: 'dispatched', retries: 0 }, context.now());
      outcomes.push(await runDispatch(context, getDispatch(context.state, dispatch.id)!));
      continue;
    }
    const { violations } = lintDispatch(context, dispatch, before);
    const errors = violations.filter((violation) => violation.severity === 'error');
    if (errors.length === 0 && violations.length > 0) {
      updateDispatch(context.state, dispatch.id, { state: 'held', violations, error: violations[0]!.message }, context.now());
      emit(context, dispatch, { state: 'held', violations: violations.length });
      outcomes.push({ dispatch: getDispatch(context.state, dispatch.id)!, violations });
    } else if (errors.length === 0) {
      updateDispatch(context.state, dispatch.id, { state: 'validated', validated_at: stamp(context) }, context.now());
      outcomes.push(finishDispatch(context, getDispatch(context.state, dispatch.id)!));
    } else if (dispatch.retries >= context.config.fold.max_retries) {
      outcomes.push(lintFailed(context, dispatch, before, violations, dispatch.retries));
    } else {
      outcomes.push(await runDispatch(context, dispatch, { resumeWith: errors }));
    }
  }
  return outcomes;
}

/** A bootstrap worktree still there (its `.git` file). */
const isWorkTree = (path: string): boolean => {
  try {
    return readFileSync(join(path, '.git'), 'utf8') !== '';
  } catch {
    return false;
  }
};

/** A person's decision on a held (or failed) chunk (`engram docs accept|reject`). */
export function reviewDispatch(context: DispatchContext, id: number, decision: 'accept' | 'reject', options: { requeue?: boolean } = {}): DispatchOutcome {
  const dispatch = getDispatch(context.state, id);
  if (!dispatch) throw new EngramError('NOT_FOUND', `no chunk ${id}`);
  if (decision === 'accept') {
    if (dispatch.state !== 'held') throw new EngramError('INVALID_INPUT', `chunk ${id} is ${dispatch.state}; only a held chunk can be accepted`);
    const before = loadSnapshot(join(chunkDir(context.root, id), 'before'));
    const errors = before ? lintDispatch(context, dispatch, before).violations.filter((violation) => violation.severity === 'error') : [];
    if (errors.length > 0) throw new EngramError('INVALID_INPUT', `chunk ${id} no longer lints: ${errors[0]!.file}:${errors[0]!.line} ${errors[0]!.message}`);
    updateDispatch(context.state, id, { state: 'validated', validated_at: stamp(context) }, context.now());
    return finishDispatch(context, getDispatch(context.state, id)!);
  }
  if (dispatch.state !== 'held' && dispatch.state !== 'failed') throw new EngramError('INVALID_INPUT', `chunk ${id} is ${dispatch.state}; only a held or failed chunk can be rejected`);
  if (dispatch.state === 'held') {
    const before = loadSnapshot(join(chunkDir(context.root, id), 'before'));
    if (before) {
      saveSnapshot(chunkDir(context.root, id), 'rejected', currentDocs(pathsOf(context, dispatch)));
      restoreSnapshot(pathsOf(context, dispatch), before);
    }
  }
  if (options.requeue) releaseDispatch(context.state, id, 'discarded', context.now(), 'rejected by a person; items back in the buffer');
  else updateDispatch(context.state, id, { state: 'discarded', error: 'rejected by a person' }, context.now());
  const set = readDocSet(context.config, context.root);
  returnUnused(context.state, dispatch.reserved, new Set(definedIds(set).keys()));
  return { dispatch: getDispatch(context.state, id)!, violations: [] };
}
