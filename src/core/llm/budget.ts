import { EngramError } from '../errors.js';
import type { LlmUsageRepo, LlmUsageTotals, Store } from '../store/index.js';
import type { LlmLimits } from './settings.js';
import type { LlmUsage } from './types.js';

/** A counted call: settle it on the same day and session it was reserved on, even if it ends after midnight. */
export interface BudgetTicket {
  day: string;
  sessionId: string;
}

/**
 * The caps on calls and tokens. A call is counted when it is reserved — before it is made, in the same write
 * transaction as the check — so concurrent processes cannot all take the last call, and a failing endpoint cannot be
 * hammered past the call caps. Tokens are added when the call returns.
 */
export interface LlmBudget {
  /** Checks every cap for a call expected to use `expectedTokens` and counts it; throws LLM_BUDGET naming the cap. */
  reserve(sessionId: string | undefined, expectedTokens: number): BudgetTicket;
  /** Adds the tokens a finished call used. */
  settle(ticket: BudgetTicket, usage: LlmUsage): void;
}

/** The UTC day usage counts against. */
export const usageDay = (at: Date): string => at.toISOString().slice(0, 10);

const tokensOf = (totals: LlmUsageTotals): number => totals.prompt_tokens + totals.completion_tokens;

/** Per-process usage when there is no store; module-wide so that creating another client does not reset the caps. */
const memoryRows = new Map<string, LlmUsageTotals>();

/** The same ledger as the store's `llm_usage`, in memory. */
const memoryLedger: LlmUsageRepo = {
  record(day, sessionId, usage) {
    const key = `${day}\u0000${sessionId ?? ''}`;
    const row = memoryRows.get(key) ?? { calls: 0, prompt_tokens: 0, completion_tokens: 0 };
    row.calls += usage.calls ?? 0;
    row.prompt_tokens += usage.prompt_tokens ?? 0;
    row.completion_tokens += usage.completion_tokens ?? 0;
    memoryRows.set(key, row);
  },
  totals(day) {
    return sum([...memoryRows].filter(([key]) => key.startsWith(`${day}\u0000`)).map(([, row]) => row));
  },
  forSession(sessionId) {
    return sum([...memoryRows].filter(([key]) => key.endsWith(`\u0000${sessionId}`)).map(([, row]) => row));
  },
};

function sum(rows: LlmUsageTotals[]): LlmUsageTotals {
  return rows.reduce(
    (total, row) => ({
      calls: total.calls + row.calls,
      prompt_tokens: total.prompt_tokens + row.prompt_tokens,
      completion_tokens: total.completion_tokens + row.completion_tokens,
    }),
    { calls: 0, prompt_tokens: 0, completion_tokens: 0 },
  );
}

/** One cap as checked before a call: what is used, what the call adds, and how to name it. */
interface CapCheck {
  cap: 'max_calls_per_day' | 'max_tokens_per_day' | 'max_calls_per_session' | 'max_tokens_per_session';
  limit: number;
  used: number;
  adding: number;
  unit: 'calls' | 'tokens';
  scope: string;
  details: Record<string, unknown>;
}

function overCap(check: CapCheck): EngramError {
  const { cap, limit, used, adding, unit, scope } = check;
  const call = unit === 'tokens' ? `, and this call may use ${adding}` : '';
  return new EngramError(
    'LLM_BUDGET',
    `LLM budget: llm.${cap} (${limit}) would be exceeded: ${used} ${unit} used ${scope}${call}; raise it in config.json or wait`,
    { details: { cap, limit, used, ...(unit === 'tokens' ? { expected: adding } : {}), ...check.details } },
  );
}

/** Builds the budget over the store's ledger, or the per-process one. */
export function createBudget(limits: LlmLimits, options: { store?: Store; now: () => Date }): LlmBudget {
  const { store, now } = options;
  const ledger = store ? store.llmUsage : memoryLedger;
  const inTransaction = <T>(fn: () => T): T => (store ? store.write(fn) : fn());

  return {
    reserve(sessionId, expectedTokens) {
      const day = usageDay(now());
      const session = sessionId ?? '';
      return inTransaction(() => {
        const today = ledger.totals(day);
        const onDay = { scope: `on ${day} (UTC)`, details: { day } };
        const checks: CapCheck[] = [
          { cap: 'max_calls_per_day', limit: limits.maxCallsPerDay, used: today.calls, adding: 1, unit: 'calls', ...onDay },
          { cap: 'max_tokens_per_day', limit: limits.maxTokensPerDay, used: tokensOf(today), adding: expectedTokens, unit: 'tokens', ...onDay },
        ];
        if (session) {
          const bySession = ledger.forSession(session);
          const inSession = { scope: `by session ${session}`, details: { session_id: session } };
          checks.push(
            { cap: 'max_calls_per_session', limit: limits.maxCallsPerSession, used: bySession.calls, adding: 1, unit: 'calls', ...inSession },
            {
              cap: 'max_tokens_per_session',
              limit: limits.maxTokensPerSession,
              used: tokensOf(bySession),
              adding: expectedTokens,
              unit: 'tokens',
              ...inSession,
            },
          );
        }
        const crossed = checks.find((check) => check.used + check.adding > check.limit);
        if (crossed) throw overCap(crossed);
        ledger.record(day, session, { calls: 1 });
        return { day, sessionId: session };
      });
    },
    settle(ticket, usage) {
      const tokens = { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens };
      inTransaction(() => ledger.record(ticket.day, ticket.sessionId, tokens));
    },
  };
}
