import {
  EngramError,
  normalizeCategory,
  normalizeProject,
  normalizeTags,
  type Engram,
  type EngramFilter,
  type EngramStatus,
  type LearnedBy,
  type Liveness,
  type Scope,
  type Store,
} from '../../core/index.js';
import { freshness, type GovernancePolicy } from '../governance/index.js';

/** An engram reference from a caller: its numeric id or its uid. */
export type EngramRef = number | string;

/**
 * Finds an engram by id or uid. Soft-deleted engrams are not found unless asked for, so every command treats a
 * deleted engram as gone.
 */
export function resolveEngram(store: Store, ref: EngramRef, options: { includeDeleted?: boolean } = {}): Engram {
  const engram = typeof ref === 'number' ? store.engrams.get(ref) : store.engrams.getByUid(ref);
  const label = typeof ref === 'number' ? `engram ${ref}` : `engram with uid ${ref}`;
  if (!engram) throw new EngramError('NOT_FOUND', `${label} does not exist`, { details: { ref } });
  if (engram.deleted_at !== null && !options.includeDeleted) {
    throw new EngramError('NOT_FOUND', `${label} was deleted at ${engram.deleted_at}`, { details: { ref } });
  }
  return engram;
}

/** Reads one engram. */
export function getEngram(store: Store, ref: EngramRef, options: { includeDeleted?: boolean } = {}): Engram {
  return store.read(() => resolveEngram(store, ref, options));
}

/** Filters a caller may give to {@link listEngrams}; raw values are normalised like stored ones. */
export interface ListOptions {
  category?: string;
  tags?: string[] | string;
  /** A project name, or `null` for engrams without one. */
  project?: string | null;
  scope?: Scope;
  pinned?: boolean;
  /** Review states to list. @default ['active'] */
  statuses?: readonly EngramStatus[];
  /** The older flag, kept for callers that use it: `exclude` = active, `include` = active and deprecated, `only` = deprecated. Ignored when `statuses` is given. */
  deprecated?: 'exclude' | 'include' | 'only';
  learnedBy?: readonly LearnedBy[];
  /** Pending engrams learned this way are listed too (the agent's own saves, `['agent']`, for its own reads). */
  pendingLearnedBy?: readonly LearnedBy[];
  liveness?: readonly Liveness[];
  includeDeleted?: boolean;
  /** Only engrams past their decay under this policy at this time (what review lists as stale). */
  stale?: { policy: GovernancePolicy; now: Date };
  /** @default 50 */
  limit?: number;
  /** @default 0 */
  offset?: number;
  /** Keyset paging: the page right after this engram id (`offset` is then only reported back, as the page's position). */
  after?: number;
  /** Keyset paging: the page right before this engram id. */
  before?: number;
}

/** A page of engrams plus the total that match. */
export interface EngramPage {
  engrams: Engram[];
  total: number;
  limit: number;
  offset: number;
}

/** Lists engrams in id order: a page at `offset`, or (keyset) right after or before an id. */
export function listEngrams(store: Store, options: ListOptions = {}): EngramPage {
  const limit = options.limit ?? 50;
  const offset = options.offset ?? 0;
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
    throw new EngramError('INVALID_INPUT', `limit must be an integer from 1 to 10000, got ${limit}`);
  }
  if (!Number.isInteger(offset) || offset < 0) {
    throw new EngramError('INVALID_INPUT', `offset must be a non-negative integer, got ${offset}`);
  }
  const statuses: readonly EngramStatus[] =
    options.statuses ?? (options.deprecated === 'only' ? ['deprecated'] : options.deprecated === 'include' ? ['active', 'deprecated'] : ['active']);
  if (statuses.length === 0) throw new EngramError('INVALID_INPUT', 'give at least one status to list');
  const filter: EngramFilter = { limit, offset, statuses };
  if (options.learnedBy !== undefined) filter.learnedBy = options.learnedBy;
  if (options.pendingLearnedBy?.length) filter.pendingLearnedBy = options.pendingLearnedBy;
  if (options.liveness !== undefined) filter.liveness = options.liveness;
  if (options.category !== undefined) filter.category = normalizeCategory(options.category);
  if (options.tags !== undefined) filter.tags = normalizeTags(options.tags);
  if (options.project !== undefined) filter.project = options.project === null ? null : normalizeProject(options.project);
  if (options.scope !== undefined) filter.scope = options.scope;
  if (options.pinned !== undefined) filter.pinned = options.pinned;
  if (options.includeDeleted) filter.includeDeleted = true;
  if (options.stale) filter.staleCutoffs = staleCutoffs(options.stale.policy, options.stale.now);
  if (options.after !== undefined && options.before !== undefined) throw new EngramError('INVALID_INPUT', 'give after or before, not both');
  for (const [name, value] of [['after', options.after], ['before', options.before]] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) throw new EngramError('INVALID_INPUT', `${name} must be an engram id, got ${value}`);
  }
  if (options.after !== undefined) filter.afterId = options.after;
  if (options.before !== undefined) filter.beforeId = options.before;
  const page = store.read(() => store.engrams.list(filter));
  return { ...page, limit, offset };
}

/** Per kind, the newest "last confirmed or useful" time that is stale at `now` (see governance staleAfter). */
function staleCutoffs(policy: GovernancePolicy, now: Date): NonNullable<EngramFilter['staleCutoffs']> {
  const fresh = freshness(policy, now);
  const cutoff = (kind: string): string | null => {
    const decay = fresh.decayMs(kind);
    return decay === null ? null : new Date(now.getTime() - decay).toISOString();
  };
  const byKind: Record<string, string | null> = {};
  for (const kind of Object.keys(policy.decay)) if (kind !== 'default') byKind[kind] = cutoff(kind);
  // A kind not in the map decays like `default`.
  return { byKind, otherwise: cutoff('default') };
}

/** What the engrams of a store are filed under, with counts: the choices of a filter (the viewer's Engrams screen). */
export interface EngramFacets {
  categories: Array<{ value: string; count: number }>;
  projects: Array<{ value: string | null; count: number }>;
  tags: Array<{ value: string; count: number }>;
  statuses: Array<{ value: EngramStatus; count: number }>;
}

/** Facets by store, with the search generation they were counted at (it moves on every change of a counted column). */
const facetCache = new WeakMap<Store, { key: string; facets: EngramFacets }>();

/** Count DESC, then value (null first, as SQLite orders). */
const byCount = <T extends string | null>(counts: Map<T, number>, limit = Infinity): Array<{ value: T; count: number }> =>
  [...counts.entries()]
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || (a.value === b.value ? 0 : a.value === null ? -1 : b.value === null ? 1 : a.value < b.value ? -1 : 1))
    .slice(0, limit);

/**
 * Counts of live (not soft-deleted) engrams by category, project, status and tag (the 200 most used tags). One pass
 * over the table groups by the four columns at once (tags as stored, a sorted JSON array, so each distinct tag set is
 * parsed once, not every row); the answer is kept until the store's search generation moves, which every insert,
 * delete and change of these columns does.
 */
export function engramFacets(store: Store): EngramFacets {
  return store.read(() => {
    const state = store.db.prepare('SELECT store_uid, generation FROM search_state WHERE id = 1').get() as { store_uid: string; generation: number } | undefined;
    const key = state ? `${state.store_uid}:${state.generation}` : '';
    const cached = facetCache.get(store);
    if (cached && key !== '' && cached.key === key) return cached.facets;
    const rows = store.db
      .prepare('SELECT category, project, status, tags, count(*) AS n FROM engrams WHERE deleted_at IS NULL GROUP BY category, project, status, tags')
      .raw()
      .all() as Array<[string, string | null, EngramStatus, string, number]>;
    const categories = new Map<string, number>();
    const projects = new Map<string | null, number>();
    const statuses = new Map<EngramStatus, number>();
    const tags = new Map<string, number>();
    const parsed = new Map<string, string[]>();
    for (const [category, project, status, tagText, n] of rows) {
      categories.set(category, (categories.get(category) ?? 0) + n);
      projects.set(project, (projects.get(project) ?? 0) + n);
      statuses.set(status, (statuses.get(status) ?? 0) + n);
      let list = parsed.get(tagText);
      if (!list) parsed.set(tagText, (list = [...new Set(JSON.parse(tagText) as string[])]));
      for (const tag of list) tags.set(tag, (tags.get(tag) ?? 0) + n);
    }
    const facets: EngramFacets = { categories: byCount(categories), projects: byCount(projects), tags: byCount(tags, 200), statuses: byCount(statuses) };
    facetCache.set(store, { key, facets });
    return facets;
  });
}
