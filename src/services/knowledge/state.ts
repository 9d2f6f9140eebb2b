import { join } from 'node:path';
import { EngramError, openDatabase, type Database } from '../../core/index.js';

/**
 * The knowledge server's state, `.engram/knowledge.db` (SQLite, WAL; git-ignored): the seed's four tables —
 * `buffer_items`, `dispatches`, `id_counters`, `server_state` — plus `entry_status`, when each claim was first seen
 * in its status (what "contested for more than 14 days" is measured from). Every multi-row change is one IMMEDIATE
 * transaction, so a crash leaves either the old state or the new one.
 */

export const STATE_FILE = join('.engram', 'knowledge.db');

/** Where a buffered item came from. */
export type ItemSource = 'git' | 'doc' | 'issue' | 'session' | 'drift';
/** Drift an item signals (seed: "Scheduling Priority"). */
export type DriftType = 'orphan' | 'contested' | 'stale' | 'workflow';

/** One buffered item. */
export interface BufferItem {
  id: number;
  source: ItemSource;
  /** Identity within the source: a commit sha, a path, `transcript#from-to`, a drift key. */
  ref: string;
  path: string | null;
  kind: string;
  chars: number;
  /** When the item happened (commit date, file mtime, session time), ISO-8601. */
  date: string;
  drift_type: DriftType | null;
  detail: Record<string, unknown>;
  dispatch_id: number | null;
  added_at: string;
}

/** A dispatch's lifecycle (seed: building → dispatched → validated → committed; retry, held and failed besides). */
export type DispatchState = 'building' | 'dispatched' | 'retry' | 'validated' | 'committed' | 'held' | 'failed' | 'discarded';

/** One dispatch (one chunk). */
export interface Dispatch {
  id: number;
  kind: 'fold' | 'seed' | 'bootstrap';
  state: DispatchState;
  chunk_file: string | null;
  reserved: string[];
  /** Where the agent ran and the docs were edited; null = the repository itself. */
  work_root: string | null;
  retries: number;
  agent_pid: number | null;
  items: number;
  chars: number;
  expected_growth: number;
  violations: unknown[];
  error: string | null;
  created_at: string;
  dispatched_at: string | null;
  validated_at: string | null;
  committed_at: string | null;
  updated_at: string;
}

/** The singleton row. */
export interface ServerState {
  last_poll_commit: string | null;
  last_poll_at: string | null;
  last_dispatch_time: string | null;
  buffer_chars_total: number;
  last_scan_at: string | null;
  continuation_date: string | null;
  /** After the fold agent itself failed (not logged in, timeout): no dispatch before this time. */
  backoff_until: string | null;
  /** Agent failures in a row (the backoff doubles with each). */
  agent_failures: number;
}

const SCHEMA = [
  `CREATE TABLE dispatches (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    chunk_file TEXT,
    reserved TEXT NOT NULL DEFAULT '[]',
    work_root TEXT,
    retries INTEGER NOT NULL DEFAULT 0,
    agent_pid INTEGER,
    items INTEGER NOT NULL DEFAULT 0,
    chars INTEGER NOT NULL DEFAULT 0,
    expected_growth INTEGER NOT NULL DEFAULT 0,
    violations TEXT NOT NULL DEFAULT '[]',
    error TEXT,
    created_at TEXT NOT NULL,
    dispatched_at TEXT,
    validated_at TEXT,
    committed_at TEXT,
    updated_at TEXT NOT NULL
  )`,
  `CREATE TABLE buffer_items (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    ref TEXT NOT NULL,
    path TEXT,
    kind TEXT NOT NULL,
    chars INTEGER NOT NULL,
    date TEXT NOT NULL,
    drift_type TEXT,
    detail TEXT NOT NULL DEFAULT '{}',
    dispatch_id INTEGER REFERENCES dispatches(id),
    added_at TEXT NOT NULL
  )`,
  // One pending item per (source, ref): a doc saved ten times before a dispatch is one item.
  `CREATE UNIQUE INDEX buffer_pending ON buffer_items(source, ref) WHERE dispatch_id IS NULL`,
  `CREATE INDEX buffer_by_dispatch ON buffer_items(dispatch_id)`,
  `CREATE INDEX buffer_by_path ON buffer_items(source, path)`,
  `CREATE TABLE id_counters (prefix TEXT PRIMARY KEY CHECK (prefix IN ('C', 'E', 'W')), next INTEGER NOT NULL CHECK (next >= 1))`,
  `INSERT INTO id_counters (prefix, next) VALUES ('C', 1), ('E', 1), ('W', 1)`,
  `CREATE TABLE server_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    last_poll_commit TEXT,
    last_poll_at TEXT,
    last_dispatch_time TEXT,
    buffer_chars_total INTEGER NOT NULL DEFAULT 0,
    last_scan_at TEXT,
    continuation_date TEXT,
    backoff_until TEXT,
    agent_failures INTEGER NOT NULL DEFAULT 0
  )`,
  `INSERT INTO server_state (id) VALUES (1)`,
  `CREATE TABLE entry_status (id TEXT PRIMARY KEY, status TEXT NOT NULL, since TEXT NOT NULL)`,
];
const STATE_VERSION = 1;

/** An open state database. */
export interface KnowledgeState {
  db: Database;
  path: string;
  /** Runs `fn` in an IMMEDIATE transaction. */
  write<T>(fn: () => T): T;
  close(): void;
}

/** Opens (creating and migrating) `<root>/.engram/knowledge.db`. */
export function openState(root: string, options: { busyTimeoutMs?: number } = {}): KnowledgeState {
  const path = join(root, STATE_FILE);
  const db = openDatabase({ path, busyTimeoutMs: options.busyTimeoutMs ?? 10_000 });
  try {
    const version = Number(db.pragma('user_version', { simple: true }));
    if (version > STATE_VERSION) {
      throw new EngramError('STORE_TOO_NEW', `${path} was written by a newer Engram (state version ${version}, this one knows ${STATE_VERSION})`);
    }
    if (version < STATE_VERSION) {
      db.transaction(() => {
        if (Number(db.pragma('user_version', { simple: true })) >= STATE_VERSION) return;
        for (const statement of SCHEMA) db.exec(statement);
        db.pragma(`user_version = ${STATE_VERSION}`);
      }).immediate();
    }
  } catch (error) {
    db.close();
    throw error;
  }
  return {
    db,
    path,
    write: <T>(fn: () => T): T => db.transaction(fn).immediate(),
    close: () => db.close(),
  };
}

interface ItemRow extends Omit<BufferItem, 'detail'> {
  detail: string;
}
const toItem = (row: ItemRow): BufferItem => ({ ...row, detail: JSON.parse(row.detail) as Record<string, unknown> });

interface DispatchRow extends Omit<Dispatch, 'reserved' | 'violations'> {
  reserved: string;
  violations: string;
}
const toDispatch = (row: DispatchRow): Dispatch => ({
  ...row,
  reserved: JSON.parse(row.reserved) as string[],
  violations: JSON.parse(row.violations) as unknown[],
});

/** A new item for the buffer. */
export type NewItem = Omit<BufferItem, 'id' | 'dispatch_id' | 'added_at'>;

/** Recomputes the buffer total in the singleton row (call inside a write). */
function refreshTotal(state: KnowledgeState): void {
  state.db.prepare('UPDATE server_state SET buffer_chars_total = (SELECT COALESCE(SUM(chars), 0) FROM buffer_items WHERE dispatch_id IS NULL) WHERE id = 1').run();
}

/** Adds items, or updates a pending one with the same (source, ref): its size and date are the latest. */
export function enqueue(state: KnowledgeState, items: readonly NewItem[], now: Date): number {
  if (items.length === 0) return 0;
  const upsert = state.db.prepare(
    `INSERT INTO buffer_items (source, ref, path, kind, chars, date, drift_type, detail, added_at)
     VALUES (@source, @ref, @path, @kind, @chars, @date, @drift_type, @detail, @added_at)
     ON CONFLICT (source, ref) WHERE dispatch_id IS NULL
     DO UPDATE SET chars = excluded.chars, date = excluded.date, kind = excluded.kind, detail = excluded.detail, added_at = excluded.added_at`,
  );
  return state.write(() => {
    let changed = 0;
    for (const item of items) changed += upsert.run({ ...item, detail: JSON.stringify(item.detail), added_at: now.toISOString() }).changes;
    refreshTotal(state);
    return changed;
  });
}

/** Pending items (not in a dispatch), oldest first. */
export function pendingItems(state: KnowledgeState): BufferItem[] {
  return (state.db.prepare('SELECT * FROM buffer_items WHERE dispatch_id IS NULL ORDER BY date, id').all() as ItemRow[]).map(toItem);
}

/** Removes pending drift items (they are recomputed from the docs on every scan). */
export function clearPendingDrift(state: KnowledgeState): void {
  state.write(() => {
    state.db.prepare("DELETE FROM buffer_items WHERE dispatch_id IS NULL AND source = 'drift'").run();
    refreshTotal(state);
  });
}

/** The furthest byte of a transcript any item (pending or dispatched) covers: where the next poll starts. */
export function sessionCursor(state: KnowledgeState, path: string): number {
  const row = state.db.prepare("SELECT MAX(CAST(json_extract(detail, '$.to') AS INTEGER)) AS cursor FROM buffer_items WHERE source = 'session' AND path = ?").get(path) as
    | { cursor: number | null }
    | undefined;
  return row?.cursor ?? 0;
}

/** The singleton state row. */
export function serverState(state: KnowledgeState): ServerState {
  return state.db.prepare('SELECT last_poll_commit, last_poll_at, last_dispatch_time, buffer_chars_total, last_scan_at, continuation_date, backoff_until, agent_failures FROM server_state WHERE id = 1').get() as ServerState;
}

/** Updates fields of the singleton row. */
export function setServerState(state: KnowledgeState, patch: Partial<ServerState>): void {
  const keys = Object.keys(patch) as Array<keyof ServerState>;
  if (keys.length === 0) return;
  state.write(() => {
    state.db.prepare(`UPDATE server_state SET ${keys.map((key) => `${key} = @${key}`).join(', ')} WHERE id = 1`).run(patch);
  });
}

/** Creates a dispatch in state `building` and moves the given pending items into it, in one transaction. */
export function createDispatch(
  state: KnowledgeState,
  values: Pick<Dispatch, 'kind' | 'reserved' | 'expected_growth' | 'work_root'> & { itemIds: readonly number[]; chars: number },
  now: Date,
): Dispatch {
  const at = now.toISOString();
  return state.write(() => {
    const result = state.db
      .prepare(
        `INSERT INTO dispatches (kind, state, reserved, work_root, items, chars, expected_growth, created_at, updated_at)
         VALUES (?, 'building', ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(values.kind, JSON.stringify(values.reserved), values.work_root, values.itemIds.length, values.chars, values.expected_growth, at, at);
    const id = Number(result.lastInsertRowid);
    const take = state.db.prepare('UPDATE buffer_items SET dispatch_id = ? WHERE id = ? AND dispatch_id IS NULL');
    for (const itemId of values.itemIds) take.run(id, itemId);
    refreshTotal(state);
    return getDispatch(state, id)!;
  });
}

/** One dispatch, or undefined. */
export function getDispatch(state: KnowledgeState, id: number): Dispatch | undefined {
  const row = state.db.prepare('SELECT * FROM dispatches WHERE id = ?').get(id) as DispatchRow | undefined;
  return row && toDispatch(row);
}

/** The latest dispatches, newest first. */
export function recentDispatches(state: KnowledgeState, limit: number): Dispatch[] {
  return (state.db.prepare('SELECT * FROM dispatches ORDER BY id DESC LIMIT ?').all(limit) as DispatchRow[]).map(toDispatch);
}

/** Dispatches in any of the given states, oldest first. */
export function dispatchesIn(state: KnowledgeState, states: readonly DispatchState[]): Dispatch[] {
  const marks = states.map(() => '?').join(', ');
  return (state.db.prepare(`SELECT * FROM dispatches WHERE state IN (${marks}) ORDER BY id`).all(...states) as DispatchRow[]).map(toDispatch);
}

/** Updates a dispatch (state and whatever else is given). */
export function updateDispatch(
  state: KnowledgeState,
  id: number,
  patch: Partial<Omit<Dispatch, 'id' | 'reserved' | 'violations'>> & { violations?: unknown[]; reserved?: string[] },
  now: Date,
): void {
  const row: Record<string, unknown> = { ...patch, updated_at: now.toISOString() };
  if (patch.violations) row.violations = JSON.stringify(patch.violations);
  if (patch.reserved) row.reserved = JSON.stringify(patch.reserved);
  const keys = Object.keys(row);
  state.write(() => {
    state.db.prepare(`UPDATE dispatches SET ${keys.map((key) => `${key} = @${key}`).join(', ')} WHERE id = @id`).run({ ...row, id });
  });
}

/** Gives a dispatch's items back to the buffer (a discarded build, a rejected chunk), in one transaction with its new state. */
export function releaseDispatch(state: KnowledgeState, id: number, newState: DispatchState, now: Date, error?: string): void {
  state.write(() => {
    // An item whose (source, ref) is pending again meanwhile (a doc saved during the dispatch) keeps the newer one.
    state.db
      .prepare(
        `DELETE FROM buffer_items WHERE dispatch_id = ? AND EXISTS (
           SELECT 1 FROM buffer_items AS newer WHERE newer.dispatch_id IS NULL AND newer.source = buffer_items.source AND newer.ref = buffer_items.ref)`,
      )
      .run(id);
    state.db.prepare('UPDATE buffer_items SET dispatch_id = NULL WHERE dispatch_id = ?').run(id);
    state.db.prepare('UPDATE dispatches SET state = ?, error = COALESCE(?, error), updated_at = ? WHERE id = ?').run(newState, error ?? null, now.toISOString(), id);
    refreshTotal(state);
  });
}

/** Records when each claim entered its current status; returns how long (days) each has been in it. */
export function trackStatuses(state: KnowledgeState, statuses: ReadonlyMap<string, string>, now: Date): Map<string, { status: string; since: string }> {
  const at = now.toISOString();
  return state.write(() => {
    const known = new Map(
      (state.db.prepare('SELECT id, status, since FROM entry_status').all() as Array<{ id: string; status: string; since: string }>).map((row) => [row.id, row]),
    );
    const upsert = state.db.prepare('INSERT INTO entry_status (id, status, since) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status, since = excluded.since');
    const result = new Map<string, { status: string; since: string }>();
    for (const [id, status] of statuses) {
      const row = known.get(id);
      if (row && row.status === status) {
        result.set(id, { status, since: row.since });
      } else {
        upsert.run(id, status, at);
        result.set(id, { status, since: at });
      }
    }
    return result;
  });
}
