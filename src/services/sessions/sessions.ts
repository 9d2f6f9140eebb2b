/**
 * Agent sessions for a person to inspect (the viewer's Sessions screen): the sessions, newest first, paged by a
 * keyset cursor; and one session — what the hooks injected at each event (which engrams, for which query, at which
 * rank and score), the tool calls they saw, what the evaluator judged, what extraction learned from it and the review
 * state of each, its prompts (redacted when stored) and its tapes. Read-only.
 * @module
 */
import { EngramError, type Agent, type EngramStatus, type EvaluationState, type ExtractionState, type Session, type Store, type ToolEventRecord } from '../../core/index.js';
import { tapeFolders } from '../provenance/index.js';
import { listTapePage, tapeLocation, type TapeEntry } from '../tape/index.js';

/** Agents a session can be of. */
export const SESSION_AGENTS = ['claude', 'codex', 'unknown'] as const satisfies readonly Agent[];

/** One line of the sessions list. */
export interface SessionSummary {
  id: string;
  agent: Agent;
  project: string | null;
  cwd: string | null;
  model: string | null;
  start_source: string | null;
  turns: number;
  started_at: string;
  last_activity_at: string;
  ended_at: string | null;
  end_reason: string | null;
  /** Engrams the hooks showed, prompts stored, tool calls seen, judgements made. */
  shown: number;
  prompts: number;
  tools: number;
  judged: number;
  eval_status: EvaluationState['eval_status'] | null;
}

/** Options for {@link listSessions}. */
export interface SessionListOptions {
  /** A project name, or null for sessions without one. */
  project?: string | null;
  agent?: Agent;
  /** @default 50 */
  limit?: number;
  /** The `next` of the previous page: sessions older than its last one. */
  after?: string | null;
}

/** A page of sessions, newest first; `next` continues after its last one (null at the end). */
export interface SessionPage {
  sessions: SessionSummary[];
  total: number;
  limit: number;
  next: string | null;
}

/** A cursor: the last session's start and id, base64url JSON (the page never reads it). */
const encodeCursor = (session: { started_at: string; id: string }): string => Buffer.from(JSON.stringify([session.started_at, session.id])).toString('base64url');

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && value.every((item) => typeof item === 'string')) return value as [string, string];
  } catch {
    // Reported below.
  }
  throw new EngramError('INVALID_INPUT', 'after is not a cursor this list gave (use the `next` of a page)');
}

function filterSql(options: SessionListOptions): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (options.project !== undefined) {
    clauses.push(options.project === null ? 'project IS NULL' : 'project = ?');
    if (options.project !== null) params.push(options.project);
  }
  if (options.agent !== undefined) {
    clauses.push('agent = ?');
    params.push(options.agent);
  }
  return { sql: clauses.length ? clauses.join(' AND ') : '1', params };
}

/** The sessions, newest first (by start), paged by cursor, with how much happened in each. */
export function listSessions(store: Store, options: SessionListOptions = {}): SessionPage {
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new EngramError('INVALID_INPUT', `limit must be an integer from 1 to 200, got ${limit}`);
  const filter = filterSql(options);
  const after = options.after ? decodeCursor(options.after) : null;
  return store.read(() => {
    const total = Number(store.db.prepare(`SELECT count(*) FROM sessions WHERE ${filter.sql}`).pluck().get(...filter.params));
    const rows = store.db
      .prepare(
        `SELECT s.id, s.agent, s.project, s.cwd, s.model, s.start_source, s.turns, s.started_at, s.last_activity_at, s.ended_at, s.end_reason,
                (SELECT count(*) FROM session_shown_engrams x WHERE x.session_id = s.id) AS shown,
                (SELECT count(*) FROM user_prompts x WHERE x.session_id = s.id) AS prompts,
                (SELECT count(*) FROM tool_events x WHERE x.session_id = s.id) AS tools,
                (SELECT count(*) FROM engram_judgements x WHERE x.session_id = s.id) AS judged,
                (SELECT eval_status FROM session_audit x WHERE x.session_id = s.id) AS eval_status
           FROM sessions s
          WHERE ${filter.sql} ${after ? 'AND (s.started_at < ? OR (s.started_at = ? AND s.id < ?))' : ''}
          ORDER BY s.started_at DESC, s.id DESC LIMIT ?`,
      )
      .all(...filter.params, ...(after ? [after[0], after[0], after[1]] : []), limit + 1) as SessionSummary[];
    const more = rows.length > limit;
    const sessions = rows.slice(0, limit);
    const last = sessions.at(-1);
    return { sessions, total, limit, next: more && last ? encodeCursor(last) : null };
  });
}

/** The choices of the sessions list's filters, with counts. */
export function sessionFacets(store: Store): { projects: Array<{ value: string | null; count: number }>; agents: Array<{ value: Agent; count: number }> } {
  return store.read(() => ({
    projects: store.db.prepare('SELECT project AS value, count(*) AS count FROM sessions GROUP BY project ORDER BY count DESC, value').all() as Array<{ value: string | null; count: number }>,
    agents: store.db.prepare('SELECT agent AS value, count(*) AS count FROM sessions GROUP BY agent ORDER BY count DESC').all() as Array<{ value: Agent; count: number }>,
  }));
}

/** A short view of an engram named by a session's activity; null text when it was forgotten since. */
export interface EngramRefView {
  id: number;
  text: string | null;
  status: EngramStatus | null;
  category: string | null;
}

/** One hook event that injected engrams: when, which event, for which query, and what it showed. */
export interface HookInjection {
  event: string;
  query: string | null;
  at: string;
  answered_by: string | null;
  context_epoch: number;
  engrams: Array<EngramRefView & { rank: number | null; score: number | null; chars: number; times: number }>;
}

/** One judgement made in the session: the evaluator's (score null when no LLM judged) or feedback. */
export interface SessionJudgement {
  engram: EngramRefView;
  source: 'evaluation' | 'feedback';
  score: number | null;
  evidence: string | null;
  judged_by: string;
  at: string;
}

/** An engram learned from the session and where review has it now. */
export interface ExtractedEngram extends EngramRefView {
  learned_by: string;
  status_reason: string | null;
  created_at: string;
  /** The moment of a tape it was learned in, when extraction found one. */
  tape_id: string | null;
  event_from: number | null;
  event_to: number | null;
}

/** A page of a session's tool calls or prompts. */
export interface ActivityPage<T> {
  items: T[];
  total: number;
  offset: number;
  limit: number;
}

/** One tool call the hooks saw (its session is the one asked about). */
export type SessionToolEvent = Omit<ToolEventRecord, 'session_id'>;

/** Everything recorded about one session. */
export interface SessionDetail {
  session: Session;
  /** Its environment as the evaluator saw it, and the evaluation's state. */
  audit: EvaluationState | null;
  extraction: ExtractionState | null;
  injections: HookInjection[];
  judgements: SessionJudgement[];
  extracted: ExtractedEngram[];
  prompts: ActivityPage<{ content: string; created_at: string }>;
  tools: ActivityPage<SessionToolEvent>;
  tapes: TapeEntry[];
}

/** Rows a session page shows of its tool calls and prompts at once (more through {@link sessionActivity}). */
export const SESSION_PAGE = 100;

function engramViews(store: Store, ids: readonly number[]): Map<number, EngramRefView> {
  if (ids.length === 0) return new Map();
  const rows = store.db
    .prepare("SELECT id, text, status, category FROM engrams WHERE id IN (SELECT value FROM json_each(?)) AND deleted_at IS NULL")
    .all(JSON.stringify([...new Set(ids)])) as EngramRefView[];
  return new Map(rows.map((row) => [row.id, row]));
}

const refOf = (views: Map<number, EngramRefView>, id: number): EngramRefView => views.get(id) ?? { id, text: null, status: null, category: null };

/** A page of a session's tool calls (`tools`) or prompts (`prompts`), oldest first. */
export function sessionActivity(store: Store, sessionId: string, kind: 'tools', options?: { offset?: number; limit?: number }): ActivityPage<SessionToolEvent>;
export function sessionActivity(store: Store, sessionId: string, kind: 'prompts', options?: { offset?: number; limit?: number }): ActivityPage<{ content: string; created_at: string }>;
export function sessionActivity(store: Store, sessionId: string, kind: 'tools' | 'prompts', options: { offset?: number; limit?: number } = {}): ActivityPage<unknown> {
  const offset = options.offset ?? 0;
  const limit = options.limit ?? SESSION_PAGE;
  if (!Number.isInteger(offset) || offset < 0) throw new EngramError('INVALID_INPUT', `offset must be a non-negative integer, got ${offset}`);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new EngramError('INVALID_INPUT', `limit must be an integer from 1 to 500, got ${limit}`);
  const table = kind === 'tools' ? 'tool_events' : 'user_prompts';
  const columns = kind === 'tools' ? 'tool_use_id, tool_name, target, ok, error, duration_ms, at' : 'content, created_at';
  return store.read(() => {
    const total = Number(store.db.prepare(`SELECT count(*) FROM ${table} WHERE session_id = ?`).pluck().get(sessionId));
    const rows = store.db.prepare(`SELECT ${columns} FROM ${table} WHERE session_id = ? ORDER BY id LIMIT ? OFFSET ?`).all(sessionId, limit, offset) as Array<Record<string, unknown>>;
    const items = kind === 'tools' ? rows.map((row) => ({ ...row, ok: row.ok === 1 })) : rows;
    return { items, total, offset, limit };
  });
}

/** The tapes of a session: in the tape folder of the folder it ran in, else in any tape folder the store knows. */
export function sessionTapes(store: Store, session: Pick<Session, 'id' | 'cwd' | 'repo_root'>, home: string): TapeEntry[] {
  const folder = session.repo_root ?? session.cwd;
  const own = folder ? listTapePage([tapeLocation(folder, home).tapes_dir], { session: session.id, limit: 500 }).tapes : [];
  if (own.length) return own;
  return listTapePage(tapeFolders(store, home).map((item) => item.tapes_dir), { session: session.id, limit: 500 }).tapes;
}

/** One session as a person inspects it (see the module comment). */
export function sessionDetail(store: Store, sessionId: string, options: { home: string }): SessionDetail {
  const detail = store.read(() => {
    const session = store.sessions.get(sessionId);
    if (!session) throw new EngramError('NOT_FOUND', `no session '${sessionId}'`);
    const shown = store.activity.shown(sessionId);
    const judgements = store.activity.judgements(sessionId);
    // Learned from it: named in source_sessions (searched with LIKE over the partial index of engrams that name any
    // session; the array then decides, so an id that merely contains this one is not taken) or in a source.
    const named = (
      store.db
        .prepare(`SELECT id, source_sessions FROM engrams INDEXED BY engrams_source_sessions WHERE source_sessions <> '[]' AND source_sessions LIKE ? ESCAPE '\\'`)
        .all(`%${JSON.stringify(sessionId).replace(/[\\%_]/g, (c) => `\\${c}`)}%`) as Array<{ id: number; source_sessions: string }>
    )
      .filter((row) => (JSON.parse(row.source_sessions) as string[]).includes(sessionId))
      .map((row) => row.id);
    const sourced = store.db.prepare('SELECT engram_id FROM engram_sources WHERE session_id = ?').pluck().all(sessionId) as number[];
    const extractedIds = [...new Set([...named, ...sourced])];
    const extracted = extractedIds.length
      ? (store.db
          .prepare(
            `SELECT e.id, e.text, e.status, e.category, e.learned_by, e.status_reason, e.created_at, s.tape_id, s.event_from, s.event_to
               FROM engrams e LEFT JOIN engram_sources s ON s.id = (SELECT max(id) FROM engram_sources WHERE engram_id = e.id AND (session_id = ? OR session_id IS NULL))
              WHERE e.id IN (SELECT value FROM json_each(?)) AND e.deleted_at IS NULL ORDER BY e.id`,
          )
          .all(sessionId, JSON.stringify(extractedIds)) as ExtractedEngram[])
      : [];
    const views = engramViews(store, [...shown.map((row) => row.engram_id), ...judgements.map((row) => row.engram_id)]);
    // One injection per hook call: the engrams it showed share its event, query and time.
    const injections = new Map<string, HookInjection>();
    for (const row of [...shown].sort((a, b) => a.at.localeCompare(b.at) || a.rank - b.rank)) {
      const key = `${row.at}\u0000${row.event}\u0000${row.query ?? ''}`;
      let injection = injections.get(key);
      if (!injection) injections.set(key, (injection = { event: row.event, query: row.query, at: row.at, answered_by: row.answered_by, context_epoch: row.context_epoch, engrams: [] }));
      injection.engrams.push({ ...refOf(views, row.engram_id), rank: row.rank, score: row.score, chars: row.chars, times: row.times });
    }
    return {
      session,
      audit: store.activity.evaluation(sessionId) ?? null,
      extraction: store.extractions.get(sessionId) ?? null,
      injections: [...injections.values()],
      judgements: judgements.map((row) => ({ engram: refOf(views, row.engram_id), source: row.source, score: row.score, evidence: row.evidence, judged_by: row.judged_by, at: row.at })),
      extracted,
    };
  });
  return {
    ...detail,
    prompts: sessionActivity(store, sessionId, 'prompts'),
    tools: sessionActivity(store, sessionId, 'tools'),
    tapes: sessionTapes(store, detail.session, options.home),
  };
}
