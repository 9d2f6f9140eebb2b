import * as z from 'zod';
import {
  defaultScope,
  EngramError,
  LIMITS,
  normalizeCategory,
  normalizePrerequisites,
  normalizeProject,
  normalizeTags,
  normalizeTopicKey,
  ScopeSchema,
  type Engram,
  type RedactionKind,
  type Store,
} from '../../core/index.js';
import {
  API_USER,
  audited,
  governancePolicy,
  syncJournal,
  type Actor,
  type ChangeSet,
  type GovernancePolicy,
  type PrecomputedVerdicts,
} from '../governance/index.js';
import { learnedByOf, reassess, summarize, type ConflictSummary } from './add.js';
import { cleanText, requiredText } from './draft.js';
import { resolveEngram, type EngramRef } from './read.js';

/** Fields an update may change; each absent field is left alone, `null` clears a nullable field. */
export const EngramPatchSchema = z.strictObject({
  text: z.string().optional(),
  title: z.string().nullable().optional(),
  content: z.string().nullable().optional(),
  kind: z.string().min(1).max(LIMITS.kindChars).optional(),
  category: z.string().optional(),
  /** Replaces the tag list. */
  tags: z.union([z.array(z.string()), z.string()]).optional(),
  add_tags: z.union([z.array(z.string()), z.string()]).optional(),
  remove_tags: z.union([z.array(z.string()), z.string()]).optional(),
  prerequisites: z.unknown().optional(),
  project: z.string().nullable().optional(),
  scope: ScopeSchema.optional(),
  topic_key: z.string().nullable().optional(),
  tool_name: z.string().nullable().optional(),
});
export type EngramPatch = z.infer<typeof EngramPatchSchema>;

/** Result of a change to one engram. */
export interface EditResult {
  status: 'updated' | 'unchanged';
  engram: Engram;
  /** Names of the fields whose value changed. */
  changed: string[];
  redacted: RedactionKind[];
  /** Active engrams the new text contradicts (the engram then waits in review again). */
  conflicts: ConflictSummary[];
  /** `engram undo <token>` reverses this change; null when nothing changed. */
  undo_token: string | null;
}

type Clock = () => Date;
const stamp = (now?: Clock): string => (now ?? (() => new Date()))().toISOString();

/** Who changes an engram, and under which review policy. */
export interface ChangeOptions {
  now?: Clock;
  /** @default a person (API_USER) */
  actor?: Actor;
  policy?: GovernancePolicy;
  verdicts?: PrecomputedVerdicts;
}

/** Runs one audited change of one engram and appends the journal after commit. */
function auditedEdit(
  store: Store,
  options: ChangeOptions,
  op: string,
  reason: string | null,
  fn: (changes: ChangeSet, at: string) => Omit<EditResult, 'undo_token'>,
): EditResult {
  const at = stamp(options.now);
  const { result, entry } = audited(store, { actor: options.actor ?? API_USER, op, reason }, (changes) => fn(changes, at), at);
  if (entry) syncJournal(store);
  return { ...result, undo_token: entry?.token ?? null };
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Keeps only the fields that differ from the engram. */
function diff(engram: Engram, next: Partial<Engram>): Partial<Engram> {
  return Object.fromEntries(
    Object.entries(next).filter(([key, value]) => !same(engram[key as keyof Engram], value)),
  ) as Partial<Engram>;
}

/**
 * Applies a patch. Content changes bump `revision_count`; an empty patch is a usage error. A new text is reviewed
 * again ({@link reassess}): one that contradicts an active engram, or that the actor may not make active by itself
 * (an agent re-wording a reviewed engram), sends an active engram back to review.
 */
export function updateEngram(store: Store, ref: EngramRef, patch: EngramPatch, options: ChangeOptions = {}): EditResult {
  if (Object.values(patch).every((value) => value === undefined)) {
    throw new EngramError('INVALID_INPUT', 'nothing to update: give at least one field to change');
  }
  const redacted = new Set<RedactionKind>();
  const actor = options.actor ?? API_USER;

  return auditedEdit(store, options, 'edit', null, (changes, at) => {
    const engram = resolveEngram(store, ref);
    const next: Partial<Engram> = {};
    if (patch.text !== undefined) next.text = requiredText(patch.text, 'text', LIMITS.textChars, redacted);
    if (patch.title !== undefined) next.title = cleanText(patch.title, 'title', LIMITS.titleChars, redacted);
    if (patch.content !== undefined) next.content = cleanText(patch.content, 'content', LIMITS.contentChars, redacted);
    if (patch.kind !== undefined) next.kind = patch.kind;
    if (patch.category !== undefined) next.category = normalizeCategory(patch.category);
    let tags = patch.tags !== undefined ? normalizeTags(patch.tags) : engram.tags;
    if (patch.add_tags !== undefined) tags = normalizeTags([...tags, ...normalizeTags(patch.add_tags)]);
    if (patch.remove_tags !== undefined) {
      const removed = new Set(normalizeTags(patch.remove_tags));
      tags = tags.filter((tag) => !removed.has(tag));
    }
    next.tags = tags;
    if (patch.prerequisites !== undefined) next.prerequisites = normalizePrerequisites(patch.prerequisites);
    if (patch.project !== undefined) {
      next.project = normalizeProject(patch.project);
      next.scope = patch.scope ?? defaultScope(next.project);
    } else if (patch.scope !== undefined) {
      next.scope = patch.scope;
    }
    if (patch.topic_key !== undefined) next.topic_key = normalizeTopicKey(patch.topic_key);
    if (patch.tool_name !== undefined) next.tool_name = patch.tool_name?.trim() || null;

    const changesToApply = diff(engram, next);
    const changed = Object.keys(changesToApply);
    if (changed.length === 0) return { status: 'unchanged', engram, changed, redacted: [...redacted], conflicts: [] };
    changes.engram(engram.id);
    // What it says, or where it is shown, changed: review it again.
    let review: ReturnType<typeof reassess> = { fields: {}, conflicts: [] };
    if (changesToApply.text !== undefined || changesToApply.kind !== undefined || changesToApply.project !== undefined) {
      review = reassess(
        store,
        { changes, learnedBy: learnedByOf(actor), policy: options.policy ?? governancePolicy(), ...(options.verdicts ? { verdicts: options.verdicts } : {}) },
        { ...engram, project: next.project !== undefined ? next.project : engram.project },
        next.text ?? engram.text,
        at,
        next.kind ?? engram.kind,
      );
    }
    const updated = store.engrams.update(engram.id, {
      ...changesToApply,
      ...review.fields,
      revision_count: engram.revision_count + 1,
      updated_at: at,
    });
    return { status: 'updated', engram: updated, changed, redacted: [...redacted], conflicts: summarize(review.conflicts) };
  });
}

/**
 * Marks an engram deprecated (kept, never recalled), or takes that back. Taking it back sends the engram to review
 * (`pending`), not straight to active: making an engram active is a person's decision (services/gate, `engram
 * approve`), and this function is reachable from every surface.
 */
export function deprecateEngram(
  store: Store,
  ref: EngramRef,
  options: ChangeOptions & { reason?: string; undo?: boolean } = {},
): EditResult {
  return auditedEdit(store, options, options.undo ? 'undeprecate' : 'deprecate', options.reason?.trim() || null, (changes, at) => {
    const engram = resolveEngram(store, ref);
    if (options.undo && engram.status !== 'deprecated') return { status: 'unchanged', engram, changed: [], redacted: [], conflicts: [] };
    const next: Partial<Engram> = options.undo
      ? { status: 'pending', status_reason: 'no longer deprecated: waits for review', deprecated: false, deprecated_reason: null }
      : {
          status: 'deprecated',
          deprecated: true,
          deprecated_reason: options.reason?.trim() || engram.deprecated_reason,
          status_reason: options.reason?.trim() || engram.deprecated_reason,
        };
    const found = diff(engram, next);
    const changed = Object.keys(found);
    if (changed.length === 0) return { status: 'unchanged', engram, changed, redacted: [], conflicts: [] };
    changes.engram(engram.id);
    return { status: 'updated', engram: store.engrams.update(engram.id, { ...found, updated_at: at }), changed, redacted: [], conflicts: [] };
  });
}

/** Pins (always shown where its prerequisites hold) or unpins an engram. A manual pin is never auto-unpinned. */
export function pinEngram(store: Store, ref: EngramRef, pinned: boolean, options: ChangeOptions = {}): EditResult {
  return auditedEdit(store, options, pinned ? 'pin' : 'unpin', null, (changes, at) => {
    const engram = resolveEngram(store, ref);
    const found = diff(engram, { pinned, auto_pinned: false });
    const changed = Object.keys(found);
    if (changed.length === 0) return { status: 'unchanged', engram, changed, redacted: [], conflicts: [] };
    changes.engram(engram.id);
    return { status: 'updated', engram: store.engrams.update(engram.id, { ...found, updated_at: at }), changed, redacted: [], conflicts: [] };
  });
}

/** Result of {@link deleteEngram}. */
export interface DeleteResult {
  id: number;
  uid: string;
  /** `soft`: hidden everywhere but kept (and exportable with --include-deleted); `hard`: the row and its statistics are gone. */
  mode: 'soft' | 'hard';
  /** False when a soft delete found the engram already deleted. */
  changed: boolean;
  /** `engram undo <token>` brings it back exactly (a hard delete too: the audit entry holds its rows). */
  undo_token: string | null;
}

/** Deletes an engram: soft by default, hard (row and learning state removed) on request. */
export function deleteEngram(store: Store, ref: EngramRef, options: { hard?: boolean; now?: Clock; actor?: Actor; reason?: string } = {}): DeleteResult {
  const at = stamp(options.now);
  const { result, entry } = audited(
    store,
    { actor: options.actor ?? API_USER, op: options.hard ? 'delete-hard' : 'delete', reason: options.reason ?? null },
    (changes): Omit<DeleteResult, 'undo_token'> => {
      const engram = resolveEngram(store, ref, { includeDeleted: true });
      if (options.hard) {
        changes.engram(engram.id);
        changes.dependents(engram.id);
        store.engrams.hardDelete(engram.id);
        return { id: engram.id, uid: engram.uid, mode: 'hard', changed: true };
      }
      if (engram.deleted_at !== null) return { id: engram.id, uid: engram.uid, mode: 'soft', changed: false };
      changes.engram(engram.id);
      store.engrams.update(engram.id, { deleted_at: at, updated_at: at });
      return { id: engram.id, uid: engram.uid, mode: 'soft', changed: true };
    },
    at,
  );
  if (entry) syncJournal(store);
  return { ...result, undo_token: entry?.token ?? null };
}
