import { LIMITS, sanitizeText, type Store } from '../../core/index.js';
import { resolveEngram, type EngramRef } from '../memory/index.js';
import { applyJudgement, type JudgementResult } from './apply.js';
import { LEARNING } from './constants.js';

/** Where and why feedback was given. */
export interface FeedbackOptions {
  /** Why it was (not) useful: stored with the judgement (`engram_judgements.evidence`), redacted. */
  reason?: string;
  /** The environment's tags. */
  tags?: readonly string[];
  /** The environment's repository (project name). */
  repo?: string | null;
  now?: () => Date;
  /** The agent session it was given in (engram_feedback over MCP); feedback from the CLI belongs to none. */
  sessionId?: string | null;
  /** Who gave it: `person` (CLI) or `agent` (MCP). @default "person" */
  by?: string;
}

/** What feedback changed, with the verdict and reason it was given. */
export interface FeedbackResult extends JudgementResult {
  useful: boolean;
  reason: string | null;
}

/**
 * Explicit feedback from a person (`engram feedback`) or the agent (`engram_feedback` over MCP): a judgement at the
 * top or bottom of the scale (±3) with double weight, recorded with its reason in `engram_judgements` (every feedback
 * is a row; the once-per-session rule is the evaluator's, and the MCP operation's).
 */
export function recordFeedback(store: Store, ref: EngramRef, useful: boolean, options: FeedbackOptions = {}): FeedbackResult {
  const at = (options.now ?? (() => new Date()))();
  const reason = options.reason === undefined ? '' : sanitizeText(options.reason).text.trim().slice(0, LIMITS.textChars);
  return store.write(() => {
    const engram = resolveEngram(store, ref);
    const score = useful ? LEARNING.feedbackScore : -LEARNING.feedbackScore;
    // The judgement first, so the relevance history names it as the cause (a repeat in one session is not stored again).
    const judgementId = store.activity.recordJudgement({
      session_id: options.sessionId ?? null,
      engram_id: engram.id,
      source: 'feedback',
      score,
      evidence: reason === '' ? null : reason,
      judged_by: options.by ?? 'person',
      at: at.toISOString(),
    });
    const result = applyJudgement(store, {
      engramId: engram.id,
      score,
      tags: options.tags ?? [],
      repo: options.repo ?? null,
      source: 'feedback',
      at,
      judgementId,
      sessionId: options.sessionId ?? null,
    });
    const { engram_id, ...rest } = result;
    return { engram_id, useful, reason: reason === '' ? null : reason, ...rest };
  });
}
