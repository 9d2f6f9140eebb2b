/**
 * The evidence index: a SQLite file derived from tapes and rebuildable from them at any time
 * (`<cache>/index.sqlite`, `.engram-cache/index.sqlite` in opted-in repositories). It holds the reverse lookup
 * fingerprint → (tape, event, part), the lineage edges between spans, tombstones of deleted spans and continuation
 * edges between tapes. Each index profile (a fingerprint parameter set) is its own file: `index.sqlite` for
 * `default`, `index.<profile>.sqlite` for the others, so profiles can be built, compared and dropped independently.
 * @module
 */
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EngramError, openDatabase, type Database } from '../../core/index.js';
import { INDEX_SCHEMA, INDEX_SCHEMA_VERSION, sql } from './_index-sql.js';
import { editCallIds, eventContent, PART, timeMs, type EventContent } from './_tape-content.js';
import { detectContinuations, recordBoundary } from './continuation.js';
import type { LoadedTape } from './events.js';
import { fingerprintSet } from './fingerprint.js';
import { recordLineage } from './lineage.js';
import { INDEX_PROFILES, type FingerprintParams, type IndexProfile } from './tuning.js';

/** An open index file and the parameters it was built with. */
export interface EvidenceIndex {
  db: Database;
  path: string;
  profile: IndexProfile;
  params: FingerprintParams;
  close(): void;
}

/** Options for {@link openEvidenceIndex}. */
export interface OpenIndexOptions {
  /** Parameter set; must match the one the file was built with. @default 'default' */
  profile?: IndexProfile;
  /** @default 5000 */
  busyTimeoutMs?: number;
}

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

/** What indexing one tape added. */
export interface IndexTapeResult {
  tape_id: string;
  /** False when the tape was already in the index (nothing was written). */
  added: boolean;
  fingerprints: number;
  edges: number;
  tombstones: number;
  continuations: number;
}

/** The index file of a profile inside a cache folder. */
export function indexPathForProfile(cacheDir: string, profile: IndexProfile = 'default'): string {
  return join(cacheDir, profile === 'default' ? 'index.sqlite' : `index.${profile}.sqlite`);
}

/** Whether the file at `path` can be used as is: absent, built by another schema or profile, or ready. */
export function indexState(path: string, profile: IndexProfile = 'default'): 'missing' | 'stale' | 'ready' {
  if (!existsSync(path)) return 'missing';
  const db = openDatabase({ path, busyTimeoutMs: 5000, readonly: true });
  try {
    const has = db.prepare("select 1 from sqlite_master where name = 'meta'").get();
    if (!has) return 'stale';
    return readMeta(db) === metaValue(profile) ? 'ready' : 'stale';
  } finally {
    db.close();
  }
}

function metaValue(profile: IndexProfile): string {
  const { k, w } = INDEX_PROFILES[profile];
  return JSON.stringify({ schema: INDEX_SCHEMA_VERSION, profile, k, w });
}

function readMeta(db: Database): string | undefined {
  return db.prepare("select value from meta where key = 'build'").pluck().get() as string | undefined;
}

/** Opens (creating if needed) the index file of `profile`; a file built otherwise is STORE_UNAVAILABLE. */
export function openEvidenceIndex(path: string, options: OpenIndexOptions = {}): EvidenceIndex {
  const profile = options.profile ?? 'default';
  const db = openDatabase({ path, busyTimeoutMs: options.busyTimeoutMs ?? 5000 });
  try {
    db.exec(INDEX_SCHEMA);
    const expected = metaValue(profile);
    const found = readMeta(db);
    if (found === undefined) db.prepare("insert into meta (key, value) values ('build', ?)").run(expected);
    else if (found !== expected) {
      throw new EngramError('STORE_UNAVAILABLE', `the index at ${path} was built as ${found}, not ${expected}; run 'engram index rebuild'`, {
        details: { path, found, expected },
      });
    }
  } catch (error) {
    db.close();
    throw error;
  }
  return { db, path, profile, params: INDEX_PROFILES[profile], close: () => db.close() };
}

/** Ids of the tapes in the index (tapes whose file is gone but whose tombstones were kept are not listed). */
export function indexedTapeIds(index: EvidenceIndex): Set<string> {
  return new Set(index.db.prepare('select tape_id from tapes where present = 1').pluck().all() as string[]);
}

/** The latest first-event time among indexed tapes (ms), to tell whether a new tape arrives in order. */
export function latestIndexedTime(index: EvidenceIndex): number | null {
  return (index.db.prepare('select max(first_ms) from tapes where present = 1').pluck().get() as number | null) ?? null;
}

/** Adds one tape: evidence, lineage edges, tombstones, continuation edges. Indexing a tape twice adds nothing. */
export function indexTape(index: EvidenceIndex, tape: LoadedTape): IndexTapeResult {
  return addTape(index, tape, true);
}

/** `detect: false` leaves continuation detection to the caller (a rebuild runs it once every tape is in). */
function addTape(index: EvidenceIndex, tape: LoadedTape, detect: boolean): IndexTapeResult & { row?: TapeRow } {
  const { db } = index;
  return db.transaction((): IndexTapeResult & { row?: TapeRow } => {
    const known = sql(db, 'select id, present from tapes where tape_id = ?').get(tape.tape_id) as
      | { id: number; present: number }
      | undefined;
    if (known?.present === 1) return { tape_id: tape.tape_id, added: false, fingerprints: 0, edges: 0, tombstones: 0, continuations: 0 };
    const events = extractEvents(tape, index.params);
    const row = insertTapeRow(index, tape, events, known?.id);
    let fingerprints = 0;
    const insertEvent = sql(db, `insert into events (tape, offset, kind, op, file, start_line, end_line, before_start, before_end,
      time, time_ms, fp_text, fp_before, fp_after) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    const insertEvidence = sql(db, 'insert or ignore into evidence (hash, tape, offset, part) values (?, ?, ?, ?)');
    for (const { offset, content, parts } of events) {
      const event = tape.events[offset]!;
      insertEvent.run(row.id, offset, content.kind, content.op, content.file, content.range?.[0] ?? null, content.range?.[1] ?? null,
        content.beforeRange?.[0] ?? null, content.beforeRange?.[1] ?? null, event.t, timeMs(event.t),
        parts.get(PART.text)?.size ?? 0, parts.get(PART.before)?.size ?? 0, parts.get(PART.after)?.size ?? 0);
      for (const [part, hashes] of parts) {
        for (const hash of hashes) insertEvidence.run(hash, row.id, offset, part);
        fingerprints += hashes.size;
      }
    }
    sql(db, 'update tapes set fingerprint_count = ? where id = ?').run(fingerprints, row.id);
    const lineage = recordLineage(db, row, tape, events);
    recordBoundary(db, row, tape, events, index.params);
    const continuations = detect ? detectContinuations(db, row) : 0;
    return { tape_id: tape.tape_id, added: true, fingerprints, ...lineage, continuations, row };
  })();
}

function extractEvents(tape: LoadedTape, params: FingerprintParams): IndexedEvent[] {
  const editCalls = editCallIds(tape);
  const events: IndexedEvent[] = [];
  tape.events.forEach((event, offset) => {
    const content = eventContent(event, editCalls);
    if (!content) return;
    const parts = new Map<number, Set<bigint>>();
    for (const { part, text } of content.texts) {
      const hashes = fingerprintSet(text, params);
      if (hashes.size > 0) parts.set(part, hashes);
    }
    if (parts.size > 0 || content.file) events.push({ offset, content, parts });
  });
  return events;
}

function insertTapeRow(index: EvidenceIndex, tape: LoadedTape, events: IndexedEvent[], stubId: number | undefined): TapeRow {
  const times = tape.events.map((event) => event.t).filter((t): t is string => t !== null);
  const first = tape.events[0];
  const meta = tape.events.find((event) => event.k === 'meta');
  const cwd = meta?.k === 'meta' ? (meta.cwd ?? null) : null;
  const contentBytes = events.reduce((sum, e) => sum + e.content.texts.reduce((s, t) => s + Buffer.byteLength(t.text), 0), 0);
  const values = [tape.path, times[0] ?? null, times.at(-1) ?? null, timeMs(times[0] ?? null), first?.source.harness ?? 'unknown',
    first?.source.session_id ?? '', cwd, tape.events.length, contentBytes, index.profile];
  if (stubId !== undefined) {
    sql(index.db, `update tapes set present = 1, path = ?, first_time = ?, last_time = ?, first_ms = ?, harness = ?, session_id = ?,
      cwd = ?, event_count = ?, fingerprint_count = 0, content_bytes = ?, profile = ? where id = ?`).run(...values, stubId);
    return { id: stubId, tape_id: tape.tape_id, cwd, first_ms: values[3] as number | null };
  }
  const id = sql(index.db, `insert into tapes (tape_id, path, first_time, last_time, first_ms, harness, session_id, cwd, event_count,
    fingerprint_count, content_bytes, profile) values (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`).run(tape.tape_id, ...values).lastInsertRowid;
  return { id: Number(id), tape_id: tape.tape_id, cwd, first_ms: values[3] as number | null };
}

/** What a rebuild produced. */
export interface RebuildReport {
  path: string;
  profile: IndexProfile;
  tapes: number;
  fingerprints: number;
  edges: number;
  tombstones: number;
  /** Tombstones of tapes absent from this rebuild, kept from the previous index (tombstones are never erased). */
  carried_tombstones: number;
  continuations: number;
  bytes: number;
  ms: number;
}

/**
 * Builds the index of `tapes` into a temporary file beside `path` and renames it over `path`, so readers see the old
 * index or the new one, never half of one. Tapes are indexed in order of their first event (lineage parents must be
 * indexed before their children); tombstones of the old index whose tapes are not given are carried over.
 */
export function rebuildIndex(path: string, tapes: Iterable<LoadedTape>, options: OpenIndexOptions = {}): RebuildReport {
  const started = performance.now();
  const profile = options.profile ?? 'default';
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  removeDatabaseFiles(temporary);
  const ordered = [...tapes].sort(
    (a, b) => (firstMs(a) ?? Infinity) - (firstMs(b) ?? Infinity) || (a.tape_id < b.tape_id ? -1 : a.tape_id > b.tape_id ? 1 : 0),
  );
  const index = openEvidenceIndex(temporary, { ...options, profile });
  const report = { fingerprints: 0, edges: 0, tombstones: 0, continuations: 0, carried_tombstones: 0 };
  try {
    report.carried_tombstones = carryTombstones(index, path, new Set(ordered.map((t) => t.tape_id)));
    const rows: TapeRow[] = [];
    for (const tape of ordered) {
      const { row, ...added } = addTape(index, tape, false);
      if (row) rows.push(row);
      report.fingerprints += added.fingerprints;
      report.edges += added.edges;
      report.tombstones += added.tombstones;
    }
    // Continuations last, so the "fingerprints in most tapes are boilerplate" rule sees every tape.
    index.db.transaction(() => {
      for (const row of rows) report.continuations += detectContinuations(index.db, row);
    })();
    index.db.pragma('wal_checkpoint(TRUNCATE)');
  } catch (error) {
    index.close();
    removeDatabaseFiles(temporary);
    throw error;
  }
  index.close();
  removeDatabaseFiles(path);
  renameSync(temporary, path);
  return { path, profile, tapes: ordered.length, ...report, bytes: statSync(path).size, ms: Math.round(performance.now() - started) };
}

function firstMs(tape: LoadedTape): number | null {
  for (const event of tape.events) if (event.t) return timeMs(event.t);
  return null;
}

function removeDatabaseFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
}

/** Copies tombstones (and a stub row for their tape) of an old index whose tapes are not being indexed again. */
function carryTombstones(index: EvidenceIndex, oldPath: string, keptTapes: ReadonlySet<string>): number {
  if (!existsSync(oldPath)) return 0;
  let old: Database;
  try {
    old = openDatabase({ path: oldPath, busyTimeoutMs: 5000, readonly: true });
  } catch {
    return 0; // an unreadable old index has nothing we can carry
  }
  try {
    // Fingerprints of another profile or schema mean nothing in this one.
    if (!old.prepare("select 1 from sqlite_master where name = 'meta'").get() || readMeta(old) !== metaValue(index.profile)) return 0;
    const rows = old
      .prepare('select t.tape_id, t.path, t.harness, t.session_id, t.first_time, s.* from tombstones s join tapes t on t.id = s.tape')
      .safeIntegers(false)
      .all() as Array<{ tape_id: string; path: string; harness: string; session_id: string; first_time: string | null; tape: number; offset: number; file: string; start_line: number | null; end_line: number | null; time: string | null; fingerprint_count: number }>;
    const hashes = old.prepare('select hash from tombstone_fingerprints where tape = ? and offset = ?').pluck().safeIntegers(true);
    let carried = 0;
    index.db.transaction(() => {
      for (const row of rows.filter((r) => !keptTapes.has(r.tape_id))) {
        let stub = sql(index.db, 'select id from tapes where tape_id = ?').pluck().get(row.tape_id) as number | undefined;
        stub ??= Number(sql(index.db, `insert into tapes (tape_id, path, present, first_time, harness, session_id, event_count,
          fingerprint_count, content_bytes, profile) values (?, ?, 0, ?, ?, ?, 0, 0, 0, ?)`)
          .run(row.tape_id, row.path, row.first_time, row.harness, row.session_id, index.profile).lastInsertRowid);
        sql(index.db, `insert or ignore into tombstones (tape, offset, file, start_line, end_line, time, fingerprint_count)
          values (?, ?, ?, ?, ?, ?, ?)`).run(stub, row.offset, row.file, row.start_line, row.end_line, row.time, row.fingerprint_count);
        const insert = sql(index.db, 'insert or ignore into tombstone_fingerprints (hash, tape, offset) values (?, ?, ?)');
        for (const hash of hashes.all(row.tape, row.offset) as bigint[]) insert.run(hash, stub, row.offset);
        carried++;
      }
    })();
    return carried;
  } finally {
    old.close();
  }
}
