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
}

type Clock = () => Date;
const stamp = (now?: Clock): string => (now ?? (() => new Date()))().toISOString();

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Keeps only the fields that differ from the engram. */
function diff(engram: Engram, next: Partial<Engram>): Partial<Engram> {
  return Object.fromEntries(
    Object.entries(next).filter(([key, value]) => !same(engram[key as keyof Engram], value)),
  ) as Partial<Engram>;
}

/** Applies a patch. Content changes bump `revision_count`; an empty patch is a usage error. */
export function updateEngram(store: Store, ref: EngramRef, patch: EngramPatch, options: { now?: Clock } = {}): EditResult {
  if (Object.values(patch).every((value) => value === undefined)) {
    throw new EngramError('INVALID_INPUT', 'nothing to update: give at least one field to change');
  }
  const redacted = new Set<RedactionKind>();
  const at = stamp(options.now);

  return store.write(() => {
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

    const changes = diff(engram, next);
    const changed = Object.keys(changes);
    if (changed.length === 0) return { status: 'unchanged', engram, changed, redacted: [...redacted] };
    const updated = store.engrams.update(engram.id, {
      ...changes,
      revision_count: engram.revision_count + 1,
      updated_at: at,
    });
    return { status: 'updated', engram: updated, changed, redacted: [...redacted] };
  });
}

/** Marks an engram deprecated (kept, but never recalled), or undoes that. */
export function deprecateEngram(
  store: Store,
  ref: EngramRef,
  options: { reason?: string; undo?: boolean; now?: Clock } = {},
): EditResult {
  const at = stamp(options.now);
  return store.write(() => {
    const engram = resolveEngram(store, ref);
    const next: Partial<Engram> = options.undo
      ? { deprecated: false, deprecated_reason: null }
      : { deprecated: true, deprecated_reason: options.reason?.trim() || engram.deprecated_reason };
    const changes = diff(engram, next);
    const changed = Object.keys(changes);
    if (changed.length === 0) return { status: 'unchanged', engram, changed, redacted: [] };
    return { status: 'updated', engram: store.engrams.update(engram.id, { ...changes, updated_at: at }), changed, redacted: [] };
  });
}

/** Pins (always shown where its prerequisites hold) or unpins an engram. A manual pin is never auto-unpinned. */
export function pinEngram(store: Store, ref: EngramRef, pinned: boolean, options: { now?: Clock } = {}): EditResult {
  const at = stamp(options.now);
  return store.write(() => {
    const engram = resolveEngram(store, ref);
    const changes = diff(engram, { pinned, auto_pinned: false });
    const changed = Object.keys(changes);
    if (changed.length === 0) return { status: 'unchanged', engram, changed, redacted: [] };
    return { status: 'updated', engram: store.engrams.update(engram.id, { ...changes, updated_at: at }), changed, redacted: [] };
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
}

/** Deletes an engram: soft by default, hard (row and learning state removed) on request. */
export function deleteEngram(store: Store, ref: EngramRef, options: { hard?: boolean; now?: Clock } = {}): DeleteResult {
  const at = stamp(options.now);
  return store.write(() => {
    const engram = resolveEngram(store, ref, { includeDeleted: true });
    if (options.hard) {
      store.engrams.hardDelete(engram.id);
      return { id: engram.id, uid: engram.uid, mode: 'hard', changed: true };
    }
    if (engram.deleted_at !== null) return { id: engram.id, uid: engram.uid, mode: 'soft', changed: false };
    store.engrams.update(engram.id, { deleted_at: at, updated_at: at });
    return { id: engram.id, uid: engram.uid, mode: 'soft', changed: true };
  });
}
