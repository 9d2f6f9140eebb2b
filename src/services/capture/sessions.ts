import { findRepo, isOnlyRedacted, sanitizeText, type Agent, type RedactionKind, type Session, type SessionSighting, type Store } from '../../core/index.js';

/** What every hook event tells us about its session. */
export interface SessionContext {
  sessionId: string;
  agent: Agent;
  cwd: string;
  transcriptPath: string | null;
  model?: string | null;
}

type Clock = () => Date;

/** Prompts are stored for later evaluation and extraction; beyond this length a prompt is pasted data, not intent. */
const PROMPT_STORE_CHARS = 10_000;
/** How much of a prompt is scanned for secrets before truncation. */
const PROMPT_SCAN_CHARS = 1_000_000;
const stamp = (now?: Clock): string => (now ?? (() => new Date()))().toISOString();

/** Turns a hook's view of a session into a sighting, naming the project after the repository's main working tree. */
function sighting(context: SessionContext, at: string, startSource: string | null): SessionSighting {
  const repo = findRepo(context.cwd);
  return {
    id: context.sessionId,
    agent: context.agent,
    project: repo?.name ?? null,
    cwd: context.cwd,
    repo_root: repo?.root ?? null,
    transcript_path: context.transcriptPath,
    model: context.model ?? null,
    start_source: startSource,
    at,
  };
}

/** SessionStart: records (or re-sights, on resume/clear/compact) the session. */
export function recordSessionStart(store: Store, context: SessionContext, source: string | null, options: { now?: Clock } = {}): Session {
  const at = stamp(options.now);
  return store.write(() => store.sessions.upsert(sighting(context, at, source)));
}

/** Result of {@link recordPrompt}. */
export interface PromptRecord {
  stored: boolean;
  /** Why nothing was stored, when nothing was. */
  skipped?: 'disabled' | 'empty' | 'repeat';
  redacted: RedactionKind[];
}

/**
 * UserPromptSubmit: stores the prompt's redacted text. A prompt that is entirely private (or empty once secrets are
 * removed) is not stored at all; the same prompt id seen twice is stored once.
 */
export function recordPrompt(
  store: Store,
  context: SessionContext,
  prompt: { text: string; key: string | null },
  options: { now?: Clock; capture?: boolean } = {},
): PromptRecord {
  const at = stamp(options.now);
  // Redact before truncating, over a window well past the stored length, so a cut never splits a secret.
  const cleaned = sanitizeText(prompt.text.slice(0, PROMPT_SCAN_CHARS));
  const content =
    cleaned.text.length > PROMPT_STORE_CHARS
      ? `${cleaned.text.slice(0, PROMPT_STORE_CHARS)}…[truncated from ${prompt.text.length} characters]`
      : cleaned.text;
  return store.write(() => {
    const session = store.sessions.upsert(sighting(context, at, null));
    if (options.capture === false) return { stored: false, skipped: 'disabled', redacted: cleaned.kinds };
    if (isOnlyRedacted(cleaned.text)) return { stored: false, skipped: 'empty', redacted: cleaned.kinds };
    const stored = store.sessions.insertPrompt({
      session_id: session.id,
      prompt_key: prompt.key,
      content,
      project: session.project,
      at,
    });
    return stored ? { stored, redacted: cleaned.kinds } : { stored, skipped: 'repeat', redacted: cleaned.kinds };
  });
}

/** Stop: counts a finished turn; `turnKey` (the agent's id for the turn) makes a repeat of the same Stop count once. */
export function recordTurnEnd(store: Store, context: SessionContext, options: { now?: Clock; turnKey?: string | null } = {}): Session {
  const at = stamp(options.now);
  return store.write(() => {
    store.sessions.upsert(sighting(context, at, null));
    store.sessions.recordTurn(context.sessionId, at, options.turnKey ?? null);
    return store.sessions.get(context.sessionId) as Session;
  });
}

/** SessionEnd: marks the session ended with the agent's reason. */
export function recordSessionEnd(store: Store, context: SessionContext, reason: string | null, options: { now?: Clock } = {}): Session {
  const at = stamp(options.now);
  return store.write(() => {
    store.sessions.upsert(sighting(context, at, null));
    store.sessions.end(context.sessionId, reason, at);
    return store.sessions.get(context.sessionId) as Session;
  });
}
