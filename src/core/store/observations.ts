import type { Statement } from 'better-sqlite3';
import type { Engram, Scope } from '../engram.js';
import type { Database } from './database.js';
import { statusClause, type StatusVisibility } from './engrams.js';
import type { Session, UserPrompt } from './sessions.js';

/** A session with the number of live engrams saved in it (the Go engram's `SessionSummary`). */
export interface SessionWithCount extends Session {
  observation_count: number;
}

/** Counts over the store as the Go engram reports them (`/stats`, `mem_stats`). */
export interface ObservationStats {
  total_sessions: number;
  /** Live (not soft-deleted) engrams. */
  total_observations: number;
  total_prompts: number;
  /** Projects of live engrams, most recently written first. */
  projects: string[];
}

/** The rows of each table that hold one project name (what a rename will change). */
export interface ProjectRows {
  engrams: number[];
  sessions: string[];
  prompts: number[];
}

/** Active engrams only: what reads show unless a caller asks for more. */
const ACTIVE: StatusVisibility = { statuses: ['active'] };

/** What renaming a project changed in each table. */
export interface ProjectRename {
  observations: number;
  sessions: number;
  prompts: number;
}

/**
 * SQL for the Go engram's views of the store (observations are engrams): recent rows, the dedup window, a timeline
 * around one engram, sessions with their counts, prompt search, stats, project renames. Callers own transactions.
 * Statements are prepared on first use, so opening an older store without migrating never fails here.
 */
export interface ObservationRepo {
  /** Live engrams with the same text hash, project, scope and kind created at or after `since` (ISO), newest first. */
  recentDuplicates(hash: string, project: string | null, scope: Scope, kind: string, since: string): Engram[];
  /** The first live engram of a project (any scope) with this text hash: passive capture's duplicate check. */
  liveByHashInProject(hash: string, project: string | null): Engram | undefined;
  /** Live engrams in the review states `visible` names (default: active), newest first, optionally of one project,
   * scope and kind. */
  recent(filter: { project?: string; scope?: Scope; kind?: string; limit: number; visible?: StatusVisibility }): Engram[];
  /** Up to `before` live engrams saved before `id` and `after` after it, in one session (or, for an engram saved in
   * none, in its project and scope), each list in chronological order, and how many the group holds; only engrams
   * in the review states `visible` names (default: active). */
  neighbours(focus: Engram, before: number, after: number, visible?: StatusVisibility): { before: Engram[]; after: Engram[]; total: number };
  /** Sessions, most recently active first (by their newest engram, else their start), with live engram counts. */
  recentSessions(project: string | undefined, limit: number): SessionWithCount[];
  recentPrompts(project: string | undefined, limit: number): UserPrompt[];
  /** Prompts matching an FTS5 query (already quoted by the caller), best first. */
  searchPrompts(ftsQuery: string, project: string | undefined, limit: number): UserPrompt[];
  stats(): ObservationStats;
  /** Every project name in engrams, sessions and prompts. */
  projectNames(): string[];
  /** The engrams (soft-deleted ones too), sessions and prompts of exactly this project name. */
  projectRows(project: string): ProjectRows;
  /** Moves every engram, session and prompt of project `from` to `to`. */
  renameProject(from: string, to: string): ProjectRename;
}

/** Builds the observation repository over a connection. */
export function createObservationRepo(db: Database, toEngram: (row: unknown) => Engram): ObservationRepo {
  const statements = new Map<string, Statement>();
  const prepared = (sql: string): Statement => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
  const engrams = (sql: string, ...params: unknown[]): Engram[] => prepared(sql).all(...params).map(toEngram);

  return {
    recentDuplicates: (hash, project, scope, kind, since) =>
      engrams(
        `SELECT * FROM engrams
          WHERE content_hash = ? AND project IS ? AND scope = ? AND kind = ? AND deleted_at IS NULL AND created_at >= ?
          ORDER BY created_at DESC, id DESC`,
        hash,
        project,
        scope,
        kind,
        since,
      ),
    liveByHashInProject: (hash, project) =>
      engrams('SELECT * FROM engrams WHERE content_hash = ? AND project IS ? AND deleted_at IS NULL ORDER BY id LIMIT 1', hash, project)[0],
    recent(filter) {
      const visible = statusClause(filter.visible ?? ACTIVE);
      const clauses = ['deleted_at IS NULL', visible.sql];
      const params: unknown[] = [...visible.params];
      if (filter.project !== undefined) {
        clauses.push('project = ?');
        params.push(filter.project);
      }
      if (filter.scope !== undefined) {
        clauses.push('scope = ?');
        params.push(filter.scope);
      }
      if (filter.kind !== undefined) {
        clauses.push('kind = ?');
        params.push(filter.kind);
      }
      return engrams(`SELECT * FROM engrams WHERE ${clauses.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ?`, ...params, filter.limit);
    },
    neighbours(focus, before, after, visibility = ACTIVE) {
      // One session's engrams when the focus has one; else the focus's project and scope.
      // The focus itself counts whatever its status (it was asked for by id).
      const visible = statusClause(visibility);
      const shown = { sql: `(${visible.sql} OR id = ?)`, params: [...visible.params, focus.id] };
      const group =
        focus.session_id != null
          ? { sql: `session_id = ? AND ${shown.sql}`, params: [focus.session_id, ...shown.params] }
          : { sql: `session_id IS NULL AND project IS ? AND scope = ? AND ${shown.sql}`, params: [focus.project, focus.scope, ...shown.params] };
      const live = `deleted_at IS NULL AND ${group.sql}`;
      const earlier = engrams(`SELECT * FROM engrams WHERE ${live} AND id < ? ORDER BY id DESC LIMIT ?`, ...group.params, focus.id, before);
      const later = engrams(`SELECT * FROM engrams WHERE ${live} AND id > ? ORDER BY id LIMIT ?`, ...group.params, focus.id, after);
      const total = Number(prepared(`SELECT count(*) FROM engrams WHERE ${live}`).pluck().get(...group.params));
      return { before: earlier.reverse(), after: later, total };
    },
    recentSessions(project, limit) {
      const where = project === undefined ? '' : 'WHERE s.project = ?';
      return prepared(
        `SELECT s.*, count(e.id) AS observation_count
           FROM sessions s LEFT JOIN engrams e ON e.session_id = s.id AND e.deleted_at IS NULL
           ${where}
          GROUP BY s.id
          ORDER BY max(coalesce(e.created_at, s.started_at)) DESC, s.started_at DESC
          LIMIT ?`,
      ).all(...(project === undefined ? [] : [project]), limit) as SessionWithCount[];
    },
    recentPrompts(project, limit) {
      const where = project === undefined ? '' : 'WHERE project = ?';
      return prepared(`SELECT * FROM user_prompts ${where} ORDER BY created_at DESC, id DESC LIMIT ?`).all(
        ...(project === undefined ? [] : [project]),
        limit,
      ) as UserPrompt[];
    },
    searchPrompts(ftsQuery, project, limit) {
      const where = project === undefined ? '' : 'AND p.project = ?';
      return prepared(
        `SELECT p.* FROM user_prompts_fts f JOIN user_prompts p ON p.id = f.rowid
          WHERE user_prompts_fts MATCH ? ${where} ORDER BY f.rank LIMIT ?`,
      ).all(ftsQuery, ...(project === undefined ? [] : [project]), limit) as UserPrompt[];
    },
    stats() {
      const counts = prepared(
        `SELECT (SELECT count(*) FROM sessions) AS total_sessions,
                (SELECT count(*) FROM engrams WHERE deleted_at IS NULL) AS total_observations,
                (SELECT count(*) FROM user_prompts) AS total_prompts`,
      ).get() as Omit<ObservationStats, 'projects'>;
      const projects = prepared(
        `SELECT project FROM engrams WHERE project IS NOT NULL AND deleted_at IS NULL
          GROUP BY project ORDER BY max(created_at) DESC, project`,
      )
        .pluck()
        .all() as string[];
      return { ...counts, projects };
    },
    projectNames: () =>
      prepared(
        `SELECT project FROM engrams WHERE project IS NOT NULL
         UNION SELECT project FROM sessions WHERE project IS NOT NULL
         UNION SELECT project FROM user_prompts WHERE project IS NOT NULL`,
      )
        .pluck()
        .all() as string[],
    projectRows: (project) => ({
      engrams: prepared('SELECT id FROM engrams WHERE project = ? ORDER BY id').pluck().all(project) as number[],
      sessions: prepared('SELECT id FROM sessions WHERE project = ? ORDER BY id').pluck().all(project) as string[],
      prompts: prepared('SELECT id FROM user_prompts WHERE project = ? ORDER BY id').pluck().all(project) as number[],
    }),
    renameProject(from, to) {
      return {
        observations: prepared('UPDATE engrams SET project = ? WHERE project = ?').run(to, from).changes,
        sessions: prepared('UPDATE sessions SET project = ? WHERE project = ?').run(to, from).changes,
        prompts: prepared('UPDATE user_prompts SET project = ? WHERE project = ?').run(to, from).changes,
      };
    },
  };
}
