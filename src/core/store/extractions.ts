import { sanitizeText } from '../redact.js';
import type { Database } from './database.js';

/** Where extraction stands for one session (`session_extractions`). */
export interface ExtractionState {
  session_id: string;
  transcript_path: string | null;
  status: 'running' | 'completed' | 'failed' | 'skipped';
  /** Failed or interrupted tries since the last success; reset when a run completes. */
  attempts: number;
  /** Conversation lines already read: the next run starts after them. */
  lines_done: number;
  /** Totals over every run for this session. */
  created: number;
  merged: number;
  rejected: number;
  error: string | null;
  updated_at: string;
}

/** SQL access to extraction state. Callers own transactions. */
export interface ExtractionRepo {
  get(sessionId: string): ExtractionState | undefined;
  /**
   * Marks a run as started: `claimed`, or `gave-up` when `maxAttempts` tries in a row failed, or `busy` when another
   * run started less than `staleBefore` ago has not finished.
   */
  claim(sessionId: string, transcriptPath: string | null, at: string, maxAttempts: number, staleBefore: string): 'claimed' | 'gave-up' | 'busy';
  /** Ends a run (or, with status `running`, records progress): counts added, `lines_done` moved forward (never back). */
  finish(
    sessionId: string,
    outcome: { status: ExtractionState['status']; lines_done: number; created: number; merged: number; rejected: number; error: string | null },
    at: string,
  ): void;
  /** Records that a run read nothing (no LLM, too little new conversation), unless another run is in progress. */
  skip(sessionId: string, transcriptPath: string | null, reason: string, at: string): void;
  counts(): Record<ExtractionState['status'], number>;
}

/** Builds the extraction repository over a connection. */
export function createExtractionRepo(db: Database): ExtractionRepo {
  const getStmt = db.prepare<[string], ExtractionState>('SELECT * FROM session_extractions WHERE session_id = ?');
  return {
    get: (sessionId) => getStmt.get(sessionId),
    claim(sessionId, transcriptPath, at, maxAttempts, staleBefore) {
      const state = getStmt.get(sessionId);
      if (state?.status === 'running' && state.updated_at > staleBefore) return 'busy';
      if (state && state.status === 'failed' && state.attempts >= maxAttempts) return 'gave-up';
      db.prepare(
        `INSERT INTO session_extractions (session_id, transcript_path, status, attempts, updated_at) VALUES (?, ?, 'running', 1, ?)
         ON CONFLICT (session_id) DO UPDATE SET status = 'running', attempts = attempts + 1, updated_at = excluded.updated_at,
           transcript_path = coalesce(excluded.transcript_path, transcript_path)`,
      ).run(sessionId, transcriptPath, at);
      return 'claimed';
    },
    finish(sessionId, outcome, at) {
      db.prepare(
        `UPDATE session_extractions SET status = ?, lines_done = max(lines_done, ?), created = created + ?, merged = merged + ?,
           rejected = rejected + ?, error = ?, updated_at = ?,
           attempts = CASE WHEN ? = 'failed' THEN attempts ELSE 0 END
         WHERE session_id = ?`,
      ).run(
        outcome.status,
        outcome.lines_done,
        outcome.created,
        outcome.merged,
        outcome.rejected,
        outcome.error === null ? null : sanitizeText(outcome.error).text.slice(0, 2_000),
        at,
        outcome.status,
        sessionId,
      );
    },
    skip(sessionId, transcriptPath, reason, at) {
      db.prepare(
        `INSERT INTO session_extractions (session_id, transcript_path, status, error, updated_at) VALUES (?, ?, 'skipped', ?, ?)
         ON CONFLICT (session_id) DO UPDATE SET status = 'skipped', error = excluded.error, updated_at = excluded.updated_at,
           transcript_path = coalesce(excluded.transcript_path, transcript_path)
         WHERE status <> 'running'`,
      ).run(sessionId, transcriptPath, reason, at);
    },
    counts() {
      const counts: Record<ExtractionState['status'], number> = { running: 0, completed: 0, failed: 0, skipped: 0 };
      const rows = db.prepare('SELECT status, count(*) AS n FROM session_extractions GROUP BY status').all() as Array<{ status: ExtractionState['status']; n: number }>;
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    },
  };
}
