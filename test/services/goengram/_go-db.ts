/**
 * A Go engram database built from the schema ../shared/seeds/001 gives (§3: tables, FTS5 tables and triggers,
 * indexes), filled the way the Go engram writes rows: SQLite `datetime('now')` times, `obs-`/`prompt-` sync ids,
 * counts from 1, soft deletes in `deleted_at`.
 */
import { join } from 'node:path';
import { loadSqlite } from '../../../src/core/index.js';

const SCHEMA = `
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    project    TEXT NOT NULL,
    directory  TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (datetime('now')),
    ended_at   TEXT,
    summary    TEXT
);
CREATE TABLE observations (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    sync_id         TEXT,
    session_id      TEXT    NOT NULL REFERENCES sessions(id),
    type            TEXT    NOT NULL,
    title           TEXT    NOT NULL,
    content         TEXT    NOT NULL,
    tool_name       TEXT,
    project         TEXT,
    scope           TEXT    NOT NULL DEFAULT 'project',
    topic_key       TEXT,
    normalized_hash TEXT,
    revision_count  INTEGER NOT NULL DEFAULT 1,
    duplicate_count INTEGER NOT NULL DEFAULT 1,
    last_seen_at    TEXT,
    created_at      TEXT    NOT NULL DEFAULT (datetime('now')),
    updated_at      TEXT    NOT NULL DEFAULT (datetime('now')),
    deleted_at      TEXT
);
CREATE TABLE user_prompts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    sync_id    TEXT,
    session_id TEXT    NOT NULL REFERENCES sessions(id),
    content    TEXT    NOT NULL,
    project    TEXT,
    created_at TEXT    NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE sync_chunks (chunk_id TEXT PRIMARY KEY, imported_at TEXT NOT NULL DEFAULT (datetime('now')));
CREATE VIRTUAL TABLE observations_fts USING fts5(title, content, tool_name, type, project, topic_key, content='observations', content_rowid='id');
CREATE VIRTUAL TABLE prompts_fts USING fts5(content, project, content='user_prompts', content_rowid='id');
CREATE TRIGGER obs_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts(rowid, title, content, tool_name, type, project, topic_key)
    VALUES (new.id, new.title, new.content, new.tool_name, new.type, new.project, new.topic_key);
END;
CREATE TRIGGER obs_fts_delete AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, content, tool_name, type, project, topic_key)
    VALUES ('delete', old.id, old.title, old.content, old.tool_name, old.type, old.project, old.topic_key);
END;
CREATE TRIGGER obs_fts_update AFTER UPDATE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, content, tool_name, type, project, topic_key)
    VALUES ('delete', old.id, old.title, old.content, old.tool_name, old.type, old.project, old.topic_key);
    INSERT INTO observations_fts(rowid, title, content, tool_name, type, project, topic_key)
    VALUES (new.id, new.title, new.content, new.tool_name, new.type, new.project, new.topic_key);
END;
CREATE TRIGGER prompt_fts_insert AFTER INSERT ON user_prompts BEGIN
    INSERT INTO prompts_fts(rowid, content, project) VALUES (new.id, new.content, new.project);
END;
CREATE INDEX idx_obs_session  ON observations(session_id);
CREATE INDEX idx_obs_topic    ON observations(topic_key, project, scope, updated_at DESC);
CREATE INDEX idx_obs_deleted  ON observations(deleted_at);
CREATE INDEX idx_prompts_session ON user_prompts(session_id);
`;

/** Rows of a Go database, column → value. */
export type GoRows = { sessions: Array<Record<string, unknown>>; observations: Array<Record<string, unknown>>; prompts: Array<Record<string, unknown>> };

/** The rows a test Go database holds (ids chosen to leave gaps, as deletes do). */
export const GO_ROWS = {
  sessions: [
    { id: 'sess-1', project: 'shop', directory: '/home/ana/shop', started_at: '2026-03-01 09:00:00', ended_at: '2026-03-01 10:00:00', summary: '## Goal\nFix checkout' },
    { id: 'sess-2', project: 'shop', directory: '/home/ana/shop', started_at: '2026-03-02 09:00:00', ended_at: null, summary: null },
    { id: 'sess-empty', project: 'shop', directory: '/home/ana/shop', started_at: '2026-03-03 09:00:00', ended_at: null, summary: null },
  ],
  observations: [
    { id: 3, sync_id: 'obs-00000000000000000000000000000003', session_id: 'sess-1', type: 'bugfix', title: 'Checkout rounding', content: 'Totals are rounded per line, not per order: use roundLine() in cart.ts.', tool_name: null, project: 'shop', scope: 'project', topic_key: 'bug/checkout-rounding', revision_count: 2, duplicate_count: 1, created_at: '2026-03-01 09:10:00', updated_at: '2026-03-01 09:30:00', deleted_at: null },
    { id: 7, sync_id: 'obs-00000000000000000000000000000007', session_id: 'sess-1', type: 'decision', title: 'Money as integer cents', content: 'All amounts are integer cents; never floats.', tool_name: 'Edit', project: 'shop', scope: 'project', topic_key: null, revision_count: 1, duplicate_count: 3, created_at: '2026-03-01 09:20:00', updated_at: '2026-03-01 09:20:00', deleted_at: null },
    { id: 9, sync_id: 'obs-00000000000000000000000000000009', session_id: 'sess-2', type: 'discovery', title: 'Old payment flow', content: 'The legacy payment flow lives in pay_v1/ and is unused.', tool_name: null, project: 'shop', scope: 'project', topic_key: null, revision_count: 1, duplicate_count: 1, created_at: '2026-03-02 09:05:00', updated_at: '2026-03-02 11:00:00', deleted_at: '2026-03-02 11:00:00' },
    { id: 12, sync_id: null, session_id: 'sess-2', type: 'preference', title: 'Editor', content: 'I prefer tabs in my scratch notes.', tool_name: null, project: 'shop', scope: 'personal', topic_key: null, revision_count: 1, duplicate_count: 1, created_at: '2026-03-02 09:40:00', updated_at: '2026-03-02 09:40:00', deleted_at: null },
  ],
  prompts: [
    { id: 2, sync_id: 'prompt-00000000000000000000000000000002', session_id: 'sess-1', content: 'why is the checkout total off by a cent?', project: 'shop', created_at: '2026-03-01 09:01:00' },
    { id: 5, sync_id: 'prompt-00000000000000000000000000000005', session_id: 'sess-2', content: 'remove the old payment code', project: 'shop', created_at: '2026-03-02 09:01:00' },
  ],
};

/** Writes a Go engram database with {@link GO_ROWS} into `dir` and returns its path. */
export function goDatabase(dir: string, name = 'engram.db', rows: GoRows = GO_ROWS): string {
  const path = join(dir, name);
  const Database = loadSqlite();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(SCHEMA);
  const session = db.prepare('INSERT INTO sessions (id, project, directory, started_at, ended_at, summary) VALUES (@id, @project, @directory, @started_at, @ended_at, @summary)');
  const obs = db.prepare(`INSERT INTO observations (id, sync_id, session_id, type, title, content, tool_name, project, scope, topic_key, revision_count, duplicate_count, created_at, updated_at, deleted_at)
    VALUES (@id, @sync_id, @session_id, @type, @title, @content, @tool_name, @project, @scope, @topic_key, @revision_count, @duplicate_count, @created_at, @updated_at, @deleted_at)`);
  const prompt = db.prepare('INSERT INTO user_prompts (id, sync_id, session_id, content, project, created_at) VALUES (@id, @sync_id, @session_id, @content, @project, @created_at)');
  db.transaction(() => {
    rows.sessions.forEach((row) => session.run(row));
    rows.observations.forEach((row) => obs.run(row));
    rows.prompts.forEach((row) => prompt.run(row));
  })();
  db.close();
  return path;
}
