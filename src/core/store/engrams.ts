import type { Engram, EngramStatus, LearnedBy, Liveness, Prerequisites, Scope, Source } from '../engram.js';
import { contentHash } from '../engram.js';
import { redactDeep, sanitizeText } from '../redact.js';
import type { Statement } from 'better-sqlite3';
import type { Database } from './database.js';

// node:crypto is loaded when an engram needs a uid (process.getBuiltinModule): a hook that only searches never does.
const randomUUID = (): string => process.getBuiltinModule('node:crypto').randomUUID();

/** An engram row as SQLite returns it. */
interface EngramRow {
  id: number;
  uid: string;
  kind: string;
  title: string | null;
  text: string;
  content: string | null;
  category: string;
  tags: string;
  prerequisites: string | null;
  source: Source;
  source_sessions: string;
  session_id: string | null;
  tool_name: string | null;
  occurrence_count: number;
  times_matched: number;
  last_matched_at: string | null;
  pinned: number;
  auto_pinned: number;
  deprecated: number;
  deprecated_reason: string | null;
  project: string | null;
  scope: Scope;
  topic_key: string | null;
  content_hash: string;
  revision_count: number;
  duplicate_count: number;
  created_at: string;
  updated_at: string;
  last_seen_at: string;
  deleted_at: string | null;
  status: EngramStatus;
  status_reason: string | null;
  learned_by: LearnedBy;
  tier: number | null;
  confirmed_at: string | null;
  liveness: Liveness;
  liveness_at: string | null;
}

/** An engram row as read by SQLite, as an engram (JSON columns parsed, flags as booleans). */
export function engramFromRow(row: unknown): Engram {
  return fromRow(row as EngramRow);
}

function fromRow(row: EngramRow): Engram {
  return {
    id: row.id,
    uid: row.uid,
    kind: row.kind,
    title: row.title,
    text: row.text,
    content: row.content,
    category: row.category,
    tags: JSON.parse(row.tags) as string[],
    prerequisites: row.prerequisites === null ? null : (JSON.parse(row.prerequisites) as Prerequisites),
    source: row.source,
    source_sessions: JSON.parse(row.source_sessions) as string[],
    session_id: row.session_id,
    tool_name: row.tool_name,
    occurrence_count: row.occurrence_count,
    times_matched: row.times_matched,
    last_matched_at: row.last_matched_at,
    pinned: row.pinned === 1,
    auto_pinned: row.auto_pinned === 1,
    deprecated: row.deprecated === 1,
    deprecated_reason: row.deprecated_reason,
    project: row.project,
    scope: row.scope,
    topic_key: row.topic_key,
    content_hash: row.content_hash,
    revision_count: row.revision_count,
    duplicate_count: row.duplicate_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
    last_seen_at: row.last_seen_at,
    deleted_at: row.deleted_at,
    status: row.status,
    status_reason: row.status_reason,
    learned_by: row.learned_by,
    tier: row.tier,
    confirmed_at: row.confirmed_at,
    liveness: row.liveness,
    liveness_at: row.liveness_at,
  };
}

const sanitize = (value: string): string => sanitizeText(value).text;

/** Columns that hold identities, hashes, enums or timestamps: never free text, never rewritten. */
const VERBATIM = new Set<keyof Engram>([
  'uid', 'source', 'scope', 'created_at', 'updated_at', 'last_seen_at', 'last_matched_at', 'deleted_at',
  'status', 'learned_by', 'confirmed_at', 'liveness', 'liveness_at',
]);

/**
 * Converts engram fields to column values. Every text column — free text and identifiers alike — is sanitised here,
 * at the lowest write path, so no caller can store a secret or private span by going around a service; the content
 * hash always follows the stored text.
 */
function toColumns(fields: Partial<Engram>): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  // `deprecated` is the status seen through the old flag: the two are written together, the status winning.
  if (fields.status !== undefined) columns.deprecated = fields.status === 'deprecated' ? 1 : 0;
  else if (fields.deprecated !== undefined) columns.status = fields.deprecated ? 'deprecated' : 'active';
  for (const [key, value] of Object.entries(fields) as Array<[keyof Engram, unknown]>) {
    if (value === undefined || key === 'content_hash') continue; // the hash is derived from text, never taken as given
    if (key === 'deprecated' && fields.status !== undefined) continue;
    if (key === 'text') {
      const text = sanitize(value as string);
      columns.text = text;
      columns.content_hash = contentHash(text);
    } else if (key === 'tags' || key === 'source_sessions') {
      columns[key] = JSON.stringify((value as string[]).map(sanitize));
    } else if (key === 'prerequisites') {
      columns[key] = value === null ? null : JSON.stringify(redactDeep(value));
    } else if (key === 'pinned' || key === 'auto_pinned' || key === 'deprecated') {
      columns[key] = value ? 1 : 0;
    } else if (typeof value === 'string' && !VERBATIM.has(key)) {
      columns[key] = sanitize(value);
    } else {
      columns[key] = value;
    }
  }
  return columns;
}

/** Review columns a new engram may leave to their defaults (active, learned by the user, not about code). */
type ReviewDefaults = 'status' | 'status_reason' | 'learned_by' | 'tier' | 'confirmed_at' | 'liveness' | 'liveness_at';

/** A new engram: everything but the store-assigned id (which may be requested), uid and hash. */
export type NewEngram = Omit<Engram, 'id' | 'uid' | 'content_hash' | ReviewDefaults> &
  Partial<Pick<Engram, ReviewDefaults>> & { id?: number; uid?: string };

/** Filters for {@link EngramRepo.list}; all optional and combined with AND. */
export interface EngramFilter {
  /** Hierarchical: `development` matches `development` and `development/frontend`. */
  category?: string;
  /** All of these tags must be present. */
  tags?: string[];
  /** `null` means engrams without a project. */
  project?: string | null;
  scope?: Scope;
  pinned?: boolean;
  /** `exclude` (default), `include`, or `only`. Ignored when `statuses` is given. */
  deprecated?: 'exclude' | 'include' | 'only';
  /** Only engrams in one of these review states (the CLI's default is `active`). */
  statuses?: readonly EngramStatus[];
  /** Pending engrams learned this way too (the agent's own saves, `['agent']`), whatever `statuses` says. */
  pendingLearnedBy?: readonly LearnedBy[];
  /** Only engrams learned this way. */
  learnedBy?: readonly LearnedBy[];
  /** Only engrams whose code is in this liveness state. */
  liveness?: readonly Liveness[];
  /** Include soft-deleted engrams. @default false */
  includeDeleted?: boolean;
  /**
   * Only stale engrams: the later of `confirmed_at` (else `created_at`) and `last_matched_at` is at or before the
   * cutoff of the engram's kind (`otherwise` for kinds not listed; null: that kind never goes stale).
   */
  staleCutoffs?: { byKind: Record<string, string | null>; otherwise: string | null };
  limit?: number;
  offset?: number;
  /**
   * Keyset paging (instead of `offset`): the page of engrams right after this id, or right before this one. A deep
   * page then costs what the first does; OFFSET reads and sorts every row it skips.
   */
  afterId?: number;
  beforeId?: number;
}

/** What recall needs to decide whether a candidate may be shown and how to adjust its score. */
export type RecallFields = Pick<
  Engram,
  | 'id' | 'category' | 'tags' | 'prerequisites' | 'pinned' | 'deprecated' | 'project' | 'last_seen_at' | 'deleted_at'
  | 'kind' | 'status' | 'learned_by' | 'liveness' | 'confirmed_at' | 'last_matched_at' | 'created_at'
>;

/** The columns the BM25 index analyses and filters on (services/recall/bm25.ts). */
export type SearchableFields = Pick<Engram, 'id' | 'title' | 'text' | 'category' | 'tags' | 'project' | 'status' | 'learned_by' | 'deleted_at'>;

/** Counts for `engram status`. */
export interface EngramCounts {
  total: number;
  /** Live and not deprecated (any review state but deprecated). */
  active: number;
  /** Live engrams per review state. */
  statuses: Record<EngramStatus, number>;
  deprecated: number;
  deleted: number;
  pinned: number;
  auto_pinned: number;
  personal: number;
  project: number;
  projects: number;
}

const ITERATE_PAGE = 500;

const SEARCHABLE = 'id, title, text, category, tags, project, status, learned_by, deleted_at';
/** Index builds read every live engram: large pages, few statements. */
const SEARCHABLE_PAGE = 5_000;
type SearchableRow = Pick<EngramRow, 'id' | 'title' | 'text' | 'category' | 'tags' | 'project' | 'status' | 'learned_by' | 'deleted_at'>;
const searchableFrom = (row: SearchableRow): SearchableFields => ({ ...row, tags: JSON.parse(row.tags) as string[] });

/** Which review states a read shows: these statuses, and pending engrams learned as `pendingLearnedBy` says. */
export interface StatusVisibility {
  statuses: readonly EngramStatus[];
  pendingLearnedBy?: readonly LearnedBy[];
}

/** The SQL condition (and its parameters) of a {@link StatusVisibility}, for a query over `engrams`. */
export function statusClause(visibility: StatusVisibility): { sql: string; params: string[] } {
  const statuses = 'status IN (SELECT value FROM json_each(?))';
  if (!visibility.pendingLearnedBy?.length) return { sql: statuses, params: [JSON.stringify(visibility.statuses)] };
  return {
    sql: `(${statuses} OR (status = 'pending' AND learned_by IN (SELECT value FROM json_each(?))))`,
    params: [JSON.stringify(visibility.statuses), JSON.stringify(visibility.pendingLearnedBy)],
  };
}

const escapeLike = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/** SQL access to the engrams table. Callers own transactions. */
export interface EngramRepo {
  insert(engram: NewEngram): Engram;
  get(id: number): Engram | undefined;
  getByUid(uid: string): Engram | undefined;
  /** Engrams by id, in no particular order; missing ids are skipped. */
  getMany(ids: readonly number[]): Engram[];
  /** The fields recall's gates and adjustments read, for many candidates at once (cheaper than whole engrams). */
  recallFields(ids: readonly number[]): RecallFields[];
  /**
   * Reads the recall fields of one more page of live engrams (newest first) into the rows kept between searches, so
   * a warm server's searches find their candidates in memory instead of reading each one's row (0.2–0.3 ms of a
   * PreToolUse hook at 10k engrams). True while pages remain for the table as it is now; false once it is done (up to
   * `limit` engrams), or when nothing can be kept (inside a transaction, a connection without TEMP triggers). A write
   * to `engrams` empties the kept rows, and the reading starts again from the newest.
   */
  keepRecallFields(options?: { page?: number; limit?: number }): boolean;
  /**
   * The live engrams recorded next to this one in its session (`session_id`, in id order, as the timeline reads it):
   * up to `span` before and `span` after, each with its distance (1 = adjacent), and the session; none without one.
   */
  sessionNeighbours(id: number, span: number): { session: string | null; neighbours: Array<{ id: number; distance: number }> };
  /** The searchable columns of these engrams (deleted ones included, missing ids skipped), ascending by id. */
  searchable(ids: readonly number[]): SearchableFields[];
  /** The searchable columns of every live engram in id order, read in large pages (index builds). */
  iterateSearchable(): IterableIterator<SearchableFields>;
  findLiveByHash(hash: string, project: string | null, scope: Scope): Engram | undefined;
  findLiveByTopic(topicKey: string, project: string | null, scope: Scope): Engram | undefined;
  update(id: number, fields: Partial<Omit<Engram, 'id' | 'uid' | 'content_hash'>>): Engram;
  hardDelete(id: number): boolean;
  list(filter?: EngramFilter): { engrams: Engram[]; total: number };
  /** Live, active engrams, most useful first (matched often, matched recently, newest): SessionStart's order. */
  mostUseful(filter: { pinned?: boolean; project?: string }, limit: number): Engram[];
  /** Every engram in id order, for export; lazily read so large stores stream. */
  iterate(options?: { includeDeleted?: boolean; project?: string | null; statuses?: readonly EngramStatus[] }): IterableIterator<Engram>;
  counts(): EngramCounts;
}

/**
 * Rows read from `engrams`, kept while the table cannot have changed: a warm server reads the same rows hook after
 * hook — SessionStart's "most useful" lists (the project's ~1.2k engrams read and sorted, 1–2 ms at 10k engrams), a
 * search's candidates and results — and they change only when an engram does. Valid while no other connection
 * committed (`PRAGMA data_version`) and this one wrote no engram row (TEMP triggers on `engrams` count its inserts,
 * updates and deletes, rolled back or not); never read or filled inside a transaction (its rows could still be rolled
 * back). Rows are turned into new objects on every read, so callers get what a query would give them.
 */
interface RowCache {
  /** The rows kept for the table as it is now, or undefined (inside a transaction): emptied when the table moved. */
  current(): KeptRows | undefined;
}

interface KeptRows {
  lists: Map<string, EngramRow[]>;
  rows: Map<number, EngramRow>;
  fields: Map<number, RecallRow>;
  /** How far `keepRecallFields` has read: below which id it goes on, how many it read; 'done' when it finished. */
  fieldsRead: { below: number; count: number } | 'done';
}

const keptRows = (): KeptRows => ({ lists: new Map(), rows: new Map(), fields: new Map(), fieldsRead: { below: Number.MAX_SAFE_INTEGER, count: 0 } });

const rowCaches = new WeakMap<Database, RowCache | null>();
const MAX_KEPT_LISTS = 64;
const MAX_KEPT_ROWS = 4_096;
const MAX_KEPT_FIELDS = 32_768;
/** `keepRecallFields`' defaults: half the kept fields' room (a search's misses fill the rest), 512 rows a call (a few ms). */
const KEEP_FIELDS_LIMIT = MAX_KEPT_FIELDS / 2;
const KEEP_FIELDS_PAGE = 512;

/** The connection's row cache (one per connection), or undefined where its TEMP triggers cannot be made. */
function engramsCache(db: Database): RowCache | undefined {
  let cache = rowCaches.get(db);
  if (cache === undefined) {
    cache = null;
    try {
      let writes = 0;
      db.function('engram_row_written', { deterministic: false, directOnly: false }, () => {
        writes += 1;
        return null;
      });
      for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
        db.exec(
          `CREATE TEMP TRIGGER IF NOT EXISTS engram_row_cache_${event.toLowerCase()} AFTER ${event} ON main.engrams ` +
            'BEGIN SELECT engram_row_written(); END',
        );
      }
      const dataVersion = db.prepare('PRAGMA data_version').pluck();
      let kept = keptRows();
      let validFor = '';
      cache = {
        current() {
          if (db.inTransaction) return undefined;
          const now = `${dataVersion.get() as number}:${writes}`;
          if (now !== validFor) {
            kept = keptRows();
            validFor = now;
          }
          if (kept.lists.size > MAX_KEPT_LISTS) kept.lists.clear();
          if (kept.rows.size > MAX_KEPT_ROWS) kept.rows.clear();
          if (kept.fields.size > MAX_KEPT_FIELDS) {
            kept.fields.clear();
            kept.fieldsRead = 'done';
          }
          return kept;
        },
      };
    } catch {
      // A connection that cannot hold TEMP triggers (read-only temp store) reads SQLite every time.
      cache = null;
    }
    rowCaches.set(db, cache);
  }
  return cache ?? undefined;
}

/**
 * Rows by id through the kept ones: `read` gets the ids not kept (in one query); rows are kept only when `kept` is
 * (outside a transaction). The order is the kept ones' then the read ones' (callers index the rows by id).
 */
function throughKept<Row extends { id: number }>(ids: readonly number[], kept: Map<number, Row> | undefined, read: (ids: readonly number[]) => Row[]): Row[] {
  if (!kept) return read(ids);
  const found: Row[] = [];
  const missing: number[] = [];
  for (const id of new Set(ids)) {
    const row = kept.get(id);
    if (row) found.push(row);
    else missing.push(id);
  }
  if (missing.length > 0) {
    for (const row of read(missing)) {
      kept.set(row.id, row);
      found.push(row);
    }
  }
  return found;
}

type RecallRow = Pick<
  EngramRow,
  | 'id' | 'category' | 'tags' | 'prerequisites' | 'pinned' | 'deprecated' | 'project' | 'last_seen_at' | 'deleted_at'
  | 'kind' | 'status' | 'learned_by' | 'liveness' | 'confirmed_at' | 'last_matched_at' | 'created_at'
>;

/** The columns of a RecallRow. */
const RECALL_COLUMNS =
  'id, category, tags, prerequisites, pinned, deprecated, project, last_seen_at, deleted_at, kind, status, learned_by, liveness, confirmed_at, last_matched_at, created_at';

/** Builds the engram repository over a connection. */
export function createEngramRepo(db: Database): EngramRepo {
  const byId = db.prepare<[number], EngramRow>('SELECT * FROM engrams WHERE id = ?');
  const byUid = db.prepare<[string], EngramRow>('SELECT * FROM engrams WHERE uid = ?');
  const byHash = db.prepare<[string, string | null, Scope], EngramRow>(
    'SELECT * FROM engrams WHERE content_hash = ? AND project IS ? AND scope = ? AND deleted_at IS NULL ORDER BY id LIMIT 1',
  );
  const byTopic = db.prepare<[string, string | null, Scope], EngramRow>(
    'SELECT * FROM engrams WHERE topic_key = ? AND project IS ? AND scope = ? AND deleted_at IS NULL ORDER BY id LIMIT 1',
  );

  // INSERT and UPDATE statements depend on which columns are written; prepare each shape once.
  const statements = new Map<string, Statement>();
  const cached = (sql: string): Statement => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = db.prepare(sql)));
    return statement;
  };

  const rowCache = engramsCache(db);

  const get = (id: number): Engram | undefined => {
    const row = byId.get(id);
    return row ? fromRow(row) : undefined;
  };

  const where = (filter: EngramFilter): { sql: string; params: unknown[] } => {
    const clauses: string[] = [];
    const params: unknown[] = [];
    if (!filter.includeDeleted) clauses.push('deleted_at IS NULL');
    if (filter.statuses !== undefined) {
      const visible = statusClause({ statuses: filter.statuses, ...(filter.pendingLearnedBy ? { pendingLearnedBy: filter.pendingLearnedBy } : {}) });
      clauses.push(visible.sql);
      params.push(...visible.params);
    } else {
      const deprecated = filter.deprecated ?? 'exclude';
      if (deprecated === 'exclude') clauses.push('deprecated = 0');
      if (deprecated === 'only') clauses.push('deprecated = 1');
    }
    if (filter.learnedBy !== undefined) {
      clauses.push('learned_by IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(filter.learnedBy));
    }
    if (filter.liveness !== undefined) {
      clauses.push('liveness IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(filter.liveness));
    }
    if (filter.category !== undefined) {
      clauses.push("(category = ? OR category LIKE ? ESCAPE '\\')");
      params.push(filter.category, `${escapeLike(filter.category)}/%`);
    }
    for (const tag of filter.tags ?? []) {
      clauses.push('EXISTS (SELECT 1 FROM json_each(engrams.tags) WHERE value = ?)');
      params.push(tag);
    }
    if (filter.project !== undefined) {
      clauses.push('project IS ?');
      params.push(filter.project);
    }
    if (filter.scope !== undefined) {
      clauses.push('scope = ?');
      params.push(filter.scope);
    }
    if (filter.pinned !== undefined) {
      clauses.push('pinned = ?');
      params.push(filter.pinned ? 1 : 0);
    }
    if (filter.staleCutoffs !== undefined) {
      // A kind that never goes stale gets a NULL cutoff, and a comparison with NULL is never true.
      const kinds = Object.entries(filter.staleCutoffs.byKind);
      const cutoff = kinds.length ? `CASE kind ${kinds.map(() => 'WHEN ? THEN ?').join(' ')} ELSE ? END` : '?';
      clauses.push(`max(coalesce(confirmed_at, created_at), coalesce(last_matched_at, '')) <= ${cutoff}`);
      for (const [kind, at] of kinds) params.push(kind, at);
      params.push(filter.staleCutoffs.otherwise);
    }
    return { sql: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
  };

  return {
    insert(engram) {
      const uid = engram.uid ?? randomUUID();
      const columns = toColumns({ ...engram, uid } as Partial<Engram>);
      if (engram.id === undefined) delete columns.id;
      const names = Object.keys(columns);
      const info = cached(`INSERT INTO engrams (${names.join(', ')}) VALUES (${names.map((n) => `@${n}`).join(', ')})`).run(
        columns,
      );
      return get(Number(info.lastInsertRowid)) as Engram;
    },
    get,
    getByUid(uid) {
      const row = byUid.get(uid);
      return row ? fromRow(row) : undefined;
    },
    mostUseful(filter, limit) {
      const kept = rowCache?.current();
      const key = `${filter.pinned ?? ''}\u0000${filter.project ?? '\u0001'}\u0000${limit}`;
      const keptRows = kept?.lists.get(key);
      if (keptRows) return keptRows.map(fromRow);
      // One statement per filter shape, so SQLite can use the pinned and project indexes (an `? IS NULL OR …`
      // condition would make it scan every engram). With a project or for pinned engrams, `+status` / `+deleted_at`
      // keep the planner off the status index (every active engram) and on the project's or the partial pinned index
      // (pinned ones only: 2.6 → 0.14 ms at 10k engrams, 9 pinned, where it chose the status index); the order is
      // found on ids alone and only the rows shown are read whole (sorting whole rows was most of a SessionStart:
      // 10 ms → 1 ms at 10k engrams).
      const project = filter.project !== undefined;
      const narrow = project || filter.pinned === true;
      const clauses = narrow ? ['+deleted_at IS NULL', "+status = 'active'"] : ['deleted_at IS NULL', "status = 'active'"];
      if (filter.pinned !== undefined) clauses.push(`pinned = ${filter.pinned ? 1 : 0}`);
      if (project) clauses.push('project = @project');
      const order = (table: string): string =>
        `ORDER BY ${table}times_matched DESC, coalesce(${table}last_matched_at, '') DESC, ${table}updated_at DESC, ${table}id DESC`;
      const rows = cached(
        `SELECT e.* FROM (SELECT id FROM engrams WHERE ${clauses.join(' AND ')} ${order('')} LIMIT @limit) AS top
          JOIN engrams e ON e.id = top.id ${order('e.')}`,
      )
        .all({ limit, ...(project ? { project: filter.project } : {}) }) as EngramRow[];
      kept?.lists.set(key, rows);
      return rows.map(fromRow);
    },
    getMany(ids) {
      if (ids.length === 0) return [];
      const read = (wanted: readonly number[]): EngramRow[] =>
        cached('SELECT * FROM engrams WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(wanted)) as EngramRow[];
      return throughKept(ids, rowCache?.current()?.rows, read).map(fromRow);
    },
    sessionNeighbours(id, span) {
      const session = cached('SELECT session_id FROM engrams WHERE id = ?').pluck().get(id) as string | null | undefined;
      if (session == null || span <= 0) return { session: session ?? null, neighbours: [] };
      // Two short range reads of engrams_session (session_id, id).
      const side = (sql: string): Array<{ id: number; distance: number }> =>
        (cached(`SELECT id FROM engrams WHERE session_id = @session AND deleted_at IS NULL AND ${sql} LIMIT @span`).pluck().all({ session, id, span }) as number[]).map(
          (other, index) => ({ id: other, distance: index + 1 }),
        );
      return { session, neighbours: [...side('id < @id ORDER BY id DESC'), ...side('id > @id ORDER BY id')] };
    },
    recallFields(ids) {
      if (ids.length === 0) return [];
      const read = (wanted: readonly number[]): RecallRow[] =>
        cached(`SELECT ${RECALL_COLUMNS} FROM engrams WHERE id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(wanted)) as RecallRow[];
      return throughKept(ids, rowCache?.current()?.fields, read)
        .map((row) => ({
          id: row.id,
          category: row.category,
          tags: JSON.parse(row.tags) as string[],
          prerequisites: row.prerequisites === null ? null : (JSON.parse(row.prerequisites) as Prerequisites),
          pinned: row.pinned === 1,
          deprecated: row.deprecated === 1,
          project: row.project,
          last_seen_at: row.last_seen_at,
          deleted_at: row.deleted_at,
          kind: row.kind,
          status: row.status,
          learned_by: row.learned_by,
          liveness: row.liveness,
          confirmed_at: row.confirmed_at,
          last_matched_at: row.last_matched_at,
          created_at: row.created_at,
        }));
    },
    keepRecallFields({ page = KEEP_FIELDS_PAGE, limit = KEEP_FIELDS_LIMIT } = {}) {
      const kept = rowCache?.current();
      if (!kept || kept.fieldsRead === 'done') return false;
      const { below, count } = kept.fieldsRead;
      const rows = cached(
        // `+deleted_at`: down the primary key (6 ms a page at 10k engrams), not through engrams_live and a sort of
        // every live row (63 ms).
        `SELECT ${RECALL_COLUMNS} FROM engrams WHERE +deleted_at IS NULL AND id < ? ORDER BY id DESC LIMIT ?`,
      ).all(below, Math.max(0, Math.min(page, limit - count))) as RecallRow[];
      for (const row of rows) kept.fields.set(row.id, row);
      const last = rows.at(-1);
      kept.fieldsRead = last && rows.length === page && count + rows.length < limit ? { below: last.id, count: count + rows.length } : 'done';
      return kept.fieldsRead !== 'done';
    },
    searchable(ids) {
      if (ids.length === 0) return [];
      return cached(`SELECT ${SEARCHABLE} FROM engrams WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`)
        .all(JSON.stringify(ids))
        .map((row) => searchableFrom(row as SearchableRow));
    },
    *iterateSearchable() {
      const page = cached(`SELECT ${SEARCHABLE} FROM engrams WHERE deleted_at IS NULL AND id > ? ORDER BY id LIMIT ${SEARCHABLE_PAGE}`);
      let after = 0;
      for (;;) {
        const rows = page.all(after) as SearchableRow[];
        for (const row of rows) yield searchableFrom(row);
        if (rows.length < SEARCHABLE_PAGE) return;
        after = (rows.at(-1) as SearchableRow).id;
      }
    },
    findLiveByHash(hash, project, scope) {
      const row = byHash.get(hash, project, scope);
      return row ? fromRow(row) : undefined;
    },
    findLiveByTopic(topicKey, project, scope) {
      const row = byTopic.get(topicKey, project, scope);
      return row ? fromRow(row) : undefined;
    },
    update(id, fields) {
      const columns = toColumns(fields as Partial<Engram>);
      const names = Object.keys(columns);
      if (names.length > 0) {
        cached(`UPDATE engrams SET ${names.map((n) => `${n} = @${n}`).join(', ')} WHERE id = @__id`).run({
          ...columns,
          __id: id,
        });
      }
      return get(id) as Engram;
    },
    hardDelete(id) {
      return db.prepare('DELETE FROM engrams WHERE id = ?').run(id).changes > 0;
    },
    list(filter = {}) {
      const { sql, params } = where(filter);
      const total = Number(db.prepare(`SELECT count(*) FROM engrams ${sql}`).pluck().get(...params));
      const and = sql ? `${sql} AND` : 'WHERE';
      let rows: EngramRow[];
      if (filter.afterId !== undefined) {
        rows = db.prepare<unknown[], EngramRow>(`SELECT * FROM engrams ${and} id > ? ORDER BY id LIMIT ?`).all(...params, filter.afterId, filter.limit ?? -1);
      } else if (filter.beforeId !== undefined) {
        rows = db.prepare<unknown[], EngramRow>(`SELECT * FROM engrams ${and} id < ? ORDER BY id DESC LIMIT ?`).all(...params, filter.beforeId, filter.limit ?? -1).reverse();
      } else {
        rows = db.prepare<unknown[], EngramRow>(`SELECT * FROM engrams ${sql} ORDER BY id LIMIT ? OFFSET ?`).all(...params, filter.limit ?? -1, filter.offset ?? 0);
      }
      return { engrams: rows.map(fromRow), total };
    },
    *iterate(options = {}) {
      // Keyset pages instead of a live cursor: better-sqlite3 keeps a connection busy while a cursor is open, and
      // callers need it to read each engram's statistics.
      const { sql, params } = where({
        includeDeleted: options.includeDeleted ?? false,
        deprecated: 'include',
        ...(options.statuses === undefined ? {} : { statuses: options.statuses }),
        ...(options.project === undefined ? {} : { project: options.project }),
      });
      const page = db.prepare<unknown[], EngramRow>(
        `SELECT * FROM engrams ${sql ? `${sql} AND` : 'WHERE'} id > ? ORDER BY id LIMIT ${ITERATE_PAGE}`,
      );
      let after = 0;
      for (;;) {
        const rows = page.all(...params, after);
        for (const row of rows) yield fromRow(row);
        if (rows.length < ITERATE_PAGE) return;
        after = (rows.at(-1) as EngramRow).id;
      }
    },
    counts() {
      const statuses = Object.fromEntries(
        (db.prepare('SELECT status, count(*) AS n FROM engrams WHERE deleted_at IS NULL GROUP BY status').all() as Array<{ status: EngramStatus; n: number }>).map(
          (row) => [row.status, row.n],
        ),
      );
      const row = db
        .prepare(
          `SELECT count(*) AS total,
                  coalesce(sum(deleted_at IS NULL AND deprecated = 0), 0) AS active,
                  coalesce(sum(deleted_at IS NULL AND deprecated = 1), 0) AS deprecated,
                  coalesce(sum(deleted_at IS NOT NULL), 0) AS deleted,
                  coalesce(sum(deleted_at IS NULL AND pinned = 1), 0) AS pinned,
                  coalesce(sum(deleted_at IS NULL AND auto_pinned = 1), 0) AS auto_pinned,
                  coalesce(sum(deleted_at IS NULL AND scope = 'personal'), 0) AS personal,
                  coalesce(sum(deleted_at IS NULL AND scope = 'project'), 0) AS project,
                  count(DISTINCT CASE WHEN deleted_at IS NULL THEN project END) AS projects
             FROM engrams`,
        )
        .get() as Omit<EngramCounts, 'statuses'>;
      return { ...row, statuses: { pending: 0, active: 0, rejected: 0, deprecated: 0, ...statuses } };
    },
  };
}
