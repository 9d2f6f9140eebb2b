import type { Database } from './database.js';

/** Kinds of background work. Evaluation and tape recording join `session-end` in later releases. */
export type JobKind = 'session-end';

/** One unit of background work. */
export interface Job {
  id: number;
  kind: JobKind;
  session_id: string | null;
  payload: Record<string, unknown>;
  status: 'pending' | 'running' | 'done' | 'failed';
  attempts: number;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** SQL access to the job queue. Callers own transactions (claim must run inside `store.write`). */
export interface JobRepo {
  /** Queues a job; the same (kind, session) queued again is reset to pending (a resumed session ends again). */
  enqueue(kind: JobKind, sessionId: string | null, payload: Record<string, unknown>, at: string): void;
  /** Takes the oldest pending job (or a running one abandoned before `staleBefore`) and marks it running. */
  claim(at: string, staleBefore: string): Job | undefined;
  finish(id: number, at: string, error?: string): void;
  counts(): Record<Job['status'], number>;
  get(kind: JobKind, sessionId: string): Job | undefined;
  /** Sessions never ended (no SessionEnd came) and quiet since before `quietBefore`, that have no job of this kind. */
  abandonedSessions(kind: JobKind, quietBefore: string, limit: number): Array<{ id: string; transcript_path: string | null; agent: string }>;
}

type JobRow = Omit<Job, 'payload'> & { payload: string };
const fromRow = (row: JobRow): Job => ({ ...row, payload: JSON.parse(row.payload) as Record<string, unknown> });

/** Builds the job repository over a connection. */
export function createJobRepo(db: Database): JobRepo {
  const enqueueStmt = db.prepare(`
    INSERT INTO jobs (kind, session_id, payload, created_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (kind, session_id) DO UPDATE SET
      payload = excluded.payload, status = 'pending', error = NULL, created_at = excluded.created_at,
      started_at = NULL, finished_at = NULL`);
  const nextStmt = db.prepare<[string], JobRow>(
    `SELECT * FROM jobs WHERE status = 'pending' OR (status = 'running' AND started_at < ?) ORDER BY id LIMIT 1`,
  );
  const startStmt = db.prepare("UPDATE jobs SET status = 'running', started_at = ?, attempts = attempts + 1 WHERE id = ?");
  const finishStmt = db.prepare('UPDATE jobs SET status = ?, error = ?, finished_at = ? WHERE id = ?');
  return {
    enqueue(kind, sessionId, payload, at) {
      enqueueStmt.run(kind, sessionId, JSON.stringify(payload), at);
    },
    claim(at, staleBefore) {
      const row = nextStmt.get(staleBefore);
      if (!row) return undefined;
      startStmt.run(at, row.id);
      return fromRow({ ...row, status: 'running', started_at: at, attempts: row.attempts + 1 });
    },
    finish(id, at, error) {
      finishStmt.run(error === undefined ? 'done' : 'failed', error ?? null, at, id);
    },
    counts() {
      const counts = { pending: 0, running: 0, done: 0, failed: 0 };
      for (const row of db.prepare<[], { status: Job['status']; n: number }>('SELECT status, count(*) AS n FROM jobs GROUP BY status').all()) {
        counts[row.status] = row.n;
      }
      return counts;
    },
    abandonedSessions(kind, quietBefore, limit) {
      return db
        .prepare<[string, string, number], { id: string; transcript_path: string | null; agent: string }>(
          `SELECT id, transcript_path, agent FROM sessions s
            WHERE ended_at IS NULL AND last_activity_at < ?
              AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.kind = ? AND jobs.session_id = s.id)
            ORDER BY last_activity_at LIMIT ?`,
        )
        .all(quietBefore, kind, limit);
    },
    get(kind, sessionId) {
      const row = db.prepare<[string, string], JobRow>('SELECT * FROM jobs WHERE kind = ? AND session_id = ?').get(kind, sessionId);
      return row ? fromRow(row) : undefined;
    },
  };
}
