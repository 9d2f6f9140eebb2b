import * as z from 'zod';
import { EngramError, sanitizeText, type Session, type SessionWithCount, type Store, type UserPrompt } from '../../core/index.js';
import { canonicalProject } from './projects.js';
import { defaultSessionId } from './rules.js';
import { audited, syncJournal } from '../governance/index.js';
import { prepareObservation, savedResult, storeObservation, type SaveObservationResult, type WriteContext } from './save.js';

/** A prompt longer than this is cut (the store's limit for prompt text). */
export const PROMPT_CHARS = 10_000;

export const StartSessionSchema = z.strictObject({ id: z.string(), project: z.string().optional(), directory: z.string().optional() });
export type StartSessionInput = z.infer<typeof StartSessionSchema>;

const stamp = (context: WriteContext): string => (context.now ?? (() => new Date()))().toISOString();

/** Registers a session (`mem_session_start`, `POST /sessions`); an existing one is left as it is. */
export function startSession(store: Store, input: StartSessionInput, context: WriteContext): { id: string; project: string | null; created: boolean } {
  const id = input.id.trim();
  if (id === '') throw new EngramError('INVALID_INPUT', 'id is required: the session to start');
  const at = stamp(context);
  return store.write(() => {
    const project = canonicalProject(store, input.project?.trim() || context.defaultProject || '', context.defaultProject);
    if (project === null) throw new EngramError('INVALID_INPUT', 'project is required: the project the session works on');
    const { session, created } = store.sessions.ensure(id, { project, cwd: input.directory?.trim() || context.directory || null, at });
    return { id: session.id, project: session.project, created };
  });
}

export const EndSessionSchema = z.strictObject({ id: z.string(), summary: z.string().optional() });
export type EndSessionInput = z.infer<typeof EndSessionSchema>;

/** Marks a session completed (`mem_session_end`, `POST /sessions/{id}/end`), with its summary when one is given. */
export function endSession(store: Store, input: EndSessionInput, context: WriteContext): { id: string; status: 'completed' } {
  const at = stamp(context);
  return store.write(() => {
    if (!store.sessions.get(input.id)) throw new EngramError('NOT_FOUND', `session ${JSON.stringify(input.id)} does not exist`, { details: { id: input.id } });
    store.sessions.end(input.id, null, at);
    const summary = input.summary === undefined ? '' : sanitizeText(input.summary).text.trim();
    if (summary !== '') store.sessions.setSummary(input.id, summary);
    return { id: input.id, status: 'completed' };
  });
}

export const SessionSummarySchema = z.strictObject({ content: z.string(), session_id: z.string().optional(), project: z.string().optional() });
export type SessionSummaryInput = z.infer<typeof SessionSummarySchema>;

/**
 * Saves an end-of-session summary (`mem_session_summary`): as the session's summary (shown in context) and as an
 * observation of type `session_summary` titled "Session summary: <project>", searchable like any other once review
 * lets it be. One transaction and one audited operation (the observation and the session's summary), undone whole.
 */
export function saveSessionSummary(
  store: Store,
  input: SessionSummaryInput,
  context: WriteContext,
): { project: string | null; session_id: string; id: number; saved: SaveObservationResult } {
  if (input.content.trim() === '') throw new EngramError('INVALID_INPUT', 'content is required: the session summary');
  const now = (context.now ?? (() => new Date()))();
  const { result, entry } = audited(
    store,
    (outcome: { stored: ReturnType<typeof storeObservation> }) => ({
      actor: context.actor,
      op: 'session-summary',
      reason: outcome.stored.engram.status === 'pending' ? outcome.stored.engram.status_reason : null,
    }),
    (changes) => {
      const project = canonicalProject(store, input.project?.trim() || context.defaultProject || '', context.defaultProject);
      const sessionId = input.session_id?.trim() || defaultSessionId(project);
      const prepared = prepareObservation(
        { title: `Session summary: ${project ?? ''}`.trim(), content: input.content, type: 'session_summary', session_id: sessionId, ...(project ? { project } : {}) },
        now,
      );
      const stored = storeObservation(store, prepared, context, changes);
      // The session row exists now (the save ensures it): its summary is part of this operation.
      changes.track('sessions', { id: sessionId });
      store.sessions.setSummary(sessionId, observationBody(stored.engram));
      return { project, sessionId, prepared, stored };
    },
    now.toISOString(),
  );
  if (entry) syncJournal(store);
  const saved = savedResult(result.prepared, result.stored, entry?.token ?? null);
  return { project: result.project, session_id: result.sessionId, id: saved.id, saved };
}

/** An engram's whole body as an observation (long detail when it has one). */
const observationBody = (engram: { content: string | null; text: string }): string => engram.content ?? engram.text;

export const SavePromptSchema = z.strictObject({ content: z.string(), session_id: z.string().optional(), project: z.string().optional() });
export type SavePromptInput = z.infer<typeof SavePromptSchema>;

/** Saves a user prompt (`mem_save_prompt`, `POST /prompts`): redacted, cut at 10,000 characters. */
export function savePrompt(store: Store, input: SavePromptInput, context: WriteContext): { id: number; prompt: UserPrompt } {
  if (input.content.trim() === '') throw new EngramError('INVALID_INPUT', 'content is required: the prompt text');
  let content = sanitizeText(input.content).text.trim();
  if (content.length > PROMPT_CHARS) content = `${content.slice(0, PROMPT_CHARS - 15)}... [truncated]`;
  const at = stamp(context);
  return store.write(() => {
    const project = canonicalProject(store, input.project?.trim() || context.defaultProject || '', context.defaultProject);
    const sessionId = input.session_id?.trim() || defaultSessionId(project);
    store.sessions.ensure(sessionId, { project, cwd: context.directory ?? null, at });
    const prompt = store.sessions.addPrompt({ session_id: sessionId, content, project, at });
    return { id: prompt.id, prompt };
  });
}

/** Sessions, most recently active first, with their live observation counts (`GET /sessions/recent`). */
export function recentSessions(store: Store, input: { project?: string | undefined; limit?: number | undefined }): SessionWithCount[] {
  return store.read(() => {
    const project = input.project?.trim() ? (canonicalProject(store, input.project) ?? undefined) : undefined;
    return store.observations.recentSessions(project, clamp(input.limit, 5, 100));
  });
}

/** Recent prompts (`GET /prompts/recent`). */
export function recentPrompts(store: Store, input: { project?: string | undefined; limit?: number | undefined }): UserPrompt[] {
  return store.read(() => {
    const project = input.project?.trim() ? (canonicalProject(store, input.project) ?? undefined) : undefined;
    return store.observations.recentPrompts(project, clamp(input.limit, 20, 200));
  });
}

/**
 * Each whitespace-separated word as a quoted FTS5 string, so operators and punctuation in what people type never
 * reach FTS5's query language ("fix auth:bug" → `"fix" "auth:bug"`).
 */
export function ftsQuery(query: string): string {
  return query
    .split(/\s+/)
    .map((word) => word.replace(/"/g, ''))
    .filter(Boolean)
    .map((word) => `"${word}"`)
    .join(' ');
}

/** Prompts matching every word of a query, best first (`GET /prompts/search`). */
export function searchPrompts(store: Store, input: { q: string; project?: string | undefined; limit?: number | undefined }): UserPrompt[] {
  const query = ftsQuery(input.q);
  if (query === '') throw new EngramError('INVALID_INPUT', 'q parameter is required');
  return store.read(() => {
    const project = input.project?.trim() ? (canonicalProject(store, input.project) ?? undefined) : undefined;
    return store.observations.searchPrompts(query, project, clamp(input.limit, 10, 100));
  });
}

/** A limit: the default when absent or not positive, at most `max`. */
export function clamp(limit: number | undefined, fallback: number, max: number): number {
  if (limit === undefined || !Number.isFinite(limit) || limit <= 0) return fallback;
  return Math.min(Math.floor(limit), max);
}

export type { Session };
