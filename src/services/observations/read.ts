import * as z from 'zod';
import { EngramError, type LearnedBy, type Session, type StatusVisibility, type Store } from '../../core/index.js';
import type { SearchEngine, SearchMode } from '../recall/index.js';
import { canonicalProject } from './projects.js';
import { goScope } from './rules.js';
import { clamp } from './sessions.js';
import { observationView, type ObservationView } from './view.js';

/** Recent observations, context and search default to this many rows (the Go engram's MaxContextResults). */
export const CONTEXT_LIMIT = 20;
/** `mem_search` returns at most this many results (the Go engram's MaxSearchResults). */
export const SEARCH_MAX = 20;

/**
 * Which review states the reads below show (services/governance): active engrams, and the pending ones a caller learned
 * itself when it asks — the agent's own saves (`pendingLearnedBy: ['agent']`), marked pending, so an agent finds what
 * it just saved while hooks never inject it.
 */
export interface ReadOptions {
  visible?: StatusVisibility;
}

const ACTIVE: StatusVisibility = { statuses: ['active'] };

/** What an actor who learns as `learnedBy` reads: active engrams and its own pending ones. */
export const visibleTo = (learnedBy: LearnedBy): StatusVisibility => ({ statuses: ['active'], pendingLearnedBy: [learnedBy] });

/**
 * One observation by id, unless it is unknown or soft-deleted (`mem_get_observation`, `GET /observations/{id}`),
 * whatever its review status: asked for by id, it is shown with its status.
 */
export function getObservation(store: Store, id: number): ObservationView {
  const engram = store.read(() => store.engrams.get(id));
  if (!engram || engram.deleted_at !== null) throw new EngramError('NOT_FOUND', `Observation #${id} not found`, { details: { id } });
  return observationView(engram);
}

export const RecentObservationsSchema = z.strictObject({
  project: z.string().optional(),
  scope: z.string().optional(),
  limit: z.number().int().optional(),
});
export type RecentObservationsInput = z.infer<typeof RecentObservationsSchema>;

/** The newest live observations, optionally of one project and scope (`GET /observations/recent`). */
export function recentObservations(store: Store, input: RecentObservationsInput, options: ReadOptions = {}): ObservationView[] {
  return store.read(() => {
    const project = input.project?.trim() ? (canonicalProject(store, input.project) ?? undefined) : undefined;
    return store.observations
      .recent({
        ...(project !== undefined ? { project } : {}),
        ...(input.scope?.trim() ? { scope: goScope(input.scope) } : {}),
        limit: clamp(input.limit, CONTEXT_LIMIT, 500),
        visible: options.visible ?? ACTIVE,
      })
      .map(observationView);
  });
}

export const TimelineSchema = z.strictObject({
  observation_id: z.number().int().positive(),
  before: z.number().int().optional(),
  after: z.number().int().optional(),
});
export type TimelineInput = z.infer<typeof TimelineSchema>;

/** The Go engram's `TimelineResult`. */
export interface TimelineResult {
  focus: ObservationView;
  before: ObservationView[];
  after: ObservationView[];
  session_info: Session | null;
  total_in_range: number;
}

/**
 * What was saved around one observation (`mem_timeline`, `GET /timeline`): up to `before` (5) earlier and `after` (5)
 * later live observations of its session, in order — or, for an engram saved in no session, of its project and
 * scope. Soft-deleted rows are invisible, the focus included.
 */
export function timeline(store: Store, input: TimelineInput, options: ReadOptions = {}): TimelineResult {
  return store.read(() => {
    const focus = store.engrams.get(input.observation_id);
    if (!focus || focus.deleted_at !== null) {
      throw new EngramError('NOT_FOUND', `observation #${input.observation_id} not found`, { details: { id: input.observation_id } });
    }
    const { before, after, total } = store.observations.neighbours(focus, clamp(input.before, 5, 100), clamp(input.after, 5, 100), options.visible ?? ACTIVE);
    return {
      focus: observationView(focus),
      before: before.map(observationView),
      after: after.map(observationView),
      session_info: focus.session_id ? (store.sessions.get(focus.session_id) ?? null) : null,
      total_in_range: total,
    };
  });
}

export const ContextSchema = z.strictObject({
  project: z.string().optional(),
  scope: z.string().optional(),
  limit: z.number().int().optional(),
  /** Observations as `[type] **title**` lines only (about a fifth of the tokens). */
  compact: z.boolean().optional(),
});
export type ContextInput = z.infer<typeof ContextSchema>;

/** A review status as the texts show it: `pending review`, `rejected`, `deprecated`. */
export const statusLabel = (status: string): string => (status === 'pending' ? 'pending review' : status);

/** A string cut to `max` characters with `...`, as the Go engram previews. */
export const preview = (text: string, max: number): string => {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max).join('')}...`;
};

/**
 * The Go engram's context blob (`mem_context`, `GET /context`): recent sessions (5), prompts (10) and observations
 * (`limit`, 20) as markdown, or '' when there is none of them.
 */
export function formatContext(store: Store, input: ContextInput, options: ReadOptions = {}): string {
  return store.read(() => {
    const project = input.project?.trim() ? (canonicalProject(store, input.project) ?? undefined) : undefined;
    const sessions = store.observations.recentSessions(project, 5);
    const prompts = store.observations.recentPrompts(project, 10);
    const observations = store.observations.recent({
      ...(project !== undefined ? { project } : {}),
      ...(input.scope?.trim() ? { scope: goScope(input.scope) } : {}),
      limit: clamp(input.limit, CONTEXT_LIMIT, 500),
      visible: options.visible ?? ACTIVE,
    });
    if (sessions.length === 0 && prompts.length === 0 && observations.length === 0) return '';
    const lines = ['## Memory from Previous Sessions', ''];
    if (sessions.length > 0) {
      lines.push('### Recent Sessions');
      for (const session of sessions) {
        const summary = session.summary ? `: ${preview(session.summary, 200)}` : '';
        lines.push(`- **${session.project ?? ''}** (${session.started_at})${summary} [${session.observation_count} observations]`);
      }
      lines.push('');
    }
    if (prompts.length > 0) {
      lines.push('### Recent User Prompts');
      for (const prompt of prompts) lines.push(`- ${prompt.created_at}: ${preview(prompt.content, 200)}`);
      lines.push('');
    }
    if (observations.length > 0) {
      lines.push('### Recent Observations');
      for (const engram of observations.map(observationView)) {
        const mark = engram.status === 'active' ? '' : ` (${statusLabel(engram.status)})`;
        lines.push(input.compact ? `- [${engram.type}] **${engram.title}**${mark}` : `- [${engram.type}] **${engram.title}**${mark}: ${preview(engram.content, 300)}`);
      }
      lines.push('');
    }
    return `${lines.join('\n')}\n`;
  });
}

/** Counts as the Go engram reports them (`mem_stats`, `GET /stats`). */
export function observationStats(store: Store): ReturnType<Store['observations']['stats']> {
  return store.read(() => store.observations.stats());
}

export const SearchObservationsSchema = z.strictObject({
  query: z.string(),
  type: z.string().optional(),
  project: z.string().optional(),
  scope: z.string().optional(),
  limit: z.number().int().optional(),
});
export type SearchObservationsInput = z.infer<typeof SearchObservationsSchema>;

/** One search result: the observation, the fused score (higher is better) and each signal's rank. */
export interface ObservationHit extends ObservationView {
  score: number;
  ranks: { bm25: number | null; vector: number | null };
}

/** What {@link searchObservations} found, and how. */
export interface ObservationSearch {
  results: ObservationHit[];
  mode: SearchMode;
  /** Why nothing was searched (a query of stop words), or null. */
  abstained: string | null;
  degraded: string | null;
}

/** Candidates fetched per result wanted when type or scope filters are applied after ranking. */
const FILTER_OVERFETCH = 5;

/**
 * Search over observations (`mem_search`, `GET /search`) with the same hybrid engine as every other search — so it
 * finds lessons and observations alike, by meaning as well as words — filtered by type, project and scope, at most
 * 20 results, of the review states `visible` names (active unless asked). An empty query lists the most recent
 * observations instead (as the Go engram does).
 */
export async function searchObservations(
  store: Store,
  engine: Pick<SearchEngine, 'search'>,
  input: SearchObservationsInput,
  options: ReadOptions & { mode?: SearchMode } = {},
): Promise<ObservationSearch> {
  const visible = options.visible ?? ACTIVE;
  const limit = clamp(input.limit, 10, SEARCH_MAX);
  const kind = input.type?.trim() || undefined;
  const scope = input.scope?.trim() ? goScope(input.scope) : undefined;
  const mode = options.mode ?? 'hybrid';
  const project = input.project?.trim() ? (store.read(() => canonicalProject(store, input.project)) ?? undefined) : undefined;
  if (input.query.trim() === '') {
    const rows = store.read(() =>
      store.observations.recent({ ...(project !== undefined ? { project } : {}), ...(scope ? { scope } : {}), ...(kind ? { kind } : {}), limit, visible }),
    );
    return { results: rows.map((engram) => ({ ...observationView(engram), score: 0, ranks: { bm25: null, vector: null } })), mode, abstained: null, degraded: null };
  }
  const filtered = kind !== undefined || scope !== undefined;
  const response = await engine.search({
    query: input.query,
    mode,
    topK: filtered ? Math.min(100, limit * FILTER_OVERFETCH) : limit,
    statuses: visible.statuses,
    ...(visible.pendingLearnedBy?.length ? { pendingLearnedBy: visible.pendingLearnedBy } : {}),
    ...(project !== undefined ? { scope: { project, includePersonal: false } } : {}),
  });
  const results = response.results
    .filter((hit) => (kind === undefined || hit.engram.kind === kind) && (scope === undefined || hit.engram.scope === scope))
    .slice(0, limit)
    .map((hit) => ({ ...observationView(hit.engram), score: hit.score, ranks: hit.ranks }));
  return { results, mode: response.mode, abstained: response.abstained, degraded: response.degraded };
}
