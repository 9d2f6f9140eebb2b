import * as z from 'zod';
import {
  EngramError,
  extractJsonObject,
  isEngramError,
  readTranscript,
  type Engram,
  type LlmClient,
  type Logger,
  type Store,
  type Transcript,
  UNUSABLE_ANSWER,
} from '../../core/index.js';
import { applyJudgement } from './apply.js';
import { excerptAround } from './conversation.js';

/** Evaluation limits, with the reason for each. */
export const EVALUATION = {
  /** A session's evaluation is tried at most this many times (a failing model, a budget spent for the day). */
  maxAttempts: 3,
  /** Engrams judged per session at most, in the order they were shown: a bounded cost per session. */
  maxEngrams: 12,
  /** Tokens an answer may take: a score and a one-sentence quote. */
  maxAnswerTokens: 200,
  /** A strong positive (+2, +3) must quote the session; an answer without a quote found in the excerpt is lowered to
   * this, so an unsupported "very useful" cannot pin an engram. */
  unquotedCeiling: 1,
} as const;

const SYSTEM = [
  'You review one coding-agent session. Before or during it, the agent was shown a memory from earlier sessions.',
  'Judge whether that memory helped in this session, using only the excerpt given.',
  'Answer with one JSON object: {"score": <integer from -3 to 3>, "evidence": "<a short exact quote from the excerpt>"}.',
  '3: the agent clearly relied on it, or it prevented a mistake. 1 or 2: relevant and consistent with what happened.',
  '0: cannot tell, or it was not used. -1 or -2: not relevant to this work. -3: wrong or misleading here.',
  'For a score of 2 or 3, quote the excerpt text that shows it; otherwise evidence may be empty.',
].join('\n');

const AnswerSchema = z.object({ score: z.number(), evidence: z.string().max(2_000).optional().nullable() });

/** What evaluating one session did. */
export interface EvaluationReport {
  session_id: string;
  /** `done`: already evaluated (nothing changed); `gave-up`: attempts used up; `missing`: no audit row. */
  outcome: 'completed' | 'skipped' | 'failed' | 'done' | 'gave-up' | 'missing';
  judged: Array<{ engram_id: number; score: number | null; evidence: string | null; matched: boolean; pin: string | null }>;
  error: string | null;
}

/** The engram's score from a model answer, or null when the answer is unusable; strong positives need a quote. */
export function scoreFromAnswer(text: string, excerpt: string): { score: number; evidence: string | null } | null {
  let object: unknown;
  try {
    object = extractJsonObject(text);
  } catch {
    return null;
  }
  const parsed = AnswerSchema.safeParse(object);
  if (!parsed.success || !Number.isFinite(parsed.data.score)) return null;
  let score = Math.max(-3, Math.min(3, Math.round(parsed.data.score)));
  const evidence = parsed.data.evidence?.trim() || null;
  const quoted = evidence !== null && evidence.length >= 8 && excerpt.toLowerCase().includes(evidence.toLowerCase().slice(0, 120));
  if (score >= 2 && !quoted) score = Math.min(score, EVALUATION.unquotedCeiling);
  return { score, evidence };
}

function prompt(engram: Engram, event: string, excerpt: string): string {
  return [
    `Memory EG#${engram.id} [${engram.category}]: ${engram.title ? `${engram.title}: ` : ''}${engram.text}`,
    '',
    `Excerpt of the session around when it was shown (by the ${event} hook):`,
    excerpt || '(the transcript has nothing around that moment)',
  ].join('\n');
}

/**
 * Judges every engram shown in a session against the session's transcript, exactly once: the audit row is claimed
 * (at most 3 attempts), each judgement is stored once per (session, engram) in the same transaction that moves the
 * statistics, and a finished session is never judged again. With no LLM, nothing is judged and the session is
 * recorded as skipped with the reason: the conservative fallback is to learn nothing rather than to guess.
 */
export async function evaluateSession(
  store: Store,
  sessionId: string,
  options: { llm: LlmClient | null; now?: () => Date; log?: Logger },
): Promise<EvaluationReport> {
  const now = options.now ?? (() => new Date());
  const report: EvaluationReport = { session_id: sessionId, outcome: 'completed', judged: [], error: null };
  const claim = store.write(() => store.activity.claimEvaluation(sessionId, now().toISOString(), EVALUATION.maxAttempts));
  if (claim !== 'claimed') return { ...report, outcome: claim };
  const state = store.activity.evaluation(sessionId);
  const already = new Set(store.activity.judgements(sessionId).filter((j) => j.source === 'evaluation').map((j) => j.engram_id));
  const shown = store.activity.shown(sessionId).filter((row) => !already.has(row.engram_id)).slice(0, EVALUATION.maxEngrams);
  const finish = (outcome: 'completed' | 'skipped' | 'failed', error: string | null, refundAttempt = false): EvaluationReport => {
    store.write(() => store.activity.finishEvaluation(sessionId, outcome, error, now().toISOString(), refundAttempt));
    return { ...report, outcome, error };
  };
  if (shown.length === 0) return finish(already.size > 0 ? 'completed' : 'skipped', already.size > 0 ? null : 'nothing was shown');

  const llm = options.llm && options.llm.provider !== 'none' ? options.llm : null;
  if (!llm) {
    store.write(() => {
      for (const row of shown) {
        store.activity.recordJudgement({ session_id: sessionId, engram_id: row.engram_id, source: 'evaluation', score: null, evidence: null, judged_by: 'none', at: now().toISOString() });
      }
    });
    report.judged = shown.map((row) => ({ engram_id: row.engram_id, score: null, evidence: null, matched: false, pin: null }));
    return finish('skipped', 'no LLM configured: no judgement was made (statistics unchanged)');
  }

  let transcript: Transcript | null = null;
  try {
    transcript = state?.transcript_path ? readTranscript(state.transcript_path) : null;
  } catch (error) {
    options.log?.warn('transcript unreadable; judging without it', { session: sessionId, error });
  }

  /** Engrams whose answer was unusable this time: no judgement is stored, so the next attempt asks again. */
  const unusable: number[] = [];
  for (const row of shown) {
    const engram = store.engrams.get(row.engram_id);
    if (!engram || engram.deleted_at !== null) continue;
    const excerpt = transcript ? excerptAround(transcript, row.at) : '';
    let answer: { score: number; evidence: string | null } | null;
    let judgedBy: string;
    try {
      const response = await llm.complete({
        system: SYSTEM,
        prompt: prompt(engram, row.event, excerpt),
        json: true,
        maxTokens: EVALUATION.maxAnswerTokens,
        sessionId,
        purpose: 'evaluate',
      });
      answer = scoreFromAnswer(response.text, excerpt);
      judgedBy = response.model ?? response.provider;
    } catch (error) {
      // A spent budget or a failing model: what was judged stays judged; the rest is retried later. A spent *daily*
      // budget gives the attempt back: the session did nothing wrong, and tomorrow's drain has budget again.
      const daily = isEngramError(error, 'LLM_BUDGET') && String((error.details as { cap?: string } | undefined)?.cap ?? '').endsWith('_per_day');
      return finish('failed', isEngramError(error) ? `${error.code}: ${error.message}` : String(error), daily);
    }
    if (!answer) {
      // Not stored as a judgement (it would count as judged and never be asked again): the next drain retries it.
      options.log?.warn('unusable evaluation answer; retried at the next drain', { session: sessionId, engram: engram.id });
      unusable.push(engram.id);
      report.judged.push({ engram_id: engram.id, score: null, evidence: null, matched: false, pin: null });
      continue;
    }
    const at = now().toISOString();
    const tags = state?.env_tags ?? [];
    const result = store.write(() => {
      const inserted = store.activity.recordJudgement({
        session_id: sessionId,
        engram_id: engram.id,
        source: 'evaluation',
        score: answer.score,
        evidence: answer.evidence,
        judged_by: judgedBy,
        at,
      });
      if (inserted === null || answer.score === 0) return null;
      return applyJudgement(store, { engramId: engram.id, score: answer.score, tags, repo: state?.repo ?? null, source: 'evaluation', at, judgementId: inserted, sessionId });
    });
    report.judged.push({
      engram_id: engram.id,
      score: answer.score,
      evidence: answer.evidence,
      matched: result?.matched ?? false,
      pin: result?.pin ? `${result.pin.action} (${result.pin.reason})` : null,
    });
  }
  if (unusable.length > 0) return finish('failed', `${UNUSABLE_ANSWER} for ${unusable.map((id) => `EG#${id}`).join(', ')}; asked again at the next drain`);
  return finish('completed', null);
}

/** `engram eval status`: how many sessions are in each evaluation state, or one session's state and judgements. */
export function evaluationStatus(store: Store, sessionId?: string) {
  if (sessionId === undefined) return { counts: store.activity.evaluationCounts() };
  const state = store.activity.evaluation(sessionId);
  if (!state) throw new EngramError('NOT_FOUND', `no evaluation record for session '${sessionId}' (it showed nothing, or never ended)`);
  return { counts: store.activity.evaluationCounts(), session: state, judgements: store.activity.judgements(sessionId) };
}

/** Evaluations one drain retries at most: each costs LLM calls, and the caps in core/llm bound the day. */
export const RETRIES_PER_DRAIN = 5;
/** An evaluation `running` longer than this was abandoned by a process that died. */
const STALE_EVALUATION_MS = 10 * 60 * 1000;

/**
 * Retries evaluations that failed (an unusable answer, a failing model, a spent budget) and have attempts left, at
 * most {@link RETRIES_PER_DRAIN} per call: the job runner calls this after every drain. Nothing without an LLM.
 */
export async function retryEvaluations(
  store: Store,
  options: { llm: LlmClient | null; now?: () => Date; log?: Logger; limit?: number },
): Promise<EvaluationReport[]> {
  if (!options.llm || options.llm.provider === 'none') return [];
  const now = options.now ?? (() => new Date());
  const staleBefore = new Date(now().getTime() - STALE_EVALUATION_MS).toISOString();
  const reports: EvaluationReport[] = [];
  for (const sessionId of store.activity.retryableEvaluations(EVALUATION.maxAttempts, staleBefore, options.limit ?? RETRIES_PER_DRAIN)) {
    const report = await evaluateSession(store, sessionId, options);
    reports.push(report);
    // A spent budget stops this drain's retries; they continue at a later one.
    if (report.error?.startsWith('LLM_BUDGET')) break;
  }
  return reports;
}

/** `engram eval run`: evaluates one session, or every session still waiting, now (in this process). */
export async function evaluatePending(
  store: Store,
  options: { llm: LlmClient | null; sessionId?: string; limit?: number; now?: () => Date; log?: Logger },
): Promise<EvaluationReport[]> {
  const sessions = options.sessionId ? [options.sessionId] : store.activity.pendingEvaluations(EVALUATION.maxAttempts, options.limit ?? 50);
  const reports: EvaluationReport[] = [];
  for (const sessionId of sessions) reports.push(await evaluateSession(store, sessionId, options));
  return reports;
}
