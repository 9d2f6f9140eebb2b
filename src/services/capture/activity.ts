import type { Store, ToolEventRecord } from '../../core/index.js';
import { recordSessionStart, type SessionContext } from './sessions.js';

/** The environment facts stored with a session for its evaluation. */
export interface SessionEnvironmentFacts {
  tags: readonly string[];
  repo: string | null;
}

/** PostToolUse / PostToolUseFailure: one row per tool call, written once even if the hook fires twice. */
export function recordToolEvent(
  store: Store,
  session: SessionContext,
  event: Omit<ToolEventRecord, 'session_id' | 'at'>,
  options: { now: () => Date },
): boolean {
  const at = options.now().toISOString();
  return store.write(() => {
    ensureSession(store, session, at);
    return store.activity.recordToolEvent({ ...event, session_id: session.sessionId, at });
  });
}

/** Makes sure the session row exists (a plugin enabled mid-session never saw its SessionStart). */
export function ensureSession(store: Store, session: SessionContext, at: string): void {
  if (!store.sessions.get(session.sessionId)) recordSessionStart(store, session, null, { now: () => new Date(at) });
}

/** Queues the session's background work and marks it ended; the hook then wakes the server to run it. */
export function queueSessionEndWork(store: Store, session: SessionContext, options: { now: () => Date }): void {
  const at = options.now().toISOString();
  store.write(() => {
    ensureSession(store, session, at);
    store.jobs.enqueue('session-end', session.sessionId, { transcript_path: session.transcriptPath, agent: session.agent }, at);
  });
}
