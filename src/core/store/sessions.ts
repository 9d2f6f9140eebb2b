import { sanitizeText } from '../redact.js';
import type { Database } from './database.js';

/**
 * A prompt's uid: a random (version 4) UUID that SQLite makes in the INSERT itself, from its own CSPRNG (seeded by
 * the OS) — node:crypto's randomUUID cost a hook that records a prompt ~5 ms to load (with the streams it pulls).
 * Same form: 8-4-4-4-12 lowercase hex, version 4, variant 10xx.
 */
export const UUID_V4_SQL =
  "lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || " +
  "substr('89ab', 1 + (random() & 3), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))";

/** Which agent ran a session. */
export type Agent = 'claude' | 'codex' | 'unknown';

/** One agent session as recorded by the hooks. */
export interface Session {
  id: string;
  agent: Agent;
  project: string | null;
  cwd: string | null;
  repo_root: string | null;
  transcript_path: string | null;
  model: string | null;
  start_source: string | null;
  turns: number;
  summary: string | null;
  started_at: string;
  last_activity_at: string;
  ended_at: string | null;
  end_reason: string | null;
}

/** What a hook knows when it first sees a session. */
export interface SessionSighting {
  id: string;
  agent: Agent;
  project: string | null;
  cwd: string | null;
  repo_root: string | null;
  transcript_path: string | null;
  model: string | null;
  start_source: string | null;
  at: string;
}

/** One user prompt, already redacted by the repository. */
export interface UserPrompt {
  id: number;
  uid: string;
  session_id: string;
  prompt_key: string | null;
  content: string;
  project: string | null;
  created_at: string;
}

/** SQL access to sessions and user prompts. Callers own transactions. */
export interface SessionRepo {
  /**
   * Records that a session exists. The first sighting creates the row; later ones only fill fields that are still
   * empty and move `last_activity_at` forward, so a resumed session keeps its original start.
   */
  upsert(sighting: SessionSighting): Session;
  get(id: string): Session | undefined;
  /**
   * Counts one finished turn (a Stop event). With the agent's `key` for the turn, a second Stop of the same turn counts
   * nothing and returns false.
   */
  recordTurn(id: string, at: string, key?: string | null): boolean;
  /** Marks the session ended; a later SessionEnd (resume, then end again) overwrites the reason and time. */
  end(id: string, reason: string | null, at: string): void;
  /**
   * Creates a session that no hook saw (a Go engram client's `POST /sessions`, `mem_save`'s default session) unless
   * it exists; an existing session is left as it is. Returns it and whether it was created.
   */
  ensure(id: string, fields: { agent?: Agent; project: string | null; cwd: string | null; at: string }): { session: Session; created: boolean };
  /** Sets (or, with null, clears) a session's summary. */
  setSummary(id: string, summary: string | null): void;
  /** Stores a prompt and returns it (no dedup: the Go engram's `POST /prompts`). */
  addPrompt(prompt: { session_id: string; content: string; project: string | null; at: string }): UserPrompt;
  /**
   * Stores a prompt brought from elsewhere (a Go engram import, a teammate's chunk) with its own uid and time, and its
   * id when that id is free here. Returns the stored prompt, or undefined when the uid is already stored.
   */
  insertImported(prompt: { id?: number; uid: string; session_id: string; content: string; project: string | null; created_at: string }): UserPrompt | undefined;
  getByUid(uid: string): UserPrompt | undefined;
  /** Every session (of one project when given), oldest first: exports. */
  all(project?: string): Session[];
  /** Every prompt (of one project when given), in id order: exports. */
  allPrompts(project?: string): UserPrompt[];
  /** Stores a prompt; the same (session, prompt_key) twice is stored once. Returns false for a repeat. */
  insertPrompt(prompt: { session_id: string; prompt_key: string | null; content: string; project: string | null; at: string }): boolean;
  prompts(sessionId: string): UserPrompt[];
  /** Sessions with a transcript active at or after `since` (ISO), oldest first. */
  activeSince(since: string, limit: number): Session[];
  counts(): { sessions: number; open_sessions: number; prompts: number; first_started_at: string | null; last_started_at: string | null };
}

/** Builds the session repository over a connection. */
export function createSessionRepo(db: Database): SessionRepo {
  const getStmt = db.prepare<[string], Session>('SELECT * FROM sessions WHERE id = ?');
  const upsertStmt = db.prepare(`
    INSERT INTO sessions (id, agent, project, cwd, repo_root, transcript_path, model, start_source, started_at, last_activity_at)
    VALUES (@id, @agent, @project, @cwd, @repo_root, @transcript_path, @model, @start_source, @at, @at)
    ON CONFLICT (id) DO UPDATE SET
      agent            = CASE WHEN sessions.agent = 'unknown' THEN excluded.agent ELSE sessions.agent END,
      project          = coalesce(sessions.project, excluded.project),
      cwd              = coalesce(sessions.cwd, excluded.cwd),
      repo_root        = coalesce(sessions.repo_root, excluded.repo_root),
      transcript_path  = coalesce(sessions.transcript_path, excluded.transcript_path),
      model            = coalesce(excluded.model, sessions.model),
      start_source     = coalesce(sessions.start_source, excluded.start_source),
      last_activity_at = max(sessions.last_activity_at, excluded.last_activity_at)`);
  const turnStmt = db.prepare(
    'UPDATE sessions SET turns = turns + 1, last_activity_at = max(last_activity_at, ?) WHERE id = ?',
  );
  const turnKeyStmt = db.prepare('INSERT INTO session_turns (session_id, turn_key) VALUES (?, ?) ON CONFLICT DO NOTHING');
  const endStmt = db.prepare(
    'UPDATE sessions SET ended_at = ?, end_reason = ?, last_activity_at = max(last_activity_at, ?) WHERE id = ?',
  );
  const promptStmt = db.prepare(`
    INSERT INTO user_prompts (uid, session_id, prompt_key, content, project, created_at)
    VALUES (${UUID_V4_SQL}, ?, ?, ?, ?, ?)
    ON CONFLICT (session_id, prompt_key) DO NOTHING`);

  const ensureStmt = db.prepare(`
    INSERT INTO sessions (id, agent, project, cwd, started_at, last_activity_at)
    VALUES (@id, @agent, @project, @cwd, @at, @at)
    ON CONFLICT (id) DO NOTHING`);
  const clean = (value: string | null): string | null => (value === null ? null : sanitizeText(value).text);

  return {
    ensure(id, fields) {
      const info = ensureStmt.run({ id, agent: fields.agent ?? 'unknown', project: clean(fields.project), cwd: clean(fields.cwd), at: fields.at });
      return { session: getStmt.get(id) as Session, created: info.changes > 0 };
    },
    setSummary(id, summary) {
      db.prepare('UPDATE sessions SET summary = ? WHERE id = ?').run(clean(summary), id);
    },
    addPrompt(prompt) {
      const info = db
        .prepare(`INSERT INTO user_prompts (uid, session_id, prompt_key, content, project, created_at) VALUES (${UUID_V4_SQL}, ?, NULL, ?, ?, ?)`)
        .run(prompt.session_id, sanitizeText(prompt.content).text, clean(prompt.project), prompt.at);
      return db.prepare<[number], UserPrompt>('SELECT * FROM user_prompts WHERE id = ?').get(Number(info.lastInsertRowid)) as UserPrompt;
    },
    insertImported(prompt) {
      if (db.prepare('SELECT 1 FROM user_prompts WHERE uid = ?').get(prompt.uid)) return undefined;
      const free = prompt.id !== undefined && !db.prepare('SELECT 1 FROM user_prompts WHERE id = ?').get(prompt.id);
      const info = db
        .prepare('INSERT INTO user_prompts (id, uid, session_id, prompt_key, content, project, created_at) VALUES (?, ?, ?, NULL, ?, ?, ?)')
        .run(free ? prompt.id : null, prompt.uid, prompt.session_id, sanitizeText(prompt.content).text, clean(prompt.project), prompt.created_at);
      return db.prepare<[number], UserPrompt>('SELECT * FROM user_prompts WHERE id = ?').get(Number(info.lastInsertRowid));
    },
    all: (project) =>
      project === undefined
        ? db.prepare<[], Session>('SELECT * FROM sessions ORDER BY started_at, id').all()
        : db.prepare<[string], Session>('SELECT * FROM sessions WHERE project = ? ORDER BY started_at, id').all(project),
    allPrompts: (project) =>
      project === undefined
        ? db.prepare<[], UserPrompt>('SELECT * FROM user_prompts ORDER BY id').all()
        : db.prepare<[string], UserPrompt>('SELECT * FROM user_prompts WHERE project = ? ORDER BY id').all(project),
    getByUid: (uid) => db.prepare<[string], UserPrompt>('SELECT * FROM user_prompts WHERE uid = ?').get(uid),
    upsert(sighting) {
      // Paths and model names come from hook payloads: sanitised like everything else that is stored.
      const clean = (value: string | null): string | null => (value === null ? null : sanitizeText(value).text);
      upsertStmt.run({
        ...sighting,
        project: clean(sighting.project),
        cwd: clean(sighting.cwd),
        repo_root: clean(sighting.repo_root),
        transcript_path: clean(sighting.transcript_path),
        model: clean(sighting.model),
        start_source: clean(sighting.start_source),
      });
      return getStmt.get(sighting.id) as Session;
    },
    get: (id) => getStmt.get(id),
    recordTurn(id, at, key = null) {
      if (key !== null && turnKeyStmt.run(id, key).changes === 0) return false;
      turnStmt.run(at, id);
      return true;
    },
    end(id, reason, at) {
      endStmt.run(at, reason === null ? null : sanitizeText(reason).text, at, id);
    },
    insertPrompt(prompt) {
      const content = sanitizeText(prompt.content).text;
      const project = prompt.project === null ? null : sanitizeText(prompt.project).text;
      const info = promptStmt.run(prompt.session_id, prompt.prompt_key, content, project, prompt.at);
      return info.changes > 0;
    },
    prompts: (sessionId) =>
      db.prepare<[string], UserPrompt>('SELECT * FROM user_prompts WHERE session_id = ? ORDER BY id').all(sessionId),
    activeSince: (since, limit) =>
      db
        .prepare<[string, number], Session>(
          'SELECT * FROM sessions WHERE transcript_path IS NOT NULL AND last_activity_at >= ? ORDER BY last_activity_at, id LIMIT ?',
        )
        .all(since, limit),
    counts() {
      return db
        .prepare(
          `SELECT (SELECT count(*) FROM sessions) AS sessions,
                  (SELECT count(*) FROM sessions WHERE ended_at IS NULL) AS open_sessions,
                  (SELECT count(*) FROM user_prompts) AS prompts,
                  (SELECT min(started_at) FROM sessions) AS first_started_at,
                  (SELECT max(started_at) FROM sessions) AS last_started_at`,
        )
        .get() as { sessions: number; open_sessions: number; prompts: number; first_started_at: string | null; last_started_at: string | null };
    },
  };
}
