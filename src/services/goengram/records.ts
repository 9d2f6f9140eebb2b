/**
 * One Go record → our rows: the identity a record keeps across machines (its sync id), and the fields of the engram,
 * session or prompt it becomes. Shared by the Go import (database or export JSON) and `engram sync`.
 * @module
 */
import { createHash } from 'node:crypto';
import { LIMITS, normalizeProject, normalizeTags, type NewEngram, type Prerequisites, type Store } from '../../core/index.js';
import { canonicalProject, categoryOf, goScope, goTopicKey, splitBody } from '../observations/index.js';
import type { GoObservationIn, GoPromptIn, GoSessionIn } from './schema.js';
import { isoFromGo } from './wire.js';

/** `obs-` / `prompt-` and 32 hex, as the Go engram names records, derived from what identifies one. */
function derivedId(prefix: string, parts: ReadonlyArray<string | number | null | undefined>): string {
  return `${prefix}-${createHash('sha256').update(parts.map((part) => String(part ?? '')).join('\u0000')).digest('hex').slice(0, 32)}`;
}

/** A sync id usable as our uid (8–64 characters): the record's own, else one derived from its content. */
function usableId(prefix: string, given: string | null | undefined, parts: ReadonlyArray<string | number | null | undefined>): string {
  const id = (given ?? '').trim();
  if (id.length >= 8 && id.length <= 64 && !/\s/.test(id)) return id;
  return id === '' ? derivedId(prefix, parts) : derivedId(prefix, [id]);
}

/** The stable identity of a Go observation: its sync id, or (older Go databases had none) one derived from it. */
export const observationSyncId = (obs: GoObservationIn): string =>
  usableId('obs', obs.sync_id, [obs.session_id, obs.type, obs.title, obs.content, obs.created_at]);

/** The stable identity of a Go prompt. */
export const promptSyncId = (prompt: GoPromptIn): string => usableId('prompt', prompt.sync_id, [prompt.session_id, prompt.content, prompt.created_at]);

/** A record's version for last-writer-wins: our millisecond time when it carries one, else the Go time. */
export function observationVersion(obs: GoObservationIn): string | null {
  return isoFromGo(obs.engram?.updated_at) ?? isoFromGo(obs.updated_at) ?? isoFromGo(obs.created_at);
}

/** Why a record was not taken. */
export type Refusal = { reason: string };

const cut = (value: string, max: number): string => (value.length > max ? value.slice(0, max) : value);
const MARK = '... [truncated]';

/**
 * The engram a Go observation becomes (without id and uid), or why it cannot be one. The project is the canonical
 * spelling of the record's (or `project` when given: sync relabels records with the importing repository's name).
 */
export function engramFromGo(store: Store, obs: GoObservationIn, options: { project?: string | null; now: string }): Omit<NewEngram, 'id' | 'uid'> | Refusal {
  const title = cut((obs.title ?? '').trim(), LIMITS.titleChars);
  let body = (obs.content ?? '').trim() || title;
  if (body === '') return { reason: 'no title and no content' };
  if (body.length > LIMITS.contentChars) body = body.slice(0, LIMITS.contentChars - MARK.length) + MARK;
  const { text, content } = splitBody(body);
  const kind = cut((obs.type ?? '').trim() || 'manual', LIMITS.kindChars);
  const created = isoFromGo(obs.created_at) ?? options.now;
  const updated = observationVersion(obs) ?? created;
  const extension = obs.engram ?? undefined;
  const deletedAt = obs.deleted_at || extension?.deleted_at ? (isoFromGo(extension?.deleted_at) ?? isoFromGo(obs.deleted_at) ?? updated) : null;
  const project = options.project !== undefined ? options.project : canonicalProject(store, obs.project ?? '');
  const sessionId = (obs.session_id ?? '').trim() || null;
  let tags: string[] = [];
  try {
    tags = normalizeTags(extension?.tags ?? []);
  } catch {
    tags = [];
  }
  const category = extension?.category?.trim() || categoryOf(kind);
  return {
    kind,
    title: title || null,
    text,
    content,
    category: safeCategory(category, kind),
    tags,
    prerequisites: isPrerequisites(extension?.prerequisites) ? extension.prerequisites : null,
    source: extension?.source === 'manual' || extension?.source === 'extracted' || extension?.source === 'feedback' ? extension.source : 'import',
    source_sessions: extension?.source_sessions?.filter((id) => typeof id === 'string' && id !== '').slice(0, 50) ?? (sessionId ? [sessionId] : []),
    session_id: sessionId,
    tool_name: (obs.tool_name ?? '').trim() || null,
    occurrence_count: 1,
    times_matched: 0,
    last_matched_at: null,
    pinned: extension?.pinned === true,
    auto_pinned: false,
    deprecated: false,
    deprecated_reason: null,
    project: project === null ? null : normalizeProject(project),
    scope: goScope(obs.scope),
    topic_key: goTopicKey(obs.topic_key),
    revision_count: Math.max(0, (obs.revision_count ?? 1) - 1),
    duplicate_count: Math.max(0, (obs.duplicate_count ?? 1) - 1),
    created_at: created,
    updated_at: updated,
    last_seen_at: isoFromGo(obs.last_seen_at) ?? updated,
    deleted_at: deletedAt,
  };
}

/** A category we can store: the record's when valid, else one from the type. */
function safeCategory(category: string, kind: string): string {
  return /^[a-z0-9][a-z0-9_-]*(?:\/[a-z0-9][a-z0-9_-]*){0,4}$/.test(category) && category.length <= 200 ? category : categoryOf(kind);
}

function isPrerequisites(value: unknown): value is Prerequisites {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.entries(value).every(
    ([key, list]) => ['os', 'repos', 'paths', 'mcp_servers', 'tags'].includes(key) && Array.isArray(list) && list.every((item) => typeof item === 'string' && item !== ''),
  );
}

/**
 * Makes sure a session named by an imported record exists: created with what the record says, or an existing one
 * given the summary and end it lacked. Returns whether it was created.
 */
export function ensureSession(
  store: Store,
  session: Pick<GoSessionIn, 'id' | 'project' | 'directory' | 'started_at' | 'ended_at' | 'summary'>,
  options: { now: string; project?: string | null },
): boolean {
  const id = session.id.trim();
  const project = options.project !== undefined ? options.project : canonicalProject(store, session.project ?? '');
  const started = isoFromGo(session.started_at) ?? options.now;
  const { session: stored, created } = store.sessions.ensure(id, { project, cwd: (session.directory ?? '').trim() || null, at: started });
  const ended = isoFromGo(session.ended_at);
  if (ended && stored.ended_at === null) store.sessions.end(id, null, ended);
  const summary = (session.summary ?? '').trim();
  if (summary !== '' && !stored.summary) store.sessions.setSummary(id, summary);
  return created;
}

/** The fields of a prompt brought in, or why it cannot be one. */
export function promptFromGo(store: Store, prompt: GoPromptIn, options: { now: string; project?: string | null }):
  | { uid: string; session_id: string; content: string; project: string | null; created_at: string }
  | Refusal {
  const content = cut((prompt.content ?? '').trim(), 10_000);
  const sessionId = (prompt.session_id ?? '').trim();
  if (content === '') return { reason: 'empty prompt' };
  if (sessionId === '') return { reason: 'prompt without a session' };
  return {
    uid: promptSyncId(prompt),
    session_id: sessionId,
    content,
    project: options.project !== undefined ? options.project : canonicalProject(store, prompt.project ?? ''),
    created_at: isoFromGo(prompt.created_at) ?? options.now,
  };
}
