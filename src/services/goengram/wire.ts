/**
 * The Go engram's JSON shapes (../shared/seeds/001 §1 and §3: `Observation`, `Session`, `SessionSummary`, `Prompt`,
 * `SearchResult`, `TimelineResult`, `ExportData`) and the conversions from ours. Its clients parse these exactly:
 * optional fields are left out when empty (Go's `omitempty`), counts start at 1, and times are SQLite's
 * `YYYY-MM-DD HH:MM:SS` in UTC (ours are ISO 8601 with milliseconds).
 * @module
 */
import type { Session, SessionWithCount, UserPrompt } from '../../core/index.js';
import type { ObservationHit, TimelineResult } from '../observations/index.js';
import type { ObservationView } from '../observations/index.js';

/** The Go engram's `Observation`. */
export interface GoObservation {
  id: number;
  sync_id: string;
  session_id: string;
  type: string;
  title: string;
  content: string;
  tool_name?: string;
  project?: string;
  scope: string;
  topic_key?: string;
  revision_count: number;
  duplicate_count: number;
  last_seen_at?: string;
  created_at: string;
  updated_at: string;
  deleted_at?: string;
}

/** The Go engram's `Session`. */
export interface GoSession {
  id: string;
  project: string;
  directory: string;
  started_at: string;
  ended_at?: string;
  summary?: string;
}

/** The Go engram's `SessionSummary` (`GET /sessions/recent`). */
export interface GoSessionSummary {
  id: string;
  project: string;
  started_at: string;
  ended_at?: string;
  summary?: string;
  observation_count: number;
}

/** The Go engram's `Prompt`. */
export interface GoPrompt {
  id: number;
  sync_id: string;
  session_id: string;
  content: string;
  project?: string;
  created_at: string;
}

/** The Go engram's `SearchResult`: an observation and its rank (lower is better, as FTS5's bm25). */
export type GoSearchResult = GoObservation & { rank: number };

/** The Go engram's `TimelineEntry`. */
export type GoTimelineEntry = GoObservation & { is_focus: boolean };

/** The Go engram's `TimelineResult`. */
export interface GoTimeline {
  focus: GoObservation;
  before: GoTimelineEntry[];
  after: GoTimelineEntry[];
  session_info: GoSession | null;
  total_in_range: number;
}

/** The Go engram's `ExportData` (`GET /export`, `engram export`), with our own fields on each observation. */
export interface GoExport {
  version: string;
  exported_at: string;
  sessions: GoSession[];
  observations: Array<GoObservation & { engram?: EngramExtension }>;
  prompts: GoPrompt[];
}

/**
 * What an engram has that a Go observation has not, carried under the key `engram` (the Go engram ignores keys it
 * does not know): so an export or a chunk read by Engram loses nothing. Per-person learning state (match counts, tag
 * relevance, automatic pins) is never carried.
 */
export interface EngramExtension {
  v: 1;
  /** The record's time to the millisecond (the Go fields keep seconds): what last-writer-wins compares. */
  updated_at: string;
  deleted_at?: string;
  /** A hard delete: the engram is gone, not merely hidden. */
  hard_delete?: boolean;
  category: string;
  tags: string[];
  prerequisites: unknown;
  /** A pin someone set by hand. */
  pinned: boolean;
  source: string;
  /** The agent sessions it was learned from: their tapes are in .engram/tapes/ of an opted-in repository. */
  source_sessions: string[];
}

/** The version string the Go engram writes in its exports. */
export const GO_EXPORT_VERSION = '0.1.0';

/** An ISO time as the Go engram writes times (`2026-11-01 10:00:00`, UTC); other text is returned as it is. */
export function goTime(iso: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(iso);
  if (!match) return iso;
  return iso.endsWith('Z') ? `${match[1]} ${match[2]}` : goTime(new Date(iso).toISOString());
}

/**
 * A time from the Go engram (`2026-11-01 10:00:00`, RFC 3339 with or without fraction and zone) as our ISO form
 * (`2026-11-01T10:00:00.000Z`), or null when it is not a time. A time without a zone is UTC, as SQLite writes it.
 */
export function isoFromGo(text: string | null | undefined): string | null {
  const value = (text ?? '').trim();
  if (value === '') return null;
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$/.exec(value);
  const parsed = match ? Date.parse(`${match[1]}T${match[2]}${match[3] ?? 'Z'}`) : /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN;
  return Number.isFinite(parsed) ? new Date(parsed).toISOString() : null;
}

/** `value` under `key` unless it is null or empty (Go's `omitempty`). */
function optional<K extends string>(key: K, value: string | null | undefined): Partial<Record<K, string>> {
  return value === null || value === undefined || value === '' ? {} : ({ [key]: value } as Record<K, string>);
}

/** An observation as the Go engram shows it. */
export function goObservation(view: ObservationView): GoObservation {
  return {
    id: view.id,
    sync_id: view.uid,
    session_id: view.session_id,
    type: view.type,
    title: view.title,
    content: view.content,
    ...optional('tool_name', view.tool_name),
    ...optional('project', view.project),
    scope: view.scope,
    ...optional('topic_key', view.topic_key),
    revision_count: view.revision_count,
    duplicate_count: view.duplicate_count,
    ...optional('last_seen_at', view.last_seen_at === null ? null : goTime(view.last_seen_at)),
    created_at: goTime(view.created_at),
    updated_at: goTime(view.updated_at),
    ...optional('deleted_at', view.deleted_at === null ? null : goTime(view.deleted_at)),
  };
}

/** Search hits as the Go engram's `SearchResult`s: the fused score (higher is better) as a rank (lower is better). */
export function goSearchResults(hits: readonly ObservationHit[]): GoSearchResult[] {
  return hits.map((hit) => ({ ...goObservation(hit), rank: hit.score === 0 ? 0 : -hit.score }));
}

/** A session as the Go engram's `Session`. */
export function goSession(session: Session): GoSession {
  return {
    id: session.id,
    project: session.project ?? '',
    directory: session.cwd ?? '',
    started_at: goTime(session.started_at),
    ...optional('ended_at', session.ended_at === null ? null : goTime(session.ended_at)),
    ...optional('summary', session.summary),
  };
}

/** A session with its observation count as the Go engram's `SessionSummary`. */
export function goSessionSummary(session: SessionWithCount): GoSessionSummary {
  return {
    id: session.id,
    project: session.project ?? '',
    started_at: goTime(session.started_at),
    ...optional('ended_at', session.ended_at === null ? null : goTime(session.ended_at)),
    ...optional('summary', session.summary),
    observation_count: session.observation_count,
  };
}

/** A prompt as the Go engram's `Prompt`. */
export function goPrompt(prompt: UserPrompt): GoPrompt {
  return {
    id: prompt.id,
    sync_id: prompt.uid,
    session_id: prompt.session_id,
    content: prompt.content,
    ...optional('project', prompt.project),
    created_at: goTime(prompt.created_at),
  };
}

/** A timeline as the Go engram's `TimelineResult`. */
export function goTimeline(result: TimelineResult): GoTimeline {
  const entry = (view: ObservationView): GoTimelineEntry => ({ ...goObservation(view), is_focus: false });
  return {
    focus: goObservation(result.focus),
    before: result.before.map(entry),
    after: result.after.map(entry),
    session_info: result.session_info ? goSession(result.session_info) : null,
    total_in_range: result.total_in_range,
  };
}
