// The index's schema, the rows it is built from, and small SQL helpers shared by the index, lineage, continuation
// and explain modules.
import type BetterSqlite3 from 'better-sqlite3';
import type { Database } from '../../core/index.js';
import type { EventContent } from './_tape-content.js';

/** Bumped whenever a table changes; an index of another version is rebuilt from the tapes (it is derived). */
export const INDEX_SCHEMA_VERSION = 2;

/**
 * Indexes nothing reads while a rebuild adds tapes (only continuation detection, which a rebuild runs at the end): a
 * rebuild drops them after creating the file and creates them once, from sorted data, before that last step.
 */
export const DEFERRED_INDEXES = 'CREATE INDEX IF NOT EXISTS boundary_by_hash ON boundary_fingerprints(hash, region);';
export const DEFERRED_INDEX_NAMES = ['boundary_by_hash'];

// Integers keep the file small: a tape is referred to by its row id (assigned in indexing order, so lineage parents
// always have a smaller id, or the same tape and a smaller offset) and a fingerprint is a signed 64-bit INTEGER.
// Tables are WITHOUT ROWID: their primary key is the lookup, so no second copy of the key is stored.
export const INDEX_SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tapes (
  id INTEGER PRIMARY KEY,
  tape_id TEXT NOT NULL UNIQUE,
  path TEXT NOT NULL,
  -- 0 for a tape kept only for its tombstones: its file was not among the tapes of a rebuild.
  present INTEGER NOT NULL DEFAULT 1,
  first_time TEXT, last_time TEXT, first_ms INTEGER,
  harness TEXT NOT NULL, session_id TEXT NOT NULL, cwd TEXT,
  -- Continuation facts: the tape its session meta says it continues, and a compaction marker near its start.
  previous_tape TEXT, head_compaction INTEGER NOT NULL DEFAULT 0,
  event_count INTEGER NOT NULL,
  fingerprint_count INTEGER NOT NULL,
  content_bytes INTEGER NOT NULL,
  profile TEXT NOT NULL
);
-- Events with text or a code location; fp_* are distinct fingerprint counts per part (for similarity).
CREATE TABLE IF NOT EXISTS events (
  tape INTEGER NOT NULL, offset INTEGER NOT NULL,
  kind TEXT NOT NULL, op TEXT, file TEXT,
  start_line INTEGER, end_line INTEGER, before_start INTEGER, before_end INTEGER,
  time TEXT, time_ms INTEGER,
  fp_text INTEGER NOT NULL, fp_before INTEGER NOT NULL, fp_after INTEGER NOT NULL,
  PRIMARY KEY (tape, offset)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_by_file ON events(file, tape, offset) WHERE file IS NOT NULL;
-- The reverse lookup: fingerprint → (tape, event, part), one row per fingerprint and tape. Its events column packs that tape's
-- events holding it as offset × 4 + part: an INTEGER when there is one (the usual case), else a JSON array, ascending.
-- A tape repeats text (a file read is both a tool result and a code.read; edits repeat what was read), so this row
-- stands for several of the old (hash, tape, offset, part) rows; the view below unpacks them.
-- (INTEGER affinity stores a single posting as an integer, 1-3 bytes; JS numbers would otherwise arrive as REAL.)
CREATE TABLE IF NOT EXISTS evidence_rows (
  hash INTEGER NOT NULL, tape INTEGER NOT NULL, events INTEGER NOT NULL,
  PRIMARY KEY (hash, tape)
) WITHOUT ROWID;
CREATE VIEW IF NOT EXISTS evidence AS
  SELECT r.hash, r.tape, j.value >> 2 AS offset, j.value & 3 AS part FROM evidence_rows r, json_each(r.events) j;
-- Fingerprints of edits' new text (part 2) by hash and by node, what lineage compares: only edits, so it stays small.
CREATE TABLE IF NOT EXISTS span_fingerprints (
  hash INTEGER NOT NULL, tape INTEGER NOT NULL, offset INTEGER NOT NULL, PRIMARY KEY (hash, tape, offset)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS span_by_node ON span_fingerprints(tape, offset);
CREATE VIEW IF NOT EXISTS evidence_view AS
  SELECT e.hash, t.tape_id, e.offset AS event_offset, v.kind, v.file AS file_path, v.time AS timestamp, e.part
  FROM evidence e JOIN tapes t ON t.id = e.tape JOIN events v ON v.tape = e.tape AND v.offset = e.offset;
-- Lineage: the span written by (from) became the span written by (to). Raw facts only.
CREATE TABLE IF NOT EXISTS edges (
  to_tape INTEGER NOT NULL, to_offset INTEGER NOT NULL, from_tape INTEGER NOT NULL, from_offset INTEGER NOT NULL,
  agent_link INTEGER NOT NULL,
  confidence REAL NOT NULL,
  location_delta TEXT NOT NULL CHECK (location_delta IN ('same', 'adjacent', 'moved', 'absent')),
  cardinality TEXT NOT NULL CHECK (cardinality IN ('1:1', '1:N', 'N:1')),
  location_only INTEGER NOT NULL,
  PRIMARY KEY (to_tape, to_offset, from_tape, from_offset, agent_link)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_from ON edges(from_tape, from_offset);
-- Deleted spans; never erased, carried over by rebuilds even when their tape is gone.
CREATE TABLE IF NOT EXISTS tombstones (
  tape INTEGER NOT NULL, offset INTEGER NOT NULL, file TEXT NOT NULL,
  start_line INTEGER, end_line INTEGER, time TEXT, fingerprint_count INTEGER NOT NULL,
  PRIMARY KEY (tape, offset)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tombstone_fingerprints (
  hash INTEGER NOT NULL, tape INTEGER NOT NULL, offset INTEGER NOT NULL, PRIMARY KEY (hash, tape, offset)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tombstone_by_node ON tombstone_fingerprints(tape, offset);
-- Conversation fingerprints at the start (region 0) and end (region 1) of each tape, boilerplate removed.
CREATE TABLE IF NOT EXISTS boundary_fingerprints (
  tape INTEGER NOT NULL, region INTEGER NOT NULL, hash INTEGER NOT NULL, PRIMARY KEY (tape, region, hash)
) WITHOUT ROWID;
${DEFERRED_INDEXES}
CREATE TABLE IF NOT EXISTS continuations (
  to_tape INTEGER NOT NULL, from_tape INTEGER NOT NULL,
  confidence REAL NOT NULL, shared INTEGER NOT NULL,
  signal TEXT NOT NULL CHECK (signal IN ('overlap', 'compaction', 'previous_tape')),
  PRIMARY KEY (to_tape, from_tape)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS continuations_from ON continuations(from_tape);
`;

/** A prepared statement with positional parameters. */
export type Statement = BetterSqlite3.Statement<unknown[], unknown>;

const cache = new WeakMap<Database, Map<string, Statement>>();

/** A prepared statement, prepared once per connection. */
export function sql(db: Database, text: string): Statement {
  let statements = cache.get(db);
  if (!statements) cache.set(db, (statements = new Map()));
  let statement = statements.get(text);
  if (!statement) statements.set(text, (statement = db.prepare<unknown[], unknown>(text)));
  return statement;
}

/** Hashes as a JSON array for `IN (SELECT value FROM json_each(?))`: one statement for any number of hashes. */
export function hashList(hashes: Iterable<bigint>): string {
  return `[${[...hashes].join(',')}]`;
}

/** A node of the lineage graph: one edit (its new span, or the tombstone of what it deleted) or a read. */
export interface SpanNode {
  tape: number;
  offset: number;
}

export const nodeKey = (node: SpanNode): string => `${node.tape}:${node.offset}`;

/** One tape's event, its extracted content and the fingerprint set of each part. */
export interface IndexedEvent {
  offset: number;
  content: EventContent;
  parts: Map<number, Set<bigint>>;
}

/** The tape row being indexed, as lineage and continuation detection see it. */
export interface TapeRow {
  id: number;
  tape_id: string;
  cwd: string | null;
  first_ms: number | null;
}
