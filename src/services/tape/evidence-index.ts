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
import { DEFERRED_INDEX_NAMES, DEFERRED_INDEXES, hashList, INDEX_SCHEMA, INDEX_SCHEMA_VERSION, sql, type IndexedEvent, type TapeRow } from './_index-sql.js';
import { editCallIds, eventContent, firstMs, PART, timeMs, type EventContent } from './_tape-content.js';
import { detectContinuations, recordBoundary } from './continuation.js';
import type { LoadedTape } from './events.js';
import { fingerprintSet } from './fingerprint.js';
import { recordLineage } from './lineage.js';
import { FINGERPRINT_HASH, INDEX_BUILD, INDEX_PROFILES, type FingerprintParams, type IndexProfile } from './tuning.js';

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
  return JSON.stringify({ schema: INDEX_SCHEMA_VERSION, hash: FINGERPRINT_HASH, profile, k, w });
}

function readMeta(db: Database): string | undefined {
  return db.prepare("select value from meta where key = 'build'").pluck().get() as string | undefined;
}

/** Opens (creating if needed) the index file of `profile`; a file built otherwise is STORE_UNAVAILABLE. */
export function openEvidenceIndex(path: string, options: OpenIndexOptions = {}): EvidenceIndex {
  const profile = options.profile ?? 'default';
  const db = openDatabase({ path, busyTimeoutMs: options.busyTimeoutMs ?? 5000 });
  try {
    const expected = metaValue(profile);
    // Checked before the schema is applied, so a file built otherwise is left exactly as it was.
    const found = db.prepare("select 1 from sqlite_master where name = 'meta'").get() ? readMeta(db) : undefined;
    if (found === undefined) {
      db.exec(INDEX_SCHEMA);
      db.prepare("insert or ignore into meta (key, value) values ('build', ?)").run(expected);
    } else if (found !== expected) {
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

/**
 * Evidence postings waiting to be written, as parallel typed columns (no object per posting): fingerprint, tape row id
 * and offset × 4 + part. They are appended in (tape, offset, part) order, so a stable sort by fingerprint alone puts
 * them in key order, and one tape's postings of a fingerprint end up side by side, ready to be packed into one row.
 * A buffer is flushed only between tapes, so a (fingerprint, tape) row is never split across two writes.
 */
class EvidenceBuffer {
  hashes = new BigInt64Array(1024);
  tapes = new Int32Array(1024);
  codes = new Int32Array(1024);
  rows = 0;

  push(hash: bigint, tape: number, code: number): void {
    if (this.rows === this.hashes.length) {
      const [hashes, tapes, codes] = [this.hashes, this.tapes, this.codes];
      this.hashes = new BigInt64Array(hashes.length * 2);
      this.tapes = new Int32Array(hashes.length * 2);
      this.codes = new Int32Array(hashes.length * 2);
      this.hashes.set(hashes);
      this.tapes.set(tapes);
      this.codes.set(codes);
    }
    this.hashes[this.rows] = hash;
    this.tapes[this.rows] = tape;
    this.codes[this.rows++] = code;
  }

  /** Posting numbers in signed 64-bit fingerprint order, ties in insertion order: LSD radix sort, four 16-bit digits. */
  order(): Uint32Array {
    const count = this.rows;
    // Each fingerprint's 32-bit halves, read through a view of the same memory (in the platform's byte order).
    const halves = new Int32Array(this.hashes.buffer, 0, count * 2);
    let from = new Uint32Array(count);
    let to = new Uint32Array(count);
    for (let i = 0; i < count; i++) from[i] = i;
    const digits = new Uint16Array(count);
    const buckets = new Uint32Array(0x10000);
    for (let pass = 0; pass < 4; pass++) {
      const word = pass < 2 ? LOW_WORD : 1 - LOW_WORD;
      const shift = pass % 2 === 0 ? 0 : 16;
      const flip = pass === 3 ? 0x8000 : 0; // the top digit carries the sign
      for (let row = 0; row < count; row++) digits[row] = ((halves[row * 2 + word]! >>> shift) & 0xffff) ^ flip;
      buckets.fill(0);
      for (let row = 0; row < count; row++) buckets[digits[row]!]!++;
      for (let b = 0, sum = 0; b < 0x10000; b++) {
        const size = buckets[b]!;
        buckets[b] = sum;
        sum += size;
      }
      for (let i = 0; i < count; i++) {
        const row = from[i]!;
        to[buckets[digits[row]!]!++] = row;
      }
      [from, to] = [to, from];
    }
    return from;
  }

  /**
   * Writes the postings as evidence rows in (fingerprint, tape) order, so the B-tree is built by appending rather
   * than by inserting all over it, `insertBatch` rows per statement; then empties the buffer.
   */
  flush(db: Database): void {
    const order = this.order();
    const { hashes, tapes, codes } = this;
    const halves = new Int32Array(hashes.buffer, 0, this.rows * 2);
    const batch = INDEX_BUILD.insertBatch;
    const many = sql(db, `insert or ignore into evidence_rows (hash, tape, events) values ${Array(batch).fill('(?, ?, ?)').join(', ')}`);
    const one = sql(db, 'insert or ignore into evidence_rows (hash, tape, events) values (?, ?, ?)');
    const values: Array<bigint | number | string> = new Array(batch * 3);
    let filled = 0;
    for (let i = 0; i < order.length; ) {
      const first = order[i]!;
      const tape = tapes[first]!;
      const low = halves[first * 2]!;
      const high = halves[first * 2 + 1]!;
      // The run of postings with this fingerprint and tape (compared by halves: no BigInt per posting).
      const start = i;
      for (i++; i < order.length; i++) {
        const row = order[i]!;
        if (tapes[row] !== tape || halves[row * 2] !== low || halves[row * 2 + 1] !== high) break;
      }
      let events: number | string = codes[first]!;
      if (i - start > 1) {
        events = `[${events}`;
        for (let j = start + 1; j < i; j++) events += `,${codes[order[j]!]!}`;
        events += ']';
      }
      values[filled++] = hashes[first]!;
      values[filled++] = tape;
      values[filled++] = events;
      if (filled === values.length) {
        many.run(values);
        filled = 0;
      }
    }
    for (let at = 0; at < filled; at += 3) one.run(values[at], values[at + 1], values[at + 2]);
    this.rows = 0;
  }
}

/** Which 32-bit word of a BigInt64Array element holds its low half. */
const LOW_WORD = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;

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
  const { row: _row, ...result } = addTape(index, tape, true);
  return result;
}

/**
 * Adds tapes in the order given (as {@link indexTape}, one by one) in one transaction, holding their evidence rows
 * back to write them sorted: what a refresh that finds many new tapes uses.
 */
export function indexTapes(index: EvidenceIndex, tapes: Iterable<LoadedTape>): IndexTapeResult[] {
  return index.db.transaction(() => {
    const buffer = new EvidenceBuffer();
    const results: IndexTapeResult[] = [];
    for (const tape of tapes) {
      const { row: _row, ...result } = addTape(index, tape, true, buffer);
      results.push(result);
      if (buffer.rows >= INDEX_BUILD.bufferedRows) buffer.flush(index.db);
    }
    buffer.flush(index.db);
    return results;
  })();
}

/**
 * `detect: false` leaves continuation detection to the caller (a rebuild runs it once every tape is in). A `buffer`
 * collects the evidence rows for the caller to write later, sorted: safe because nothing reads `evidence_rows` while
 * tapes are added (lineage reads span_fingerprints and tombstones, continuation detection boundary_fingerprints).
 */
function addTape(index: EvidenceIndex, tape: LoadedTape, detect: boolean, buffer?: EvidenceBuffer): IndexTapeResult & { row?: TapeRow } {
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
    const insertSpan = sql(db, 'insert or ignore into span_fingerprints (hash, tape, offset) select value, ?, ? from json_each(?)');
    // Batches collect every tape's postings and write them together; a single tape writes its own at once.
    const postings = buffer ?? new EvidenceBuffer();
    for (const { offset, content, parts } of events) {
      const event = tape.events[offset]!;
      insertEvent.run(row.id, offset, content.kind, content.op, content.file, content.range?.[0] ?? null, content.range?.[1] ?? null,
        content.beforeRange?.[0] ?? null, content.beforeRange?.[1] ?? null, event.t, timeMs(event.t),
        parts.get(PART.text)?.size ?? 0, parts.get(PART.before)?.size ?? 0, parts.get(PART.after)?.size ?? 0);
      for (const part of [PART.text, PART.before, PART.after]) {
        const hashes = parts.get(part);
        if (!hashes) continue;
        const code = offset * 4 + part;
        for (const hash of hashes) postings.push(hash, row.id, code);
        if (part === PART.after) insertSpan.run(row.id, offset, hashList(hashes));
        fingerprints += hashes.size;
      }
    }
    if (!buffer) postings.flush(db);
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
    bulkLoadMode(index.db);
    report.carried_tombstones = carryTombstones(index, path, new Set(ordered.map((t) => t.tape_id)));
    index.db.transaction(() => {
      const rows: TapeRow[] = [];
      // Evidence is written last (or whenever the buffer is full), sorted: appending to a B-tree costs a third of
      // inserting at random places. Nothing reads it while tapes are added (lineage reads span_fingerprints).
      const buffer = new EvidenceBuffer();
      for (const tape of ordered) {
        const { row, ...added } = addTape(index, tape, false, buffer);
        if (row) rows.push(row);
        report.fingerprints += added.fingerprints;
        report.edges += added.edges;
        report.tombstones += added.tombstones;
        if (buffer.rows >= INDEX_BUILD.bufferedRows) buffer.flush(index.db);
      }
      buffer.flush(index.db);
      index.db.exec(DEFERRED_INDEXES);
      // Continuations last, so the "fingerprints in most tapes are boilerplate" rule sees every tape.
      for (const row of rows) report.continuations += detectContinuations(index.db, row);
    })();
    // Back to WAL, as every other writer opens it, before the file is renamed into place.
    index.db.pragma('journal_mode = WAL');
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

/**
 * A rebuild writes a private temporary file that is renamed into place only once complete, so a crash loses nothing
 * and durability is pointless: the journal in memory (a fresh file has almost nothing to roll back), no syncs, one
 * transaction, and a page cache big enough for the evidence
 * B-tree (inserts arrive in hash order, i.e. anywhere in it). A limit, not an allocation.
 */
function bulkLoadMode(db: Database): void {
  db.pragma('journal_mode = MEMORY');
  db.pragma('synchronous = OFF');
  db.pragma(`cache_size = -${INDEX_BUILD.bulkCacheKib}`);
  db.pragma('temp_store = MEMORY');
  for (const name of DEFERRED_INDEX_NAMES) db.exec(`drop index if exists ${name}`);
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
        sql(index.db, 'insert or ignore into tombstone_fingerprints (hash, tape, offset) select value, ?, ? from json_each(?)')
          .run(stub, row.offset, hashList(hashes.all(row.tape, row.offset) as bigint[]));
        carried++;
      }
    })();
    return carried;
  } finally {
    old.close();
  }
}
