import { statSync } from 'node:fs';
import { basename, sep } from 'node:path';
import { readTranscript, type Agent, type EngramEnv, type Logger, type Store } from '../../core/index.js';
import { recordPrompt, recordSessionEnd, recordSessionStart, type SessionContext } from '../capture/index.js';
import { discoverTranscripts, repositoryMatch, tapeLocation } from '../tape/index.js';

/**
 * Catch-up of sessions the hooks never saw. A session that runs while a fresh install is still bootstrapping (about a
 * minute after a marketplace install), or while its hooks could not run at all, leaves a transcript and nothing in
 * the store: its hooks stayed silent. The next session-end job of the same project and agent finds those transcripts
 * and records each as the hooks would have: the session, its prompts (redacted like any prompt), its end — and
 * queues its own session-end job, which records its tapes and mines it like any other session.
 *
 * Only transcripts written since Engram arrived in this home are looked at (the first bootstrap, or the first
 * session recorded, whichever came first): a project's history from before the install is not imported behind the
 * person's back (`engram ingest` records it as tapes when asked).
 */

/** Sessions recorded per run; the next session end continues (a project with a long backlog is not one long job). */
export const CATCH_UP_LIMIT = 20;
/** Transcripts touched up to this long before Engram's first trace still count (clock skew, a session that began
 * just before the install). */
const SINCE_MARGIN_MS = 10 * 60 * 1000;

/** What a catch-up recorded. */
export interface CatchUpReport {
  /** The sessions recorded now, each with its prompts and a queued session-end job. */
  sessions: Array<{ id: string; agent: Agent; prompts: number; transcript_path: string }>;
  /** Unknown transcripts left for the next run (over the limit). */
  remaining: number;
}

/** The session id a transcript's file name carries: Claude `<id>.jsonl`, Codex `rollout-<time>-<id>.jsonl`. */
export function sessionIdFromPath(path: string, agent: Agent): string | null {
  const name = basename(path, '.jsonl');
  if (agent === 'codex') return /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.exec(name)?.[1] ?? null;
  return /^[A-Za-z0-9_-]{8,128}$/.test(name) ? name : null;
}

/**
 * Records the sessions of the repository holding `cwd` that `agent` wrote since `since` and the store does not know.
 * Returns what it recorded; a transcript it cannot read is logged and skipped, never fatal.
 */
export function catchUpSessions(
  store: Store,
  options: {
    cwd: string;
    agent: Agent;
    env: Pick<EngramEnv, 'home' | 'claudeConfigDir' | 'codexHome'>;
    /** Engram's first trace in this home (ISO); nothing older is caught up. */
    since: string;
    /** A session to leave alone (the one whose job is running: recorded already). */
    except?: string;
    now: () => Date;
    log: Logger;
    limit?: number;
  },
): CatchUpReport {
  if (options.agent !== 'claude' && options.agent !== 'codex') return { sessions: [], remaining: 0 };
  const since = Date.parse(options.since) - SINCE_MARGIN_MS;
  const limit = options.limit ?? CATCH_UP_LIMIT;
  const agent = options.agent;
  const unknown: Array<{ path: string; id: string }> = [];
  for (const { path } of discoverTranscripts({ env: options.env, match: repositoryMatch(tapeLocation(options.cwd, options.env.home).root), agent })) {
    // Subagent files belong to their parent session, which is recorded (or caught up) as a whole.
    if (path.includes(`${sep}subagents${sep}`)) continue;
    const id = sessionIdFromPath(path, agent);
    if (!id || id === options.except || store.sessions.get(id)) continue;
    try {
      if (statSync(path).mtimeMs < since) continue;
    } catch {
      continue;
    }
    unknown.push({ path, id });
  }
  const report: CatchUpReport = { sessions: [], remaining: Math.max(0, unknown.length - limit) };
  for (const { path, id } of unknown.slice(0, limit)) {
    try {
      const recorded = recordMissedSession(store, path, id, agent, options.now);
      if (recorded) report.sessions.push(recorded);
    } catch (error) {
      options.log.warn('could not catch up a session the hooks missed', { file: path, error });
    }
  }
  return report;
}

/** One missed session: its row, its prompts and its end, in one transaction, and its session-end job. */
function recordMissedSession(store: Store, path: string, id: string, agent: 'claude' | 'codex', now: () => Date): CatchUpReport['sessions'][number] | null {
  const transcript = readTranscript(path, { format: agent });
  if (transcript.sessionId && transcript.sessionId !== id) return null; // A file named after another session: not ours to guess.
  const cwd = transcript.cwd;
  if (!cwd) return null;
  const times = transcript.events.map((event) => event.at).filter((at): at is string => at !== null);
  const first = times[0] ?? now().toISOString();
  const last = times.at(-1) ?? first;
  const context: SessionContext = { sessionId: id, agent, cwd, transcriptPath: path };
  const prompts = transcript.events.filter((event) => event.kind === 'message' && event.role === 'user' && !event.meta && !event.sidechain);
  let stored = 0;
  store.write(() => {
    if (store.sessions.get(id)) return; // Recorded meanwhile (its hooks started working after all).
    recordSessionStart(store, context, 'caught-up', { now: () => new Date(first) });
    prompts.forEach((prompt, index) => {
      if (prompt.kind !== 'message') return;
      const at = prompt.at ?? first;
      // A key per position: a second catch-up of the same session (it cannot happen: the session is known by then)
      // would still store each prompt once.
      if (recordPrompt(store, context, { text: prompt.text, key: `catch-up:${index}` }, { now: () => new Date(at) }).stored) stored++;
    });
    recordSessionEnd(store, context, 'caught-up', { now: () => new Date(last) });
    store.jobs.enqueue('session-end', id, { transcript_path: path, agent, caught_up: true }, now().toISOString());
  });
  return { id, agent, prompts: stored, transcript_path: path };
}
