/**
 * The audit log: one row per mutation, written by the mutation's own transaction, holding row images of everything it
 * changed (so `engram undo` can reverse it exactly and tell when a later change depends on it). `journal.ts` mirrors
 * the rows into `$ENGRAM_HOME/audit.jsonl` after commit.
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { EngramError, redactDeep, sanitizeText, type Database, type Store } from '../../core/index.js';

/** Who made a change. `system`: Engram itself (liveness, auto-pin). */
export const ACTOR_KINDS = ['user', 'agent', 'harvest', 'import', 'sync', 'system'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

/** Who made a change and through which surface (`cli`, `mcp`, `job`, `http`, `api` for direct service calls). */
export interface Actor {
  by: ActorKind;
  via: string;
}

/** A person at the command line. */
export const CLI_USER: Actor = { by: 'user', via: 'cli' };
/** The default for service calls that do not say who they act for: a person (what every surface before review was). */
export const API_USER: Actor = { by: 'user', via: 'api' };
/**
 * The agent, through the MCP server: every operation the warm server's socket runs (and the MCP process runs itself
 * when the server cannot) acts as this. The dispatcher sets it; no request can name another actor.
 */
export const MCP_AGENT: Actor = { by: 'agent', via: 'mcp' };

/** A row as SQLite returns it (column → value). */
export type Row = Record<string, unknown>;

/** One row a mutation changed: `before` null when it created the row, `after` null when it removed it. */
export interface RowChange {
  table: string;
  key: Row;
  before: Row | null;
  after: Row | null;
}

/** One audit entry, as stored and as written to audit.jsonl. */
export interface AuditEntry {
  seq: number;
  token: string;
  at: string;
  actor: ActorKind;
  via: string;
  op: string;
  engram_ids: number[];
  reason: string | null;
  changes: RowChange[];
  detail: Record<string, unknown> | null;
  /** The entry this one undid. */
  undoes: number | null;
  prev_hash: string;
  hash: string;
}

/**
 * Columns that record when or how often, not what: they move with almost every change, so they never make one change
 * depend on another, and undo restores them only when nothing changed them since.
 */
export const BOOKKEEPING_COLUMNS: ReadonlySet<string> = new Set(['updated_at', 'last_seen_at', 'revision_count']);
/** Learning state the evaluator moves without an audit row; never compared or restored by undo. */
export const LEARNING_COLUMNS: ReadonlySet<string> = new Set(['times_matched', 'last_matched_at']);
/** Tables derived from others (vectors are re-embedded): never tracked. */
const DERIVED_TABLES: ReadonlySet<string> = new Set(['engram_vectors']);

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** JSON with object keys sorted at every level: one text per value, whatever order it was built in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item) && !(item instanceof Uint8Array)
      ? Object.fromEntries(Object.entries(item as Row).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

const sameValue = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/** Columns whose value differs between two images of a row. */
export function changedColumns(change: Pick<RowChange, 'before' | 'after'>): string[] {
  const names = new Set([...Object.keys(change.before ?? {}), ...Object.keys(change.after ?? {})]);
  return [...names].filter((name) => !sameValue(change.before?.[name], change.after?.[name]));
}

// Statements by SQL, per connection: a change set reads every row it tracks twice (before and after), and an import
// tracks thousands; preparing each read anew was a twentieth of an import's time.
type Prepared = ReturnType<Database['prepare']> & { get(...params: unknown[]): unknown; all(...params: unknown[]): unknown[] };
const prepared = new WeakMap<Database, Map<string, Prepared>>();
function statement(db: Database, sql: string): Prepared {
  let cache = prepared.get(db);
  if (!cache) prepared.set(db, (cache = new Map()));
  let found = cache.get(sql);
  if (!found) cache.set(sql, (found = db.prepare(sql) as Prepared));
  return found;
}

const readRow = (db: Database, table: string, key: Row): Row | null => {
  const names = Object.keys(key);
  const row = statement(db, `SELECT * FROM ${quote(table)} WHERE ${names.map((name) => `${quote(name)} IS ?`).join(' AND ')}`).get(
    ...names.map((name) => key[name]),
  ) as Row | undefined;
  return row ?? null;
};

const keyText = (table: string, key: Row): string => `${table}:${canonicalJson(key)}`;

// The schema does not change under an open connection (migrations run when it opens).
const dependents = new WeakMap<Database, Array<{ table: string; column: string; keys: string[] }>>();

/** The tables whose rows point at an engram (foreign keys on engrams.id), found from the schema itself. */
function dependentTables(db: Database): Array<{ table: string; column: string; keys: string[] }> {
  let found = dependents.get(db);
  if (!found) dependents.set(db, (found = readDependentTables(db)));
  return found;
}

function readDependentTables(db: Database): Array<{ table: string; column: string; keys: string[] }> {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .pluck()
    .all() as string[];
  const found: Array<{ table: string; column: string; keys: string[] }> = [];
  for (const table of tables) {
    if (DERIVED_TABLES.has(table) || table === 'engrams') continue;
    const references = db.prepare(`PRAGMA foreign_key_list(${quote(table)})`).all() as Array<{ table: string; from: string; to: string }>;
    const info = db.prepare(`PRAGMA table_info(${quote(table)})`).all() as Array<{ name: string; pk: number }>;
    const primary = info.filter((column) => column.pk > 0).sort((a, b) => a.pk - b.pk).map((column) => column.name);
    for (const reference of references) {
      if (reference.table === 'engrams') found.push({ table, column: reference.from, keys: primary.length ? primary : info.map((c) => c.name) });
    }
  }
  return found;
}

/**
 * The rows one mutation touches. `track` takes a row's image before the change (the first call wins), `created`
 * marks a row the mutation inserts; `finish` reads every row again and keeps the ones that changed.
 */
export class ChangeSet {
  private readonly tracked = new Map<string, { table: string; key: Row; before: Row | null }>();
  readonly engramIds = new Set<number>();

  constructor(private readonly db: Database) {}

  track(table: string, key: Row): void {
    const id = keyText(table, key);
    if (!this.tracked.has(id)) this.tracked.set(id, { table, key, before: readRow(this.db, table, key) });
    this.note(table, key);
  }

  created(table: string, key: Row): void {
    const id = keyText(table, key);
    if (!this.tracked.has(id)) this.tracked.set(id, { table, key, before: null });
    this.note(table, key);
  }

  engram(id: number): void {
    this.track('engrams', { id });
  }

  /** Every row that points at the engram (statistics, judgements, conflicts, sources): what a hard delete removes. */
  dependents(engramId: number): void {
    for (const { table, column, keys } of dependentTables(this.db)) {
      const rows = statement(this.db, `SELECT * FROM ${quote(table)} WHERE ${quote(column)} = ?`).all(engramId) as Row[];
      for (const row of rows) this.track(table, Object.fromEntries(keys.map((key) => [key, row[key]])));
    }
  }

  /** Rows pointing at the engram that are not tracked yet: created by this change (call after writing them). */
  newDependents(engramId: number): void {
    for (const { table, column, keys } of dependentTables(this.db)) {
      const rows = statement(this.db, `SELECT * FROM ${quote(table)} WHERE ${quote(column)} = ?`).all(engramId) as Row[];
      for (const row of rows) this.created(table, Object.fromEntries(keys.map((key) => [key, row[key]])));
    }
  }

  /** After-images; rows that did not change are dropped. */
  finish(): RowChange[] {
    const changes: RowChange[] = [];
    for (const { table, key, before } of this.tracked.values()) {
      const after = readRow(this.db, table, key);
      if (before === null && after === null) continue;
      if (before !== null && after !== null && changedColumns({ before, after }).length === 0) continue;
      changes.push({ table, key, before, after });
    }
    return changes;
  }

  private note(table: string, key: Row): void {
    if (table === 'engrams' && typeof key.id === 'number') this.engramIds.add(key.id);
    if (typeof key.engram_id === 'number') this.engramIds.add(key.engram_id);
  }
}

/** What a mutation says about itself. */
export interface AuditMeta {
  actor: Actor;
  op: string;
  reason?: string | null;
  detail?: Record<string, unknown> | null;
  undoes?: number | null;
}

const TOKEN_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

/** A short undo token people can type: `u-` and 10 characters (50 bits). */
function newToken(): string {
  const bytes = randomBytes(10);
  return `u-${[...bytes].map((byte) => TOKEN_ALPHABET[byte % TOKEN_ALPHABET.length]).join('')}`;
}

/** The hash chaining an entry to the previous one: SHA-256 of the previous hash and the entry without its hash. */
export function entryHash(entry: Omit<AuditEntry, 'hash'>): string {
  return createHash('sha256').update(`${entry.prev_hash}\n${canonicalJson(entry)}`).digest('hex');
}

interface AuditRow {
  seq: number;
  token: string;
  at: string;
  actor: ActorKind;
  via: string;
  op: string;
  engram_ids: string;
  reason: string | null;
  changes: string;
  detail: string | null;
  undoes: number | null;
  prev_hash: string;
  hash: string;
}

export function entryFromRow(row: AuditRow): AuditEntry {
  return {
    seq: row.seq,
    token: row.token,
    at: row.at,
    actor: row.actor,
    via: row.via,
    op: row.op,
    engram_ids: JSON.parse(row.engram_ids) as number[],
    reason: row.reason,
    changes: JSON.parse(row.changes) as RowChange[],
    detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, unknown>),
    undoes: row.undoes,
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

/**
 * Writes the audit row of a change inside the open write transaction. Returns the entry, or null when nothing
 * changed (no row is written for a no-op).
 */
export function writeAuditEntry(store: Store, meta: AuditMeta, changes: RowChange[], extraIds: Iterable<number>, at: string): AuditEntry | null {
  if (changes.length === 0 && !meta.detail) return null;
  if (!store.db.inTransaction) throw new EngramError('INTERNAL', 'an audit row must be written in the transaction of its change');
  const ids = new Set<number>(extraIds);
  for (const change of changes) {
    if (change.table === 'engrams' && typeof change.key.id === 'number') ids.add(change.key.id);
  }
  const last = store.db.prepare('SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1').get() as { seq: number; hash: string } | undefined;
  const draft: Omit<AuditEntry, 'hash'> = {
    seq: (last?.seq ?? 0) + 1,
    token: newToken(),
    at,
    actor: meta.actor.by,
    via: meta.actor.via,
    op: meta.op,
    engram_ids: [...ids].sort((a, b) => a - b),
    // A reason or detail comes from the caller (a person's --reason): secrets never reach the log or audit.jsonl.
    // Row images come from the store, which sanitised them when they were written.
    reason: meta.reason ? sanitizeText(meta.reason).text : null,
    changes,
    detail: meta.detail ? redactDeep(meta.detail) : null,
    undoes: meta.undoes ?? null,
    prev_hash: last?.hash ?? '',
  };
  const entry: AuditEntry = { ...draft, hash: entryHash(draft) };
  store.db
    .prepare(
      `INSERT INTO audit_log (seq, token, at, actor, via, op, engram_ids, reason, changes, detail, undoes, prev_hash, hash)
       VALUES (@seq, @token, @at, @actor, @via, @op, @engram_ids, @reason, @changes, @detail, @undoes, @prev_hash, @hash)`,
    )
    .run({
      ...entry,
      engram_ids: JSON.stringify(entry.engram_ids),
      changes: JSON.stringify(entry.changes),
      detail: entry.detail === null ? null : JSON.stringify(entry.detail),
    });
  const link = store.db.prepare('INSERT OR IGNORE INTO audit_engrams (engram_id, seq) VALUES (?, ?)');
  for (const id of entry.engram_ids) link.run(id, entry.seq);
  return entry;
}

/** Result of {@link audited}: the function's result and the entry written (null when nothing changed). */
export interface Audited<T> {
  result: T;
  entry: AuditEntry | null;
}

/**
 * Runs `fn` and writes its audit row in one write transaction (or in the caller's, when one is open): `fn` tracks the
 * rows it will touch on the change set before touching them. `after` runs after commit (journal.ts appends the row to
 * audit.jsonl there); inside a caller's transaction the caller does that once its own transaction commits.
 */
export function audited<T>(store: Store, meta: AuditMeta | ((result: T) => AuditMeta), fn: (changes: ChangeSet) => T, at: string): Audited<T> {
  const run = (): Audited<T> => {
    const changes = new ChangeSet(store.db);
    const result = fn(changes);
    const resolved = typeof meta === 'function' ? meta(result) : meta;
    return { result, entry: writeAuditEntry(store, resolved, changes.finish(), changes.engramIds, at) };
  };
  return store.db.inTransaction ? run() : store.write(run);
}

/** One entry by token. */
export function entryByToken(store: Store, token: string): AuditEntry | undefined {
  const row = store.db.prepare('SELECT * FROM audit_log WHERE token = ?').get(token) as AuditRow | undefined;
  return row ? entryFromRow(row) : undefined;
}

/** One entry by sequence number. */
export function entryBySeq(store: Store, seq: number): AuditEntry | undefined {
  const row = store.db.prepare('SELECT * FROM audit_log WHERE seq = ?').get(seq) as AuditRow | undefined;
  return row ? entryFromRow(row) : undefined;
}

/** Entries after `seq`, in order (the journal's catch-up). */
export function entriesAfter(store: Store, seq: number, limit = 10_000): AuditEntry[] {
  return (store.db.prepare('SELECT * FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?').all(seq, limit) as AuditRow[]).map(entryFromRow);
}

/** The entry that undid `seq`, if any. */
export function undoneBy(store: Store, seq: number): AuditEntry | undefined {
  const row = store.db.prepare('SELECT * FROM audit_log WHERE undoes = ?').get(seq) as AuditRow | undefined;
  return row ? entryFromRow(row) : undefined;
}

/** Filters for {@link listAudit}. */
export interface AuditQuery {
  engramId?: number;
  actors?: readonly ActorKind[];
  ops?: readonly string[];
  /** Leave out entries that were undone and the undo entries themselves. */
  effectiveOnly?: boolean;
  limit?: number;
  /** Newest first (default) or oldest first. */
  order?: 'desc' | 'asc';
  /** Only entries before this sequence number. */
  before?: number;
}

/** Audit entries, newest first unless asked otherwise. */
export function listAudit(store: Store, query: AuditQuery = {}): AuditEntry[] {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (query.engramId !== undefined) {
    clauses.push('seq IN (SELECT seq FROM audit_engrams WHERE engram_id = ?)');
    params.push(query.engramId);
  }
  if (query.actors) {
    clauses.push('actor IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(query.actors));
  }
  if (query.ops) {
    clauses.push('op IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(query.ops));
  }
  if (query.effectiveOnly) clauses.push('undoes IS NULL AND seq NOT IN (SELECT undoes FROM audit_log WHERE undoes IS NOT NULL)');
  if (query.before !== undefined) {
    clauses.push('seq < ?');
    params.push(query.before);
  }
  const where = clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
  return (
    store.db
      .prepare(`SELECT * FROM audit_log ${where} ORDER BY seq ${query.order === 'asc' ? 'ASC' : 'DESC'} LIMIT ?`)
      .all(...params, query.limit ?? 50) as AuditRow[]
  ).map(entryFromRow);
}

/** Reads a row by key (undo compares it with an entry's images). */
export function currentRow(store: Store, table: string, key: Row): Row | null {
  return readRow(store.db, table, key);
}

/** Runs raw row writes for undo: insert a whole image, delete by key, or set some columns. */
export const rowWriter = {
  insert(store: Store, table: string, row: Row): void {
    const names = Object.keys(row);
    store.db
      .prepare(`INSERT INTO ${quote(table)} (${names.map(quote).join(', ')}) VALUES (${names.map(() => '?').join(', ')})`)
      .run(...names.map((name) => row[name]));
  },
  remove(store: Store, table: string, key: Row): void {
    const names = Object.keys(key);
    store.db.prepare(`DELETE FROM ${quote(table)} WHERE ${names.map((name) => `${quote(name)} IS ?`).join(' AND ')}`).run(...names.map((name) => key[name]));
  },
  set(store: Store, table: string, key: Row, values: Row): void {
    const columns = Object.keys(values);
    if (columns.length === 0) return;
    const names = Object.keys(key);
    store.db
      .prepare(
        `UPDATE ${quote(table)} SET ${columns.map((column) => `${quote(column)} = ?`).join(', ')} WHERE ${names.map((name) => `${quote(name)} IS ?`).join(' AND ')}`,
      )
      .run(...columns.map((column) => values[column]), ...names.map((name) => key[name]));
  },
};
