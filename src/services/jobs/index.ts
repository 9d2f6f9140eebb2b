import type { Job, JobKind, LlmClient, Logger, Store } from '../../core/index.js';
import { evaluateSession } from '../learn/index.js';

/** What a job handler may use: the store, and the warm server's ability to embed what lacks vectors. */
export interface JobContext {
  store: Store;
  log: Logger;
  now(): Date;
  /** Embeds engrams that lack vectors with the loaded model; absent when no model is loaded. */
  embedPending?: () => Promise<number>;
  /** The LLM that judges shown engrams; absent or `none`: nothing is judged (services/learn/evaluate.ts). */
  llm?: LlmClient | null;
}

/** One kind of background work. */
export type JobHandler = (job: Job, context: JobContext) => Promise<Record<string, unknown>>;

/** A job that ran for longer than this was abandoned (its server died); another server takes it over. */
const STALE_AFTER_MS = 10 * 60 * 1000;

/**
 * `session-end`: what happens after an agent session ends, off the hook's clock. It makes sure the session has an
 * audit row (what the evaluator reads: env tags, repo, transcript), judges the engrams shown in it (once per session,
 * however often the job runs), and brings vectors up to date so the next session's searches need no catch-up. Tape
 * recording joins this job with the tapes release.
 */
const sessionEnd: JobHandler = async (job, context) => {
  const { store } = context;
  const at = context.now().toISOString();
  const session = job.session_id ? store.sessions.get(job.session_id) : undefined;
  let evaluation: string | null = null;
  if (session) {
    store.write(() =>
      store.activity.audit({ session_id: session.id, env_tags: [], repo: session.project, transcript_path: session.transcript_path, at }),
    );
    const report = await evaluateSession(store, session.id, { llm: context.llm ?? null, now: context.now, log: context.log });
    evaluation = report.outcome;
    if (report.outcome === 'failed') context.log.warn('evaluation failed; it is retried with the next job run', { session: session.id, error: report.error });
  }
  const embedded = context.embedPending ? await context.embedPending() : 0;
  return { session: session?.id ?? null, shown: session ? store.activity.shown(session.id).length : 0, evaluation, embedded };
};

/** A session quiet this long without a SessionEnd was abandoned (terminal closed, agent killed, `-p` cut short). */
const ABANDONED_AFTER_MS = 2 * 60 * 60 * 1000;

/**
 * SessionEnd does not always come, so sessions that went quiet without one get their session-end job anyway.
 * Returns how many were queued.
 */
export function queueAbandonedSessions(store: Store, now: Date, quietMs = ABANDONED_AFTER_MS): number {
  const quietBefore = new Date(now.getTime() - quietMs).toISOString();
  return store.write(() => {
    const sessions = store.jobs.abandonedSessions('session-end', quietBefore, 100);
    for (const session of sessions) {
      store.jobs.enqueue('session-end', session.id, { transcript_path: session.transcript_path, agent: session.agent, abandoned: true }, now.toISOString());
    }
    return sessions.length;
  });
}

/** Every job kind and its handler. */
export const JOB_HANDLERS: Record<JobKind, JobHandler> = { 'session-end': sessionEnd };

/** Runs pending jobs one at a time until none is left (or `limit` ran). Each is claimed in a write transaction, so
 * two servers never run the same job. A failing job is marked failed with its error and never retried in a loop. */
export async function runPendingJobs(context: JobContext, options: { limit?: number } = {}): Promise<{ ran: number; failed: number }> {
  let ran = 0;
  let failed = 0;
  const limit = options.limit ?? 100;
  while (ran + failed < limit) {
    const now = context.now();
    const job = context.store.write(() =>
      context.store.jobs.claim(now.toISOString(), new Date(now.getTime() - STALE_AFTER_MS).toISOString()),
    );
    if (!job) break;
    const started = performance.now();
    try {
      if (job.attempts > 3) throw new Error('gave up after 3 attempts');
      const result = await JOB_HANDLERS[job.kind](job, context);
      context.store.write(() => context.store.jobs.finish(job.id, context.now().toISOString()));
      context.log.info('job done', { job: job.id, kind: job.kind, ms: Math.round(performance.now() - started), ...result });
      ran++;
    } catch (error) {
      context.store.write(() => context.store.jobs.finish(job.id, context.now().toISOString(), (error as Error).message ?? String(error)));
      context.log.error('job failed', { job: job.id, kind: job.kind, error });
      failed++;
    }
  }
  return { ran, failed };
}
