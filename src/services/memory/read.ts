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
  /** @default 50 */
  limit?: number;
  /** @default 0 */
  offset?: number;
}

/** A page of engrams plus the total that match. */
export interface EngramPage {
  engrams: Engram[];
  total: number;
  limit: number;
  offset: number;
}

/** Lists engrams in id order. */
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
  const page = store.read(() => store.engrams.list(filter));
  return { ...page, limit, offset };
}
