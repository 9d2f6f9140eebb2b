import { sanitizeText } from '../redact.js';
import type { Database } from './database.js';

/** One engram shown to an agent by a hook. */
/** What {@link ActivityRepo.judgedByList} counts. */
export interface JudgedByList {
  vector: { useful: number; judged: number };
  bm25: { useful: number; judged: number };
}

export interface ShownRecord {
  session_id: string;
  engram_id: number;
  /** The hook event that showed it (`SessionStart`, `UserPromptSubmit`, …). */
  event: string;
  /** The query it answered (redacted, capped), or null for SessionStart's selection. */
  query: string | null;
  score: number | null;
  /** 1-based position in what was injected. */
  rank: number;
  /** Characters it took in the injected block. */
  chars: number;
  /** `server` or `in-process`: which path answered the hook. */
  answered_by: string;
  at: string;
  /** Where the BM25 and vector lists ranked it (1-based), or null (not in the list, or the list did not run). */
  bm25_rank?: number | null;
  vector_rank?: number | null;
}

/** One tool call a hook saw. */
export interface ToolEventRecord {
  session_id: string;
  tool_use_id: string;
  tool_name: string;
  /** The file, path, pattern or command the tool worked on (redacted, capped). */
  target: string | null;
  ok: boolean;
  error: string | null;
  duration_ms: number | null;
  at: string;
}

/** What the evaluator needs to know about a session's environment. */
export interface SessionAuditRecord {
  session_id: string;
  env_tags: readonly string[];
  repo: string | null;
  transcript_path: string | null;
  at: string;
}

/** One judgement of an engram in a session (the evaluator's; score null when no LLM judged). */
export interface JudgementRecord {
  session_id: string | null;
  engram_id: number;
  source: 'evaluation' | 'feedback';
  score: number | null;
  evidence: string | null;
  /** The model or provider that judged, or `none`. */
  judged_by: string;
  at: string;
}

/** A session's evaluation state (`session_audit`). */
export interface EvaluationState {
  session_id: string;
  env_tags: string[];
  repo: string | null;
  transcript_path: string | null;
  eval_status: 'pending' | 'running' | 'completed' | 'failed' | 'skipped';
  eval_attempts: number;
  eval_error: string | null;
  evaluated_at: string | null;
}

/** SQL access to what hooks did in a session: what they showed, which tools ran, the session's environment. */
export interface ActivityRepo {
  /** The session's context epoch (moves on compaction), 0 for a session never seen. */
  contextEpoch(sessionId: string): number;
  /** Starts a new context epoch (after compaction) and returns it. */
  nextContextEpoch(sessionId: string): number;
  /** Engram ids already shown in the session's current context epoch. */
  shownInContext(sessionId: string): Set<number>;
  /** Characters injected in the session's current context epoch (for the per-session cap). */
  injectedChars(sessionId: string): number;
  /** Records shown engrams in the session's current epoch; showing one again (after compaction) counts it. */
  recordShown(rows: readonly ShownRecord[]): void;
  /**
   * Judged injections by the list that led to them: `vector` when the vector list ranked the memory within its top
   * `lead` and BM25 did not, `bm25` the other way round (memories both lists ranked high say nothing about either).
   * `useful` counts judgements with a positive score; judgements without a score (no LLM could judge) are left out.
   */
  judgedByList(lead: number): JudgedByList;
  shown(sessionId: string): Array<ShownRecord & { context_epoch: number; times: number }>;
  /** Records a tool call once per (session, tool_use_id); returns false for a repeat. */
  recordToolEvent(event: ToolEventRecord): boolean;
  toolEvents(sessionId: string): ToolEventRecord[];
  /** Creates or refreshes the session's audit row; tags accumulate (a session can move between folders). */
  audit(record: SessionAuditRecord): void;
  evaluation(sessionId: string): EvaluationState | undefined;
  /**
   * Marks the session's evaluation running and counts the attempt, unless it is finished (`done`) or has used up
   * `maxAttempts` (`gave-up`). Run inside a write transaction.
   */
  claimEvaluation(sessionId: string, at: string, maxAttempts: number): 'claimed' | 'done' | 'gave-up' | 'missing';
  /** Ends an evaluation attempt; `refundAttempt` gives the attempt back (a spent daily LLM budget is not the session's fault). */
  finishEvaluation(sessionId: string, status: 'completed' | 'failed' | 'skipped', error: string | null, at: string, refundAttempt?: boolean): void;
  /** Records a judgement once per (session, engram, source): its row id, or null when it was already there. */
  recordJudgement(judgement: JudgementRecord): number | null;
  judgements(sessionId: string): JudgementRecord[];
  evaluationCounts(): Record<EvaluationState['eval_status'], number>;
  /** Sessions whose evaluation is still to run (pending, or failed with attempts left), oldest first. */
  pendingEvaluations(maxAttempts: number, limit: number): string[];
  /**
   * Sessions whose evaluation failed and has attempts left (or was left `running` by a process that died before
   * `staleBefore`), oldest failure first: what a drain retries. Pending ones are their own session-end job's.
   */
  retryableEvaluations(maxAttempts: number, staleBefore: string, limit: number): string[];
  /** Failed evaluations with attempts left, those out of attempts, and how many of all failed on an unusable answer. */
  evaluationRetries(maxAttempts: number): { retrying: number; gave_up: number; unusable_answer: number };
}

/** How an evaluation that got an unusable answer says so in `eval_error` (counted by {@link ActivityRepo.evaluationRetries}). */
export const UNUSABLE_ANSWER = 'unusable answer';

const QUERY_CHARS = 1_000;
const TARGET_CHARS = 500;
const clean = (value: string | null, max: number): string | null =>
  value === null ? null : sanitizeText(value.length > max * 4 ? value.slice(0, max * 4) : value).text.slice(0, max);

/** Builds the activity repository over a connection. Callers own transactions. */
export function createActivityRepo(db: Database): ActivityRepo {
  const epochStmt = db.prepare<[string], { context_epoch: number }>('SELECT context_epoch FROM sessions WHERE id = ?');
  const bumpStmt = db.prepare('UPDATE sessions SET context_epoch = context_epoch + 1 WHERE id = ?');
  const shownIds = db.prepare<[string], { engram_id: number }>(
    `SELECT s.engram_id FROM session_shown_engrams s JOIN sessions ON sessions.id = s.session_id
      WHERE s.session_id = ? AND s.context_epoch = sessions.context_epoch`,
  );
  const charsStmt = db.prepare<[string], { chars: number | null }>(
    `SELECT sum(s.chars) AS chars FROM session_shown_engrams s JOIN sessions ON sessions.id = s.session_id
      WHERE s.session_id = ? AND s.context_epoch = sessions.context_epoch`,
  );
  const shownStmt = db.prepare(`
    INSERT INTO session_shown_engrams
      (session_id, engram_id, event, query, score, rank, chars, answered_by, shown_at, context_epoch, times, bm25_rank, vector_rank)
    VALUES (@session_id, @engram_id, @event, @query, @score, @rank, @chars, @answered_by, @at,
            coalesce((SELECT context_epoch FROM sessions WHERE id = @session_id), 0), 1, @bm25_rank, @vector_rank)
    ON CONFLICT (session_id, engram_id) DO UPDATE SET
      event = excluded.event, query = excluded.query, score = excluded.score, rank = excluded.rank,
      chars = excluded.chars, answered_by = excluded.answered_by, shown_at = excluded.shown_at,
      context_epoch = excluded.context_epoch, times = session_shown_engrams.times + 1,
      bm25_rank = excluded.bm25_rank, vector_rank = excluded.vector_rank`);
  const toolStmt = db.prepare(`
    INSERT INTO tool_events (session_id, tool_use_id, tool_name, target, ok, error, duration_ms, at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, tool_use_id) DO NOTHING`);
  const auditGet = db.prepare<[string], { env_tags: string }>('SELECT env_tags FROM session_audit WHERE session_id = ?');
  const auditStmt = db.prepare(`
    INSERT INTO session_audit (session_id, env_tags, repo, transcript_path, created_at, updated_at)
    VALUES (@session_id, @env_tags, @repo, @transcript_path, @at, @at)
    ON CONFLICT (session_id) DO UPDATE SET
      env_tags = excluded.env_tags,
      repo = coalesce(session_audit.repo, excluded.repo),
      transcript_path = coalesce(session_audit.transcript_path, excluded.transcript_path),
      updated_at = excluded.updated_at`);

  const evaluationStmt = db.prepare<[string], Omit<EvaluationState, 'env_tags'> & { env_tags: string }>(
    `SELECT session_id, env_tags, repo, transcript_path, eval_status, eval_attempts, eval_error, evaluated_at
       FROM session_audit WHERE session_id = ?`,
  );
  const judgementStmt = db.prepare(`
    INSERT INTO engram_judgements (session_id, engram_id, source, score, evidence, judged_by, at)
    VALUES (@session_id, @engram_id, @source, @score, @evidence, @judged_by, @at)
    ON CONFLICT (session_id, engram_id, source) DO NOTHING`);
  const evaluation = (sessionId: string): EvaluationState | undefined => {
    const row = evaluationStmt.get(sessionId);
    return row ? { ...row, env_tags: JSON.parse(row.env_tags) as string[] } : undefined;
  };

  return {
    evaluation,
    claimEvaluation(sessionId, at, maxAttempts) {
      const state = evaluation(sessionId);
      if (!state) return 'missing';
      if (state.eval_status === 'completed' || state.eval_status === 'skipped') return 'done';
      if (state.eval_attempts >= maxAttempts) return 'gave-up';
      db.prepare("UPDATE session_audit SET eval_status = 'running', eval_attempts = eval_attempts + 1, updated_at = ? WHERE session_id = ?").run(at, sessionId);
      return 'claimed';
    },
    finishEvaluation(sessionId, status, error, at, refundAttempt = false) {
      db.prepare(
        `UPDATE session_audit SET eval_status = ?, eval_error = ?, evaluated_at = ?, updated_at = ?,
           eval_attempts = CASE WHEN ? THEN max(eval_attempts - 1, 0) ELSE eval_attempts END
         WHERE session_id = ?`,
      ).run(status, error === null ? null : sanitizeText(error).text.slice(0, 2_000), at, at, refundAttempt ? 1 : 0, sessionId);
    },
    recordJudgement(judgement) {
      const info = judgementStmt.run({ ...judgement, evidence: clean(judgement.evidence, QUERY_CHARS) });
      return info.changes > 0 ? Number(info.lastInsertRowid) : null;
    },
    judgements: (sessionId) =>
      db
        .prepare<[string], JudgementRecord>(
          'SELECT session_id, engram_id, source, score, evidence, judged_by, at FROM engram_judgements WHERE session_id = ? ORDER BY id',
        )
        .all(sessionId),
    evaluationCounts() {
      const counts = { pending: 0, running: 0, completed: 0, failed: 0, skipped: 0 };
      for (const row of db.prepare<[], { eval_status: EvaluationState['eval_status']; n: number }>('SELECT eval_status, count(*) AS n FROM session_audit GROUP BY eval_status').all()) {
        counts[row.eval_status] = row.n;
      }
      return counts;
    },
    pendingEvaluations: (maxAttempts, limit) =>
      db
        .prepare<[number, number], { session_id: string }>(
          `SELECT session_id FROM session_audit
            WHERE eval_status = 'pending' OR (eval_status IN ('failed', 'running') AND eval_attempts < ?)
            ORDER BY created_at LIMIT ?`,
        )
        .all(maxAttempts, limit)
        .map((row) => row.session_id),
    retryableEvaluations: (maxAttempts, staleBefore, limit) =>
      db
        .prepare<[number, string, number], { session_id: string }>(
          `SELECT session_id FROM session_audit
            WHERE eval_attempts < ? AND (eval_status = 'failed' OR (eval_status = 'running' AND updated_at < ?))
            ORDER BY updated_at LIMIT ?`,
        )
        .all(maxAttempts, staleBefore, limit)
        .map((row) => row.session_id),
    evaluationRetries(maxAttempts) {
      const row = db
        .prepare<[number, number, string], { retrying: number | null; gave_up: number | null; unusable_answer: number | null }>(
          `SELECT sum(eval_attempts < ?) AS retrying, sum(eval_attempts >= ?) AS gave_up, sum(eval_error LIKE ? || '%') AS unusable_answer
             FROM session_audit WHERE eval_status = 'failed'`,
        )
        .get(maxAttempts, maxAttempts, UNUSABLE_ANSWER);
      return { retrying: row?.retrying ?? 0, gave_up: row?.gave_up ?? 0, unusable_answer: row?.unusable_answer ?? 0 };
    },
    contextEpoch: (sessionId) => epochStmt.get(sessionId)?.context_epoch ?? 0,
    nextContextEpoch(sessionId) {
      bumpStmt.run(sessionId);
      return epochStmt.get(sessionId)?.context_epoch ?? 0;
    },
    shownInContext: (sessionId) => new Set(shownIds.all(sessionId).map((row) => row.engram_id)),
    injectedChars: (sessionId) => charsStmt.get(sessionId)?.chars ?? 0,
    recordShown(rows) {
      for (const row of rows) shownStmt.run({ bm25_rank: null, vector_rank: null, ...row, query: clean(row.query, QUERY_CHARS) });
    },
    judgedByList(lead) {
      const counts: JudgedByList = { vector: { useful: 0, judged: 0 }, bm25: { useful: 0, judged: 0 } };
      const rows = db
        .prepare<{ lead: number }, { led: 'vector' | 'bm25'; useful: number; judged: number }>(
          `SELECT led, sum(score > 0) AS useful, count(*) AS judged FROM (
             SELECT CASE
                      WHEN s.vector_rank <= @lead AND (s.bm25_rank IS NULL OR s.bm25_rank > @lead) THEN 'vector'
                      WHEN s.bm25_rank <= @lead AND (s.vector_rank IS NULL OR s.vector_rank > @lead) THEN 'bm25'
                    END AS led,
                    j.score AS score
               FROM session_shown_engrams s
               JOIN engram_judgements j ON j.session_id = s.session_id AND j.engram_id = s.engram_id
              WHERE j.score IS NOT NULL AND (s.bm25_rank IS NOT NULL OR s.vector_rank IS NOT NULL))
            WHERE led IS NOT NULL GROUP BY led`,
        )
        .all({ lead });
      for (const row of rows) counts[row.led] = { useful: row.useful, judged: row.judged };
      return counts;
    },
    shown: (sessionId) =>
      db
        .prepare<[string], ShownRecord & { context_epoch: number; times: number; shown_at: string }>(
          `SELECT session_id, engram_id, event, query, score, rank, chars, answered_by, shown_at, context_epoch, times,
                  bm25_rank, vector_rank
             FROM session_shown_engrams WHERE session_id = ? ORDER BY shown_at, rank`,
        )
        .all(sessionId)
        .map(({ shown_at, ...row }) => ({ ...row, at: shown_at })),
    recordToolEvent(event) {
      const info = toolStmt.run(
        event.session_id,
        event.tool_use_id,
        event.tool_name,
        clean(event.target, TARGET_CHARS),
        event.ok ? 1 : 0,
        clean(event.error, TARGET_CHARS),
        event.duration_ms,
        event.at,
      );
      return info.changes > 0;
    },
    toolEvents: (sessionId) =>
      db
        .prepare<[string], Omit<ToolEventRecord, 'ok'> & { ok: number }>(
          'SELECT session_id, tool_use_id, tool_name, target, ok, error, duration_ms, at FROM tool_events WHERE session_id = ? ORDER BY id',
        )
        .all(sessionId)
        .map((row) => ({ ...row, ok: row.ok === 1 })),
    audit(record) {
      const previous = auditGet.get(record.session_id);
      const tags = new Set<string>(previous ? (JSON.parse(previous.env_tags) as string[]) : []);
      for (const tag of record.env_tags) tags.add(tag);
      auditStmt.run({
        session_id: record.session_id,
        env_tags: JSON.stringify([...tags].sort()),
        repo: clean(record.repo, TARGET_CHARS),
        transcript_path: clean(record.transcript_path, 8192),
        at: record.at,
      });
    },
  };
}
