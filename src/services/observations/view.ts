import type { Engram, EngramStatus, LearnedBy } from '../../core/index.js';

/**
 * An engram as the Go engram shows an observation (its JSON field names and meanings): `type` is the engram's kind,
 * `content` the whole text (long detail when the engram has one, else its text), counts start at 1.
 */
export interface ObservationView {
  id: number;
  session_id: string;
  type: string;
  title: string;
  content: string;
  tool_name: string | null;
  project: string | null;
  scope: 'project' | 'personal';
  topic_key: string | null;
  /** 1 for a row never revised (ours counts edits from 0). */
  revision_count: number;
  /** 1 for a row never re-saved (ours counts re-saves from 0). */
  duplicate_count: number;
  last_seen_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** What the Go engram does not have: the engram's own fields, for clients that want them. */
  uid: string;
  category: string;
  tags: string[];
  pinned: boolean;
  deprecated: boolean;
  /** Review status (docs/GOVERNANCE.md): only `active` engrams are injected by hooks. */
  status: EngramStatus;
  learned_by: LearnedBy;
}

/** A title for engrams saved without one (lessons): the first line of the text, at most 80 characters. */
export function derivedTitle(text: string): string {
  const line = text.split('\n', 1)[0]?.trim() ?? '';
  return line.length > 80 ? `${line.slice(0, 79).trimEnd()}…` : line;
}

/** The observation view of an engram. */
export function observationView(engram: Engram): ObservationView {
  return {
    id: engram.id,
    session_id: engram.session_id ?? '',
    type: engram.kind,
    title: engram.title ?? derivedTitle(engram.text),
    content: engram.content ?? engram.text,
    tool_name: engram.tool_name,
    project: engram.project,
    scope: engram.scope,
    topic_key: engram.topic_key,
    revision_count: engram.revision_count + 1,
    duplicate_count: engram.duplicate_count + 1,
    last_seen_at: engram.last_seen_at,
    created_at: engram.created_at,
    updated_at: engram.updated_at,
    deleted_at: engram.deleted_at,
    uid: engram.uid,
    category: engram.category,
    tags: engram.tags,
    pinned: engram.pinned,
    deprecated: engram.deprecated,
    status: engram.status,
    learned_by: engram.learned_by,
  };
}
