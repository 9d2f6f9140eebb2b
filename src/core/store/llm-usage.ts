import type { Database } from './database.js';

/** Calls and tokens counted against the LLM caps. */
export interface LlmUsageTotals {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * SQL access to `llm_usage`. `record` adds to the row of (day, session), so a call can be counted before it is made
 * (calls: 1) and its tokens added when it returns. Callers own transactions: the LLM budget checks and records in
 * one `store.write`, so two processes cannot both take the last call.
 */
export interface LlmUsageRepo {
  /** Adds `usage` to the (day, session) row; `day` is `YYYY-MM-DD` (UTC), no session is `null` or `''`. */
  record(day: string, sessionId: string | null | undefined, usage: Partial<LlmUsageTotals>): void;
  /** Everything used on one day, all sessions together. */
  totals(day: string): LlmUsageTotals;
  /** Everything one session used, over all days. */
  forSession(sessionId: string): LlmUsageTotals;
}

/** Session ids come from agents; a longer one is cut so a hostile id cannot grow the table's key without bound. */
const MAX_SESSION_ID = 200;

const sessionKey = (sessionId: string | null | undefined): string => (sessionId ?? '').slice(0, MAX_SESSION_ID);

const count = (value: number | undefined): number => (value !== undefined && Number.isFinite(value) && value > 0 ? Math.round(value) : 0);

/** Builds the LLM usage repository over a connection. */
export function createLlmUsageRepo(db: Database): LlmUsageRepo {
  const recordStmt = db.prepare(`
    INSERT INTO llm_usage (day, session_id, calls, prompt_tokens, completion_tokens) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (day, session_id) DO UPDATE SET
      calls = calls + excluded.calls,
      prompt_tokens = prompt_tokens + excluded.prompt_tokens,
      completion_tokens = completion_tokens + excluded.completion_tokens`);
  const dayStmt = db.prepare<[string], LlmUsageTotals>(`
    SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(prompt_tokens), 0) AS prompt_tokens,
           coalesce(sum(completion_tokens), 0) AS completion_tokens
      FROM llm_usage WHERE day = ?`);
  const sessionStmt = db.prepare<[string], LlmUsageTotals>(`
    SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(prompt_tokens), 0) AS prompt_tokens,
           coalesce(sum(completion_tokens), 0) AS completion_tokens
      FROM llm_usage WHERE session_id = ?`);
  return {
    record(day, sessionId, usage) {
      recordStmt.run(day, sessionKey(sessionId), count(usage.calls), count(usage.prompt_tokens), count(usage.completion_tokens));
    },
    totals(day) {
      return dayStmt.get(day) as LlmUsageTotals;
    },
    forSession(sessionId) {
      return sessionStmt.get(sessionKey(sessionId)) as LlmUsageTotals;
    },
  };
}
