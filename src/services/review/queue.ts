/**
 * What a person reviews (`engram review`, later the viewer's Review screen): engrams waiting for a decision — pending
 * ones, active ones past their freshness, active ones whose code is gone — each with the evidence it was learned from,
 * the engrams it contradicts and its near-duplicates. Read-only: the decisions are services/gate.
 * @module
 */
import { EngramError, type Engram, type EngramStatus, type Store } from '../../core/index.js';
import {
  changedColumns,
  contentTerms,
  entryBySeq,
  freshness,
  governancePolicy,
  isStale,
  listAudit,
  parseDecay,
  sourcesOf,
  staleAfter,
  textIndexOf,
  undoneBy,
  type GovernancePolicy,
  type StoredSource,
  type TextIndex,
} from '../governance/index.js';
import { DEDUP } from '../learn/index.js';
import { resolveEngram, type EngramRef } from '../memory/index.js';

/** Why an engram is in the queue. */
export type ReviewReason = 'pending' | 'conflict' | 'stale' | 'code-gone';

/** One side of a conflict, as review shows it. */
export interface ConflictView {
  conflict_id: number;
  other_id: number;
  other_text: string;
  other_status: EngramStatus | null;
  method: 'rules' | 'llm';
  signal: string;
  reason: string;
  status: 'open' | 'resolved';
  resolution: string | null;
}

/** One item of the review queue. */
export interface ReviewItem {
  engram: Engram;
  reasons: ReviewReason[];
  /** When it turned (or turns) stale; null when it never does. */
  stale_after: string | null;
  /** Where it was learned: the quote, session, tape and moment (extracted engrams), newest source first. */
  evidence: Array<Pick<StoredSource, 'session_id' | 'tape_id' | 'event_from' | 'event_to' | 'quote' | 'files' | 'spans'>>;
  conflicts: ConflictView[];
  /** Live engrams saying nearly the same (word overlap ≥ 0.5): candidates to reject as already known. */
  near_duplicates: Array<{ id: number; text: string; status: EngramStatus; similarity: number }>;
}

/** The queue and how many items it has in all. */
export interface ReviewQueue {
  items: ReviewItem[];
  total: number;
  counts: Record<ReviewReason, number>;
  offset: number;
  limit: number;
}

/** Word overlap from which review shows another engram as a near-duplicate (merging is at 0.7, services/learn). */
export const NEAR_DUPLICATE_OVERLAP = 0.5;

/** Conflicts of an engram, both directions, open first. */
export function conflictsOf(store: Store, engramId: number): ConflictView[] {
  const rows = store.db
    .prepare(
      `SELECT c.*, e.text AS other_text, e.status AS other_status FROM engram_conflicts c
         LEFT JOIN engrams e ON e.id = CASE WHEN c.engram_id = @id THEN c.other_id ELSE c.engram_id END
        WHERE c.engram_id = @id OR c.other_id = @id ORDER BY c.status = 'open' DESC, c.id`,
    )
    .all({ id: engramId }) as Array<{
    id: number;
    engram_id: number;
    other_id: number;
    method: 'rules' | 'llm';
    signal: string;
    reason: string;
    status: 'open' | 'resolved';
    resolution: string | null;
    other_text: string | null;
    other_status: EngramStatus | null;
  }>;
  return rows.map((row) => ({
    conflict_id: row.id,
    other_id: row.engram_id === engramId ? row.other_id : row.engram_id,
    other_text: row.other_text ?? '(forgotten)',
    other_status: row.other_status,
    method: row.method,
    signal: row.signal,
    reason: row.reason,
    status: row.status,
    resolution: row.resolution,
  }));
}

/**
 * Live engrams (pending or active, in scope) saying nearly the same as `engram`: word overlap |A∩B| / min(|A|,|B|) ≥
 * {@link NEAR_DUPLICATE_OVERLAP} over content words, the five closest (then lowest id). Found through the store's text
 * index (services/governance): only engrams that can reach the bar are visited, each with the exact count of words
 * shared, and the bar rises to the fifth best found.
 */
function nearDuplicates(store: Store, engram: Engram, index: TextIndex): ReviewItem['near_duplicates'] {
  const mine = index.wordsOf(engram.id) ?? contentTerms(engram.text);
  if (mine.length < DEDUP.minWords) return [];
  const top = index
    .nearestByWords(mine, {
      project: engram.project,
      exclude: engram.id,
      minWords: DEDUP.minWords,
      threshold: NEAR_DUPLICATE_OVERLAP,
      limit: 5,
      score: (shared, smaller) => Math.round((shared / smaller) * 100) / 100,
    })
    .map((item) => ({ id: item.id, status: item.status, similarity: item.score }));
  const texts = new Map(store.engrams.getMany(top.map((item) => item.id)).map((other) => [other.id, other.text]));
  return top.map((item) => ({ id: item.id, text: texts.get(item.id) ?? '', status: item.status, similarity: item.similarity }));
}

/**
 * A SQL test true for every active row that may be stale now (and some that are not): the date of the later of its
 * confirmation (creation when none) and its last match is at most two days after its kind's cut-off. Dates are
 * compared as the first ten characters of ISO-8601 texts, so an offset (up to ±14 h) never hides a stale row; the
 * exact test is `isStale`, on the rows this returns.
 */
function mayBeStaleSql(policy: GovernancePolicy, now: Date): { sql: string; params: Array<string | null> } {
  const cutoff = (decay: string | undefined): string | null => {
    const ms = parseDecay(decay ?? '1y');
    return ms === null ? null : new Date(now.getTime() - ms + 2 * 86_400_000).toISOString().slice(0, 10);
  };
  const kinds = Object.keys(policy.decay).filter((kind) => kind !== 'default');
  const params: Array<string | null> = [];
  let sql = 'CASE kind';
  for (const kind of kinds) {
    sql += ' WHEN ? THEN ?';
    params.push(kind, cutoff(policy.decay[kind]));
  }
  sql += ' ELSE ? END';
  params.push(cutoff(policy.decay.default));
  return { sql: `substr(max(coalesce(confirmed_at, created_at), coalesce(last_matched_at, '')), 1, 10) <= ${sql}`, params };
}

/** Options for {@link reviewQueue}. */
export interface ReviewOptions {
  policy?: GovernancePolicy;
  now?: Date;
  /** Only these reasons. */
  reasons?: readonly ReviewReason[];
  /** Only engrams of this project (and personal ones). */
  project?: string;
  /** @default 50 */
  limit?: number;
  /** Items of the queue to skip (its order is stable: reason, then age). @default 0 */
  offset?: number;
}

type QueueRow = Pick<Engram, 'id' | 'kind' | 'liveness' | 'confirmed_at' | 'last_matched_at' | 'created_at'>;

/** Oldest first, then by id. ISO-8601 times order as plain strings (localeCompare costs ~1 µs a call). */
const byAge = (a: Pick<QueueRow, 'id' | 'created_at'>, b: Pick<QueueRow, 'id' | 'created_at'>): number =>
  (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0) || a.id - b.id;

/** Pending engrams in no open conflict read at once and sorted here, up to this many; more are paged by SQL. */
const READ_WHOLE = 5_000;

/**
 * A slice of the pending engrams in no open conflict, oldest first: `count` of them after `from`. A short run is read
 * whole (through the status index) and sorted here; a long one is walked in age order through the created_at index,
 * which stops once the page is full (its rows are (created_at, id) ordered: the rowid ends every index entry).
 */
function pendingPage(store: Store, project: string | null, conflicted: ReadonlySet<number>, size: number, from: number, count: number): QueueRow[] {
  const scope = '(? IS NULL OR project IS NULL OR project = ?)';
  const outside = 'id NOT IN (SELECT value FROM json_each(?))';
  const excluded = JSON.stringify([...conflicted]);
  if (size <= READ_WHOLE) {
    return (
      store.db
        .prepare(`SELECT id, created_at FROM engrams WHERE status = 'pending' AND deleted_at IS NULL AND ${scope} AND ${outside}`)
        .all(project, project, excluded) as QueueRow[]
    )
      .sort(byAge)
      .slice(from, from + count);
  }
  return store.db
    .prepare(
      `SELECT id, created_at FROM engrams INDEXED BY engrams_created
        WHERE status = 'pending' AND deleted_at IS NULL AND ${scope} AND ${outside} ORDER BY created_at, id LIMIT ? OFFSET ?`,
    )
    .all(project, project, excluded, count, from) as QueueRow[];
}

/**
 * The review queue: pending engrams (contradictions first), then code gone, then stale; oldest first within each.
 * Candidates are judged on a few columns; whole engrams, evidence and near-duplicates are read for the page only.
 */
export function reviewQueue(store: Store, options: ReviewOptions = {}): ReviewQueue {
  const policy = options.policy ?? governancePolicy();
  const fresh = freshness(policy, options.now ?? new Date());
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new EngramError('INVALID_INPUT', `limit must be an integer from 1 to 1000, got ${limit}`);
  const offset = options.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0) throw new EngramError('INVALID_INPUT', `offset must be a non-negative integer, got ${offset}`);
  const project = options.project ?? null;
  const wants = (reasons: readonly ReviewReason[]): boolean => !options.reasons || reasons.some((reason) => options.reasons?.includes(reason));
  return store.read(() => {
    // Engrams in an open conflict, read once: a per-row EXISTS with `engram_id = id OR other_id = id` scanned every
    // open conflict for every candidate (minutes at 100k pending engrams).
    const conflicted = new Set<number>();
    for (const pair of store.db.prepare("SELECT engram_id, other_id FROM engram_conflicts WHERE status = 'open'").raw().all() as Array<[number, number]>) {
      conflicted.add(pair[0]);
      conflicted.add(pair[1]);
    }
    const scope = '(? IS NULL OR project IS NULL OR project = ?)';
    // The queue is four runs, each oldest first: pending engrams in an open conflict, other pending ones, active ones
    // whose code is gone, stale ones. Only the runs a page reaches are read; the long one (pending engrams, all of
    // them after an import) is counted and paged in SQL rather than read whole (that was most of a page's time at
    // 100k engrams).
    const conflictedPending: QueueRow[] =
      conflicted.size > 0 && wants(['pending', 'conflict'])
        ? (
            store.db
              .prepare(`SELECT id, created_at FROM engrams WHERE id IN (SELECT value FROM json_each(?)) AND deleted_at IS NULL AND status = 'pending' AND ${scope}`)
              .all(JSON.stringify([...conflicted]), project, project) as QueueRow[]
          ).sort(byAge)
        : [];
    let plainPending = 0;
    if (wants(['pending'])) {
      const pending = (
        project === null
          ? store.db.prepare("SELECT count(*) FROM engrams WHERE status = 'pending' AND deleted_at IS NULL").pluck().get()
          : store.db.prepare(`SELECT count(*) FROM engrams WHERE status = 'pending' AND deleted_at IS NULL AND ${scope}`).pluck().get(project, project)
      ) as number;
      plainPending = pending - conflictedPending.length;
    }
    // Active engrams whose code is gone or that may be stale (SQL's test is looser than isStale, which decides).
    const { sql: mayBeStale, params: staleParams } = mayBeStaleSql(policy, fresh.now);
    const gone: Array<{ row: QueueRow; reasons: ReviewReason[] }> = [];
    const stale: Array<{ row: QueueRow; reasons: ReviewReason[] }> = [];
    for (const row of store.db
      .prepare(
        `SELECT id, kind, liveness, confirmed_at, last_matched_at, created_at FROM engrams
          WHERE status = 'active' AND deleted_at IS NULL AND ${scope} AND (liveness = 'gone' OR ${mayBeStale})`,
      )
      .all(project, project, ...staleParams) as QueueRow[]) {
      const reasons: ReviewReason[] = [];
      if (row.liveness === 'gone') reasons.push('code-gone');
      if (isStale(row, fresh)) reasons.push('stale');
      if (reasons.length && wants(reasons)) (row.liveness === 'gone' ? gone : stale).push({ row, reasons });
    }
    gone.sort((a, b) => byAge(a.row, b.row));
    stale.sort((a, b) => byAge(a.row, b.row));
    const counts: Record<ReviewReason, number> = {
      pending: conflictedPending.length + plainPending,
      conflict: conflictedPending.length,
      'code-gone': gone.length,
      stale: gone.filter((item) => item.reasons.includes('stale')).length + stale.length,
    };
    const total = conflictedPending.length + plainPending + gone.length + stale.length;
    // The page, run by run.
    const page: Array<{ row: QueueRow; reasons: ReviewReason[] }> = [];
    let skip = offset;
    const take = (size: number, read: (from: number, count: number) => Array<{ row: QueueRow; reasons: ReviewReason[] }>): void => {
      if (page.length >= limit) return;
      if (skip >= size) {
        skip -= size;
        return;
      }
      page.push(...read(skip, Math.min(limit - page.length, size - skip)));
      skip = 0;
    };
    take(conflictedPending.length, (from, count) => conflictedPending.slice(from, from + count).map((row) => ({ row, reasons: ['pending', 'conflict'] })));
    take(plainPending, (from, count) => pendingPage(store, project, conflicted, plainPending, from, count).map((row) => ({ row, reasons: ['pending'] })));
    take(gone.length, (from, count) => gone.slice(from, from + count));
    take(stale.length, (from, count) => stale.slice(from, from + count));
    const engrams = new Map(store.engrams.getMany(page.map((item) => item.row.id)).map((engram) => [engram.id, engram]));
    const index = page.length ? textIndexOf(store) : null;
    const items = page.map(({ row, reasons }): ReviewItem => {
      const engram = engrams.get(row.id) as Engram;
      const after = staleAfter(engram, fresh);
      return {
        engram,
        reasons,
        stale_after: after ? after.toISOString() : null,
        evidence: sourcesOf(store, engram.id)
          .reverse()
          .map(({ session_id, tape_id, event_from, event_to, quote, files, spans }) => ({ session_id, tape_id, event_from, event_to, quote, files, spans })),
        conflicts: conflictsOf(store, engram.id),
        near_duplicates: index ? nearDuplicates(store, engram, index) : [],
      };
    });
    return { items, total, counts, offset, limit };
  });
}

/** Conflicts across the store (`engram conflicts`): open ones by default, each with both sides. */
export function listConflicts(store: Store, options: { all?: boolean; limit?: number } = {}): Array<ConflictView & { engram_id: number; engram_text: string; engram_status: EngramStatus | null; created_at: string; resolved_at: string | null }> {
  return store.read(() =>
    (
      store.db
        .prepare(
          `SELECT c.*, a.text AS engram_text, a.status AS engram_status, b.text AS other_text, b.status AS other_status
             FROM engram_conflicts c LEFT JOIN engrams a ON a.id = c.engram_id LEFT JOIN engrams b ON b.id = c.other_id
            WHERE (? OR c.status = 'open') ORDER BY c.id DESC LIMIT ?`,
        )
        .all(options.all ? 1 : 0, options.limit ?? 100) as Array<{
        id: number;
        engram_id: number;
        other_id: number;
        method: 'rules' | 'llm';
        signal: string;
        reason: string;
        status: 'open' | 'resolved';
        resolution: string | null;
        created_at: string;
        resolved_at: string | null;
        engram_text: string | null;
        engram_status: EngramStatus | null;
        other_text: string | null;
        other_status: EngramStatus | null;
      }>
    ).map((row) => ({
      conflict_id: row.id,
      engram_id: row.engram_id,
      engram_text: row.engram_text ?? '(forgotten)',
      engram_status: row.engram_status,
      other_id: row.other_id,
      other_text: row.other_text ?? '(forgotten)',
      other_status: row.other_status,
      method: row.method,
      signal: row.signal,
      reason: row.reason,
      status: row.status,
      resolution: row.resolution,
      created_at: row.created_at,
      resolved_at: row.resolved_at,
    })),
  );
}

/** One step of an engram's life (`engram history`). */
export interface HistoryStep {
  token: string;
  at: string;
  actor: string;
  via: string;
  op: string;
  reason: string | null;
  /** Columns of this engram that changed, before → after (created: before null; removed: after null). */
  fields: Record<string, { before: unknown; after: unknown }>;
  /** Other rows the operation changed for it (conflicts, sources, statistics), by table. */
  related: Record<string, number>;
  undone_by: string | null;
  /** This step undid the operation with this token. */
  undoes: string | null;
}

/** An engram's life from the audit log, oldest first; works for forgotten engrams too (by id). */
export function engramHistory(store: Store, ref: EngramRef): { id: number; engram: Engram | null; steps: HistoryStep[] } {
  return store.read(() => {
    let id: number;
    let engram: Engram | null = null;
    try {
      engram = resolveEngram(store, ref, { includeDeleted: true });
      id = engram.id;
    } catch (error) {
      if (typeof ref !== 'number') throw error;
      id = ref;
    }
    const entries = listAudit(store, { engramId: id, order: 'asc', limit: 10_000 });
    if (!engram && entries.length === 0) throw new EngramError('NOT_FOUND', `engram ${String(ref)} does not exist and has no history`);
    const steps = entries.map((entry): HistoryStep => {
      const fields: HistoryStep['fields'] = {};
      const related: Record<string, number> = {};
      for (const change of entry.changes) {
        if (change.table === 'engrams' && change.key.id === id) {
          // A row created or removed shows its status and text (and a pin it was created with: pin history starts there).
          const columns =
            change.before === null || change.after === null
              ? ['status', 'text', ...(change.before === null && change.after?.pinned ? ['pinned', 'auto_pinned'] : [])]
              : changedColumns(change);
          for (const column of columns) fields[column] = { before: change.before?.[column] ?? null, after: change.after?.[column] ?? null };
        } else if (change.table !== 'engrams') {
          related[change.table] = (related[change.table] ?? 0) + 1;
        }
      }
      const undone = undoneBy(store, entry.seq);
      const target = entry.undoes !== null ? entryBySeq(store, entry.undoes) : undefined;
      return {
        token: entry.token,
        at: entry.at,
        actor: entry.actor,
        via: entry.via,
        op: entry.op,
        reason: entry.reason,
        fields,
        related,
        undone_by: undone?.token ?? null,
        undoes: target?.token ?? null,
      };
    });
    return { id, engram, steps };
  });
}
