import { contentHash, type Engram, type RedactionKind, type Store } from '../../core/index.js';
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

/** Result of {@link addEngram}. */
export interface AddResult {
  status: AddStatus;
  engram: Engram;
  /** Kinds of secret or private content removed before storing. */
  redacted: RedactionKind[];
}

/** Options for {@link addEngram}. */
export interface AddOptions {
  /** Clock. @default () => new Date() */
  now?: () => Date;
  /** `count` bumps the duplicate counter (a person or agent re-stating a lesson); `skip` leaves it (re-import). @default "count" */
  onDuplicate?: 'count' | 'skip';
}

const union = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])];

/**
 * Stores the prepared draft inside an open write transaction: topic upsert first (same topic key → revise in
 * place), then exact-duplicate detection on the normalised content hash, then insert.
 */
export function storeDraft(store: Store, draft: PreparedDraft, at: string, onDuplicate: 'count' | 'skip'): Omit<AddResult, 'redacted'> {
  const { redacted: _redacted, ...fields } = draft;
  if (draft.topic_key !== null) {
    const existing = store.engrams.findLiveByTopic(draft.topic_key, draft.project, draft.scope);
    if (existing) {
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
      });
      return { status: 'revised', engram };
    }
  }
  const duplicate = store.engrams.findLiveByHash(contentHash(draft.text), draft.project, draft.scope);
  if (duplicate) {
    if (onDuplicate === 'skip') return { status: 'skipped', engram: duplicate };
    const engram = store.engrams.update(duplicate.id, {
      duplicate_count: duplicate.duplicate_count + 1,
      tags: union(duplicate.tags, draft.tags).sort(),
      source_sessions: union(duplicate.source_sessions, draft.source_sessions),
      last_seen_at: at,
    });
    return { status: 'duplicate', engram };
  }
  const engram = store.engrams.insert({
    ...fields,
    auto_pinned: false,
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
  });
  return { status: 'created', engram };
}

/** Adds an engram (see {@link storeDraft} for duplicate handling); secrets are removed before anything is written. */
export function addEngram(store: Store, draft: EngramDraft, options: AddOptions = {}): AddResult {
  const prepared = prepareDraft(draft);
  const at = (options.now ?? (() => new Date()))().toISOString();
  const result = store.write(() => storeDraft(store, prepared, at, options.onDuplicate ?? 'count'));
  return { ...result, redacted: prepared.redacted };
}
