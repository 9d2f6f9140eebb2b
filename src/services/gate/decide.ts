/**
 * A person's decisions on engrams: approve (make active, confirm a stale one, keep one whose code is gone), reject
 * (refuse a pending one, retire an active one) and forget (remove it and its learning state). Each command is one
 * transaction and one audit entry with one undo token; an unknown id anywhere in the list changes nothing.
 * @module
 */
import { EngramError, type Engram, type EngramStatus, type Store } from '../../core/index.js';
import {
  audited,
  CLI_USER,
  findConflicts,
  freshness,
  governancePolicy,
  isStale,
  openConflictsOf,
  recordConflicts,
  resolveConflicts,
  syncJournal,
  type Actor,
  type ChangeSet,
  type GovernancePolicy,
  type PrecomputedVerdicts,
} from '../governance/index.js';
import { resolveEngram, type EngramRef } from '../memory/index.js';

/** Who decides. Only a person: the gate refuses any other actor, whatever surface calls it. */
export interface GateOptions {
  now?: () => Date;
  /** @default a person at the command line */
  actor?: Actor;
  policy?: GovernancePolicy;
}

/** What one decision did to one engram. */
export interface Decision {
  id: number;
  text: string;
  from: EngramStatus;
  to: EngramStatus;
  /**
   * `promoted` (pending/rejected/deprecated → active), `confirmed` (a stale active engram is fresh again), `kept`
   * (its code is gone, a person keeps it shown), `rejected`, `retired` (active → deprecated), `forgotten`,
   * `unchanged`.
   */
  action: 'promoted' | 'confirmed' | 'kept' | 'rejected' | 'retired' | 'forgotten' | 'unchanged';
  /** Active engrams this approval retired (`--supersede`). */
  superseded: number[];
}

/** Result of a gate command. */
export interface DecisionResult {
  decisions: Decision[];
  /** `engram undo <token>` reverses the whole command; null when nothing changed. */
  undo_token: string | null;
}

function person(options: GateOptions): Actor {
  const actor = options.actor ?? CLI_USER;
  if (actor.by !== 'user') {
    throw new EngramError('INVALID_INPUT', `only a person can approve, reject, forget or undo; this was asked by '${actor.by}' via ${actor.via}`);
  }
  return actor;
}

/** Resolves every reference first, so one unknown id changes nothing. */
function resolveAll(store: Store, refs: readonly EngramRef[]): Engram[] {
  if (refs.length === 0) throw new EngramError('INVALID_INPUT', 'give at least one engram id');
  const seen = new Set<number>();
  const engrams: Engram[] = [];
  for (const ref of refs) {
    const engram = resolveEngram(store, ref);
    if (!seen.has(engram.id)) engrams.push(engram);
    seen.add(engram.id);
  }
  return engrams;
}

function run(
  store: Store,
  options: GateOptions,
  op: string,
  reason: string | null,
  fn: (changes: ChangeSet, at: string) => Decision[],
): DecisionResult {
  const actor = person(options);
  const at = (options.now ?? (() => new Date()))().toISOString();
  const { result, entry } = audited(store, { actor, op, reason }, (changes) => fn(changes, at), at);
  if (entry) syncJournal(store);
  return { decisions: result, undo_token: entry?.token ?? null };
}

/** Options for {@link approveEngrams}. */
export interface ApproveOptions extends GateOptions {
  /** When it contradicts an active engram: retire that one (deprecated, "superseded by #id"). */
  supersede?: boolean;
  /** When it contradicts an active engram: keep both (the conflict is closed as "kept-both"). */
  keepBoth?: boolean;
  /** LLM conflict verdicts computed before the transaction (the CLI asks when an LLM is configured). */
  verdicts?: PrecomputedVerdicts;
  reason?: string;
}

/**
 * Approves engrams. A pending, rejected or deprecated engram becomes active — after its conflicts are checked again
 * against what is active now: with an open contradiction the approval is refused (nothing changes) unless
 * `supersede` or `keepBoth` says how to settle it. An active engram that is stale is confirmed (fresh again); one whose
 * code is gone is kept in injection.
 */
export function approveEngrams(store: Store, refs: readonly EngramRef[], options: ApproveOptions = {}): DecisionResult {
  if (options.supersede && options.keepBoth) throw new EngramError('USAGE', 'choose --supersede or --keep-both, not both');
  const policy = options.policy ?? governancePolicy();
  return run(store, options, 'approve', options.reason ?? null, (changes, at) => {
    const engrams = resolveAll(store, refs);
    const fresh = freshness(policy, new Date(at));
    const decisions: Decision[] = [];
    const blocked: string[] = [];
    for (const engram of engrams) {
      changes.engram(engram.id);
      if (engram.status === 'active') {
        const next: Partial<Engram> = {};
        let action: Decision['action'] = 'unchanged';
        if (engram.liveness === 'gone') {
          next.liveness = 'kept';
          next.liveness_at = at;
          action = 'kept';
        }
        if (isStale(engram, fresh)) {
          next.confirmed_at = at;
          if (action === 'unchanged') action = 'confirmed';
        }
        if (action !== 'unchanged') store.engrams.update(engram.id, { ...next, updated_at: at });
        decisions.push({ id: engram.id, text: engram.text, from: 'active', to: 'active', action, superseded: [] });
        continue;
      }
      // What is active now may differ from when it was admitted: look again, then settle every open contradiction.
      const found = findConflicts(store, { text: engram.text, project: engram.project, id: engram.id }, options.verdicts);
      recordConflicts(store, changes, engram.id, found, at);
      // Contradictions with what is active now — including an engram approved earlier in this same command.
      const open = openConflictsOf(store, engram.id).filter((conflict) => {
        const other = conflict.engram_id === engram.id ? conflict.other_id : conflict.engram_id;
        return store.engrams.get(other)?.status === 'active';
      });
      const superseded: number[] = [];
      if (open.length > 0) {
        if (options.supersede) {
          for (const conflict of open) {
            const other = conflict.engram_id === engram.id ? conflict.other_id : conflict.engram_id;
            changes.engram(other);
            store.engrams.update(other, { status: 'deprecated', status_reason: `superseded by #${engram.id}`, deprecated_reason: `superseded by #${engram.id}`, updated_at: at });
            superseded.push(other);
          }
          resolveConflicts(store, changes, open.map((conflict) => conflict.id), 'superseded', at);
        } else if (options.keepBoth) {
          resolveConflicts(store, changes, open.map((conflict) => conflict.id), 'kept-both', at);
        } else {
          for (const conflict of open) {
            const other = conflict.engram_id === engram.id ? conflict.other_id : conflict.engram_id;
            blocked.push(`#${engram.id} contradicts active #${other} (${conflict.reason}): '${store.engrams.get(other)?.text.slice(0, 120) ?? ''}'`);
          }
          continue;
        }
      }
      store.engrams.update(engram.id, {
        status: 'active',
        status_reason: null,
        deprecated_reason: null,
        confirmed_at: at,
        ...(engram.liveness === 'gone' ? { liveness: 'kept' as const, liveness_at: at } : {}),
        updated_at: at,
      });
      decisions.push({ id: engram.id, text: engram.text, from: engram.status, to: 'active', action: 'promoted', superseded });
    }
    if (blocked.length > 0) {
      throw new EngramError(
        'INVALID_INPUT',
        `not approved: ${blocked.join('; ')}. Approve with --supersede to retire the active one, or --keep-both to keep both; nothing was changed`,
        { details: { conflicts: blocked } },
      );
    }
    return decisions;
  });
}

/**
 * Rejects engrams: a pending one is refused (kept as `rejected`, so the same lesson harvested again stays refused), an
 * active one is retired (`deprecated`: it was right once and is kept for the record). Open conflicts it had are closed.
 */
export function rejectEngrams(store: Store, refs: readonly EngramRef[], options: GateOptions & { reason?: string } = {}): DecisionResult {
  const reason = options.reason?.trim() || null;
  return run(store, options, 'reject', reason, (changes, at) => {
    const decisions: Decision[] = [];
    for (const engram of resolveAll(store, refs)) {
      if (engram.status === 'rejected' || engram.status === 'deprecated') {
        decisions.push({ id: engram.id, text: engram.text, from: engram.status, to: engram.status, action: 'unchanged', superseded: [] });
        continue;
      }
      changes.engram(engram.id);
      const to: EngramStatus = engram.status === 'pending' ? 'rejected' : 'deprecated';
      const why = reason ?? (to === 'rejected' ? 'rejected in review' : 'retired in review');
      store.engrams.update(engram.id, {
        status: to,
        status_reason: why,
        ...(to === 'deprecated' ? { deprecated_reason: why } : {}),
        updated_at: at,
      });
      resolveConflicts(store, changes, openConflictsOf(store, engram.id).map((conflict) => conflict.id), 'rejected', at);
      decisions.push({ id: engram.id, text: engram.text, from: engram.status, to, action: to === 'rejected' ? 'rejected' : 'retired', superseded: [] });
    }
    return decisions;
  });
}

/**
 * Forgets engrams: the rows, their learning state, conflicts and sources are removed. The audit entry keeps their
 * images, so `engram undo` can bring them back exactly.
 */
export function forgetEngrams(store: Store, refs: readonly EngramRef[], options: GateOptions & { reason?: string } = {}): DecisionResult {
  return run(store, options, 'forget', options.reason?.trim() || null, (changes) => {
    const engrams = refs.map((ref) => resolveEngram(store, ref, { includeDeleted: true }));
    if (engrams.length === 0) throw new EngramError('INVALID_INPUT', 'give at least one engram id');
    const decisions: Decision[] = [];
    for (const engram of engrams) {
      if (decisions.some((decision) => decision.id === engram.id)) continue;
      changes.engram(engram.id);
      changes.dependents(engram.id);
      store.engrams.hardDelete(engram.id);
      decisions.push({ id: engram.id, text: engram.text, from: engram.status, to: engram.status, action: 'forgotten', superseded: [] });
    }
    return decisions;
  });
}
