import { existsSync } from 'node:fs';
import { listBootstraps } from '../../../scripts/install-state.mjs';
import { isEngramError, type Embedder, type EngramEnv, type Job, type JobKind, type LlmClient, type Logger, type Session, type Store } from '../../core/index.js';
import { syncJournal, type GovernancePolicy } from '../governance/index.js';
import { evaluateSession, extractSession, retryEvaluations, sessionSource } from '../learn/index.js';
import { contextFilesOf, syncContext } from '../context/index.js';
import { checkLiveness, loadTapes, momentSource } from '../provenance/index.js';
import { ingestSessions, subagentTranscripts } from '../tape/index.js';
import { catchUpSessions, type CatchUpReport } from './catch-up.js';

/** What a job handler may use: the store, and the warm server's ability to embed what lacks vectors. */
export interface JobContext {
  store: Store;
  log: Logger;
  now(): Date;
  /** Embeds engrams that lack vectors with the loaded model; absent when no model is loaded. */
  embedPending?: () => Promise<number>;
  /** The LLM that judges shown engrams and extracts lessons; absent or `none`: nothing is judged or extracted. */
  llm?: LlmClient | null;
  /** The loaded embedder, for extraction's duplicate check by meaning (without it, by word overlap only). */
  embedder?: Embedder | null;
  /** The environment of a folder (its tags and MCP servers), for what extraction infers about a lesson. */
  describeEnvironment?: (cwd: string) => { tags?: readonly string[]; mcpServers?: readonly string[] };
  /** Where tapes and the agents' folders are; absent (or `recordTapes` false): the session is not recorded as a tape. */
  env?: Pick<EngramEnv, 'home' | 'claudeConfigDir' | 'codexHome'>;
  /** config.json `tapes.record`. @default true */
  recordTapes?: boolean;
  /**
   * Records one transcript as tapes (`engram ingest --file`). The server runs it in a child process, so adapting and
   * compressing a large transcript never holds up the hooks it answers; without it, ingest runs in this process.
   */
  recordFile?: (cwd: string, file: string) => Promise<RecordedSources>;
  /** config.json `governance`: whether extracted lessons wait for review (tiers, autopromote). @default built-in */
  governance?: GovernancePolicy;
}

/** What recording one transcript reported, per source (ingest's report, reduced). */
export interface RecordedSources {
  sources: Array<{ tape_id: string | null; status: string; error?: { code: string; message: string } }>;
}

/** One kind of background work. */
export type JobHandler = (job: Job, context: JobContext) => Promise<Record<string, unknown>>;

/** A job that ran for longer than this was abandoned (its server died); another server takes it over. */
const STALE_AFTER_MS = 10 * 60 * 1000;

/**
 * `session-end`: what happens after an agent session ends, off the hook's clock. It makes sure the session has an
 * audit row (what the evaluator reads: env tags, repo, transcript), records it as tapes, judges the engrams shown in
 * it (once per session, however often the job runs), extracts new lessons, records the sessions of the same project
 * that its hooks never saw (catch-up.ts: they ran while the install was bootstrapping), and brings vectors up to date
 * so the next session's searches need no catch-up.
 */
const sessionEnd: JobHandler = async (job, context) => {
  const { store } = context;
  const at = context.now().toISOString();
  const session = job.session_id ? store.sessions.get(job.session_id) : undefined;
  let evaluation: string | null = null;
  let extraction: Record<string, unknown> | null = null;
  let tapes: string[] = [];
  let liveness: Record<string, unknown> | null = null;
  let contextFiles: string[] | null = null;
  if (session) {
    store.write(() =>
      store.activity.audit({ session_id: session.id, env_tags: [], repo: session.project, transcript_path: session.transcript_path, at }),
    );
    tapes = await recordAfterSession(context, session);
    const report = await evaluateSession(store, session.id, { llm: context.llm ?? null, now: context.now, log: context.log });
    evaluation = report.outcome;
    if (report.outcome === 'failed') context.log.warn('evaluation failed; it is retried with the next job run', { session: session.id, error: report.error });
    extraction = await extractAfterSession(context, session.id, tapes);
    liveness = livenessAfterSession(context, session);
    contextFiles = contextAfterSession(context, session);
  }
  const caughtUp = session ? catchUpAfterSession(context, session) : null;
  const embedded = context.embedPending ? await context.embedPending() : 0;
  // Audit rows written inside the evaluator's transactions (automatic pins) reach audit.jsonl now.
  syncJournal(store);
  return {
    session: session?.id ?? null,
    shown: session ? store.activity.shown(session.id).length : 0,
    tapes,
    evaluation,
    extraction,
    liveness,
    context_files: contextFiles,
    ...(caughtUp && caughtUp.sessions.length > 0 ? { caught_up: caughtUp.sessions.map((s) => s.id) } : {}),
    embedded,
  };
};

/**
 * When Engram arrived in this home: the first bootstrap recorded, or the first session, whichever is older. Null
 * when neither exists (nothing to catch up from).
 */
function engramSince(store: Store, home: string): string | null {
  const times = [store.sessions.counts().first_started_at, ...listBootstraps(home).map((state) => state.started_at)].filter(
    (at): at is string => typeof at === 'string' && !Number.isNaN(Date.parse(at)),
  );
  return times.length ? times.reduce((a, b) => (Date.parse(a) <= Date.parse(b) ? a : b)) : null;
}

/** Sessions of this project and agent the hooks never saw, recorded with their own queued jobs. Never throws. */
function catchUpAfterSession(context: JobContext, session: Session): CatchUpReport | null {
  const cwd = session.cwd ?? session.repo_root;
  if (!context.env || !cwd || !existsSync(cwd)) return null;
  try {
    const since = engramSince(context.store, context.env.home);
    if (!since) return null;
    const report = catchUpSessions(context.store, { cwd, agent: session.agent, env: context.env, since, except: session.id, now: context.now, log: context.log });
    if (report.sessions.length > 0) {
      context.log.info('recorded sessions the hooks missed', { sessions: report.sessions.map((s) => s.id), remaining: report.remaining });
    }
    return report;
  } catch (error) {
    context.log.warn('catch-up of missed sessions failed', { session: session.id, error: isEngramError(error) ? error.message : String(error) });
    return null;
  }
}

/**
 * The session as tapes (its transcript and its subagents' files), through ingest: its cursors make a second run for
 * the same session add nothing, and a resumed session a tape of only what is new. Returns the tapes that hold this
 * session's new content (written now or found already written). A failure is logged, never fails the job.
 */
async function recordAfterSession(context: JobContext, session: Session): Promise<string[]> {
  if (!context.env || context.recordTapes === false || !session.transcript_path) return [];
  const tapes: string[] = [];
  try {
    const env = context.env;
    const cwd = session.cwd ?? session.repo_root ?? env.home;
    // A session folder that is gone (a removed worktree or temp folder) cannot be a child's working folder.
    const record = context.recordFile && existsSync(cwd) ? context.recordFile : (folder: string, file: string) => ingestSessions({ cwd: folder, env, file });
    for (const file of [session.transcript_path, ...subagentTranscripts(session.transcript_path)]) {
      const report = await record(cwd, file);
      for (const source of report.sources) {
        if (source.tape_id) tapes.push(source.tape_id);
        if (source.status === 'error') context.log.warn('session not recorded as a tape', { session: session.id, file, error: source.error });
      }
    }
  } catch (error) {
    context.log.warn('session not recorded as a tape', { session: session.id, error: isEngramError(error) ? error.message : String(error) });
  }
  return tapes;
}

/** Extraction after the session ends: a missing transcript or a failing model is logged, never fails the job. */
async function extractAfterSession(context: JobContext, sessionId: string, tapes: readonly string[]): Promise<Record<string, unknown> | null> {
  try {
    const source = sessionSource(context.store, sessionId, context.describeEnvironment);
    if (!source) return null;
    // The moment each lesson was learned, found in the tapes just recorded (its quote, the exchange, the files then).
    const home = context.env?.home;
    const cwd = source.cwd;
    const recorded = home && cwd ? loadTapes(cwd, home, tapes) : [];
    const report = await extractSession(context.store, { ...source, tapes }, {
      llm: context.llm ?? null,
      embedder: context.embedder ?? null,
      now: context.now,
      log: context.log,
      ...(context.governance ? { policy: context.governance } : {}),
      ...(recorded.length ? { provenance: (quote: string, text: string) => momentSource(recorded, quote, text, { sessionId, cwd }) } : {}),
    });
    if (report.outcome === 'failed') context.log.warn('extraction failed; the next run continues where it stopped', { session: sessionId, error: report.error });
    return {
      outcome: report.outcome,
      created: report.lessons.filter((lesson) => lesson.action === 'created').map((lesson) => lesson.engram_id),
      merged: report.lessons.filter((lesson) => lesson.action === 'merged').map((lesson) => lesson.engram_id),
      rejected: report.rejected.length,
    };
  } catch (error) {
    context.log.warn('extraction could not run', { session: sessionId, error: isEngramError(error) ? error.message : String(error) });
    return { outcome: 'failed' };
  }
}

/**
 * After a session's tapes are recorded: engrams naming code in its repository are checked against the tape index, so
 * one whose code this session deleted leaves injection now. Logged, never fails the job.
 */
function livenessAfterSession(context: JobContext, session: Session): Record<string, unknown> | null {
  if (!context.env || context.recordTapes === false || !session.cwd || !existsSync(session.cwd)) return null;
  try {
    const report = checkLiveness(context.store, { home: context.env.home, cwd: session.cwd, now: context.now, actor: { by: 'system', via: 'job' } });
    return { checked: report.checked, gone: report.gone.map((item) => item.id), revived: report.revived };
  } catch (error) {
    context.log.warn('liveness check failed', { session: session.id, error: isEngramError(error) ? error.message : String(error) });
    return null;
  }
}

/** Context files the session's repository opted into (`engram context sync --file`) are brought up to date. */
function contextAfterSession(context: JobContext, session: Session): string[] | null {
  if (!context.env || !session.cwd || !existsSync(session.cwd) || contextFilesOf(context.env.home, session.cwd).length === 0) return null;
  try {
    const report = syncContext(context.store, {
      home: context.env.home,
      cwd: session.cwd,
      now: context.now,
      actor: { by: 'system', via: 'job' },
      ...(context.governance ? { policy: context.governance } : {}),
    });
    return report.files.filter((file) => file.status === 'written').map((file) => file.file);
  } catch (error) {
    context.log.warn('context files not refreshed', { session: session.id, error: isEngramError(error) ? error.message : String(error) });
    return null;
  }
}

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
 * two servers never run the same job. A failing job is marked failed with its error and never retried in a loop.
 * Then retries a few evaluations that failed earlier (an unusable answer, a failing model) within the LLM caps. */
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
  try {
    const retried = await retryEvaluations(context.store, { llm: context.llm ?? null, now: context.now, log: context.log });
    if (retried.length > 0) {
      context.log.info('retried evaluations', { sessions: retried.map((report) => ({ session: report.session_id, outcome: report.outcome })) });
    }
  } catch (error) {
    context.log.warn('evaluation retries failed', { error });
  }
  return { ran, failed };
}
