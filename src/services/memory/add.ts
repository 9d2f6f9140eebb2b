import { contentHash, type Engram, type LearnedBy, type NewEngram, type RedactionKind, type Store } from '../../core/index.js';
import {
  admit,
  API_USER,
  audited,
  classifyTier,
  findConflicts,
  governancePolicy,
  ChangeSet,
  PERSON_LEARNED,
  recordConflicts,
  recordSources,
  syncJournal,
  type Actor,
  type EngramSource,
  type FoundConflict,
  type GovernancePolicy,
  type PrecomputedVerdicts,
} from '../governance/index.js';
import { prepareDraft, type EngramDraft, type PreparedDraft } from './draft.js';

/** What adding did. */
export type AddStatus =
  /** A new engram was stored. */
  | 'created'
  /** The same text already lived in the same project and scope; its duplicate counter moved instead. */
  | 'duplicate'
  /** The same topic key already lived in the same project and scope; it was revised in place. */
  | 'revised'
  /** The same text already existed and the caller asked for duplicates to be left alone (import). */
  | 'skipped';

/** A conflict as results show it: the other engram and why. */
export interface ConflictSummary {
  other_id: number;
  other_text: string;
  signal: string | null;
  method: 'rules' | 'llm';
  reason: string;
}

/** Result of {@link addEngram}. */
export interface AddResult {
  status: AddStatus;
  engram: Engram;
  /** Kinds of secret or private content removed before storing. */
  redacted: RedactionKind[];
  /** Active engrams it contradicts (it then waits in review: `engram.status` is `pending`). */
  conflicts: ConflictSummary[];
  /** `engram undo <token>` reverses this add; null when nothing changed. */
  undo_token: string | null;
}

/** Options for {@link addEngram}. */
export interface AddOptions {
  /** Clock. @default () => new Date() */
  now?: () => Date;
  /** `count` bumps the duplicate counter (a person or agent re-stating a lesson); `skip` leaves it (re-import). @default "count" */
  onDuplicate?: 'count' | 'skip';
  /**
   * Who adds it (docs/GOVERNANCE.md): a person's add (`user`, the default) is active at once unless it contradicts an
   * active engram; the agent's (MCP), extraction's and sync's follow the risk tiers.
   */
  actor?: Actor;
  /** config.json `governance` (tiers, autopromote). @default the built-in policy */
  policy?: GovernancePolicy;
  /** LLM conflict verdicts computed before the write ({@link llmVerdicts}); the rules decide the other pairs. */
  verdicts?: PrecomputedVerdicts;
  /** Where it was learned (extraction): stored beside a new engram. */
  sources?: readonly EngramSource[];
}

/** What {@link storeDraft} needs beyond the draft. */
export interface StoreContext {
  changes: ChangeSet;
  learnedBy: LearnedBy;
  policy: GovernancePolicy;
  verdicts?: PrecomputedVerdicts;
  sources?: readonly EngramSource[];
}

const union = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])];

/** What an actor's engrams are recorded as having been learned by. */
export function learnedByOf(actor: Actor): LearnedBy {
  return actor.by === 'system' ? 'user' : actor.by;
}

export const summarize = (conflicts: readonly FoundConflict[]): ConflictSummary[] =>
  conflicts.map((conflict) => ({ other_id: conflict.other_id, other_text: conflict.other_text, signal: conflict.signal, method: conflict.method, reason: conflict.reason }));

/**
 * Review after a change of text to an engram that is already stored: its tier is recomputed, and an active engram
 * whose new text contradicts another active one — or that the actor may not make active by itself — goes back to
 * review. A change of text never raises a status: only a person does that (services/gate).
 */
export function reassess(
  store: Store,
  context: Omit<StoreContext, 'sources'>,
  engram: Pick<Engram, 'id' | 'kind' | 'status' | 'project'>,
  text: string,
  at: string,
  kind: string = engram.kind,
): { fields: Partial<Engram>; conflicts: FoundConflict[] } {
  const tier = classifyTier(kind, text, context.policy);
  if (engram.status !== 'active') return { fields: { tier: tier.tier }, conflicts: [] };
  const conflicts = findConflicts(store, { text, project: engram.project, id: engram.id }, context.verdicts);
  const admission = admit({ learnedBy: context.learnedBy, tier, conflicts, policy: context.policy });
  recordConflicts(store, context.changes, engram.id, conflicts, at);
  if (admission.status === 'pending') return { fields: { tier: tier.tier, status: 'pending', status_reason: admission.reason }, conflicts };
  return { fields: { tier: tier.tier }, conflicts };
}

/** What every new engram row starts with: seen once, never matched, live, unrevised, dated `at`. */
export function freshRowCounters(at: string) {
  return {
    occurrence_count: 1,
    times_matched: 0,
    last_matched_at: null,
    deprecated: false,
    deprecated_reason: null,
    revision_count: 0,
    duplicate_count: 0,
    created_at: at,
    updated_at: at,
    last_seen_at: at,
    deleted_at: null,
  } as const;
}

/** A new engram's row without the review columns, which {@link insertReviewed} decides. */
export type UnreviewedEngram = Omit<NewEngram, 'status' | 'status_reason' | 'learned_by' | 'tier' | 'confirmed_at'>;

/**
 * Inserts a new engram inside an open write transaction with the status review gives it (services/governance `admit`):
 * its risk tier, conflicts with the active engrams it would be shown beside, and who learned it. The row, its conflicts
 * and its sources are tracked on `context.changes` for the caller's audit row. Every path that stores a new engram —
 * `engram add`, extraction, the Go engram's saves and passive capture — goes through here.
 */
export function insertReviewed(
  store: Store,
  context: StoreContext,
  row: UnreviewedEngram,
  at: string,
): { engram: Engram; conflicts: FoundConflict[] } {
  const tier = classifyTier(row.kind, row.text, context.policy);
  const conflicts = findConflicts(store, { text: row.text, project: row.project }, context.verdicts);
  const admission = admit({ learnedBy: context.learnedBy, tier, conflicts, policy: context.policy });
  const engram = store.engrams.insert({
    ...row,
    status: admission.status,
    status_reason: admission.reason,
    learned_by: context.learnedBy,
    tier: tier.tier,
    // A person's own add is their confirmation; anything else is confirmed when a person approves it.
    confirmed_at: admission.status === 'active' && PERSON_LEARNED.includes(context.learnedBy) ? at : null,
  });
  context.changes.created('engrams', { id: engram.id });
  recordConflicts(store, context.changes, engram.id, conflicts, at);
  if (context.sources?.length) recordSources(store, context.changes, engram.id, context.sources, at);
  // The engram as stored after its conflict rows.
  return { engram, conflicts };
}

/**
 * The session a new engram was recorded in, from the sessions it was learned from: the first. A lesson the learning
 * loop extracts is created with the one session it came from (services/learn `extractSession`), and a session that
 * teaches it again is appended to `source_sessions` without a new row, so the first is where the row was written —
 * its id sits among that session's records, which is what recall's context step and the timeline read
 * (`engrams.sessionNeighbours`). Later sessions are not claimed: the row was not recorded there. None named: none
 * (hand-written lessons and saves have no session; the Go engram's observations set `session_id` themselves).
 */
export function recordedIn(sourceSessions: readonly string[]): string | null {
  return sourceSessions[0] ?? null;
}

/**
 * Stores the prepared draft inside an open write transaction: topic upsert first (same topic key → revise in
 * place), then exact-duplicate detection on the normalised content hash, then insert with the status review gives it
 * (services/governance `admit`): tier, conflicts with active engrams, who learned it. The caller writes the audit
 * row from `context.changes`; without a context (benchmark fixtures only) the rows are a person's adds and no audit
 * row is written.
 */
export function storeDraft(
  store: Store,
  draft: PreparedDraft,
  at: string,
  onDuplicate: 'count' | 'skip',
  context: StoreContext = { changes: new ChangeSet(store.db), learnedBy: 'user', policy: governancePolicy() },
): Omit<AddResult, 'redacted' | 'undo_token'> {
  const { redacted: _redacted, ...fields } = draft;
  if (draft.topic_key !== null) {
    const existing = store.engrams.findLiveByTopic(draft.topic_key, draft.project, draft.scope);
    if (existing) {
      context.changes.engram(existing.id);
      const review = reassess(store, context, existing, draft.text, at, draft.kind);
      const engram = store.engrams.update(existing.id, {
        text: draft.text,
        title: draft.title ?? existing.title,
        content: draft.content ?? existing.content,
        category: draft.category,
        tags: union(existing.tags, draft.tags).sort(),
        source_sessions: union(existing.source_sessions, draft.source_sessions),
        revision_count: existing.revision_count + 1,
        updated_at: at,
        last_seen_at: at,
        ...review.fields,
      });
      if (context.sources?.length) recordSources(store, context.changes, engram.id, context.sources, at);
      return { status: 'revised', engram, conflicts: summarize(review.conflicts) };
    }
  }
  const duplicate = store.engrams.findLiveByHash(contentHash(draft.text), draft.project, draft.scope);
  if (duplicate) {
    // A duplicate never changes the status of what it duplicates: re-stating a lesson that waits for review, or that a
    // person rejected, does not make it active.
    if (onDuplicate === 'skip') return { status: 'skipped', engram: duplicate, conflicts: [] };
    context.changes.engram(duplicate.id);
    const engram = store.engrams.update(duplicate.id, {
      duplicate_count: duplicate.duplicate_count + 1,
      tags: union(duplicate.tags, draft.tags).sort(),
      source_sessions: union(duplicate.source_sessions, draft.source_sessions),
      last_seen_at: at,
    });
    if (context.sources?.length) recordSources(store, context.changes, engram.id, context.sources, at);
    return { status: 'duplicate', engram, conflicts: [] };
  }
  const { engram, conflicts } = insertReviewed(
    store,
    context,
    {
      ...fields,
      session_id: recordedIn(draft.source_sessions),
      auto_pinned: false,
      ...freshRowCounters(at),
    },
    at,
  );
  return { status: 'created', engram, conflicts: summarize(conflicts) };
}

/**
 * Adds an engram (see {@link storeDraft} for duplicates and review); secrets are removed before anything is written.
 * The change and its audit row are one transaction; the audit journal is appended after commit.
 */
export function addEngram(store: Store, draft: EngramDraft, options: AddOptions = {}): AddResult {
  const prepared = prepareDraft(draft);
  const at = (options.now ?? (() => new Date()))().toISOString();
  const actor = options.actor ?? API_USER;
  const { result, entry } = audited(
    store,
    (outcome: Omit<AddResult, 'redacted' | 'undo_token'>) => ({
      actor,
      op: outcome.status === 'revised' ? 'revise' : outcome.status === 'duplicate' ? 'restate' : 'add',
      reason: outcome.engram.status === 'pending' ? outcome.engram.status_reason : null,
    }),
    (changes) =>
      storeDraft(store, prepared, at, options.onDuplicate ?? 'count', {
        changes,
        learnedBy: learnedByOf(actor),
        policy: options.policy ?? governancePolicy(),
        ...(options.verdicts ? { verdicts: options.verdicts } : {}),
        ...(options.sources ? { sources: options.sources } : {}),
      }),
    at,
  );
  if (entry) syncJournal(store);
  // The engram as stored after the audit row (conflict rows may follow the insert in the same transaction).
  return { ...result, redacted: prepared.redacted, undo_token: entry?.token ?? null };
}
