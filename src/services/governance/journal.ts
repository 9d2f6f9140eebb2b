/**
 * `$ENGRAM_HOME/audit.jsonl`: the audit log as one JSON line per entry, for people and tools that read files.
 *
 * SQLite and a file cannot share a transaction, so the two cannot disagree by construction instead: the SQLite row is
 * written in the transaction of the change (it commits or rolls back with it) and is the source of truth; the file is
 * a prefix of the rows in sequence order, appended after commit under a lock file. If a crash falls between the
 * commit and the append — or an append was torn half-way — the next append or the next open of the store finds the
 * file's last complete sequence number, cuts a torn tail, and appends every row after it. A line is the canonical
 * JSON of its row and rows are chained by hash, so `verifyJournal` can tell a missing, altered or corrupted line from
 * the database.
 * @module
 */
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EngramError, type Store } from '../../core/index.js';
import { canonicalJson, entriesAfter, entryHash, type AuditEntry } from './audit.js';

/** Where the journal of a store lives (beside engram.db), or null for an in-memory store. */
export function journalPath(store: Pick<Store, 'path'>): string | null {
  return store.path === ':memory:' || store.path === '' ? null : join(dirname(store.path), 'audit.jsonl');
}

/** One line of the journal. */
export const journalLine = (entry: AuditEntry): string => canonicalJson(entry);

const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 3_000;
const TAIL_BYTES = 1 << 20;

const sleep = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes `<journal>.lock` (exclusive create); a lock whose process died or that is older than 30 s is taken over. */
function withLock<T>(path: string, fn: () => T): T | undefined {
  const lock = `${path}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        const owner = Number(readFileSync(lock, 'utf8'));
        if ((Number.isInteger(owner) && owner > 0 && !alive(owner)) || Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) {
          rmSync(lock, { force: true });
          continue;
        }
      } catch {
        continue; // Released between our attempts.
      }
      if (Date.now() > deadline) return undefined;
      sleep(10);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** The sequence number of the file's last complete line, cutting a torn tail (a crash mid-append) first. */
function lastSeq(fd: number): { seq: number; repaired: boolean } {
  const size = fstatSync(fd).size;
  if (size === 0) return { seq: 0, repaired: false };
  const length = Math.min(size, TAIL_BYTES);
  const buffer = Buffer.alloc(length);
  readSync(fd, buffer, 0, length, size - length);
  let text = buffer.toString('utf8');
  let repaired = false;
  if (!text.endsWith('\n')) {
    // A torn append: drop the partial line (its row is still in SQLite and is written again below).
    const cut = text.lastIndexOf('\n');
    const keep = size - (text.length - (cut + 1));
    ftruncateSync(fd, cut >= 0 ? keep : size - length);
    text = cut >= 0 ? text.slice(0, cut + 1) : '';
    repaired = true;
  }
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      const seq = (JSON.parse(lines[i] as string) as { seq?: unknown }).seq;
      if (typeof seq === 'number') return { seq, repaired };
    } catch {
      // A corrupted line: look further back; verifyJournal reports it.
    }
  }
  return { seq: 0, repaired };
}

/** What a journal sync did. */
export interface JournalSync {
  path: string | null;
  appended: number;
  /** A torn last line was cut (and its row written again). */
  repaired: boolean;
  /** The lock was busy: the next sync catches up. */
  skipped: boolean;
}

/**
 * Appends every audit row the journal lacks (all rows after its last sequence number), then fsyncs. Called after each
 * mutation commits and when the CLI or the server opens the store. Never throws: the SQLite rows stay the truth and
 * the next sync catches up; a problem is returned for the caller to log.
 */
export function syncJournal(store: Store): JournalSync & { error?: string } {
  const path = journalPath(store);
  if (!path) return { path, appended: 0, repaired: false, skipped: false };
  // Inside a transaction the rows read here might still roll back: the caller syncs once it has committed.
  if (store.db.inTransaction) return { path, appended: 0, repaired: false, skipped: true };
  try {
    const done = withLock(path, () => {
      const fd = openSync(path, existsSync(path) ? 'r+' : 'w+', 0o600);
      try {
        const { seq, repaired } = lastSeq(fd);
        let appended = 0;
        let position = fstatSync(fd).size;
        for (let after = seq; ; ) {
          const entries = entriesAfter(store, after, 1_000);
          if (entries.length === 0) break;
          const text = entries.map((entry) => `${journalLine(entry)}\n`).join('');
          position += writeSync(fd, text, position, 'utf8');
          appended += entries.length;
          after = (entries.at(-1) as AuditEntry).seq;
        }
        if (appended > 0 || repaired) fsyncSync(fd);
        return { path, appended, repaired, skipped: false };
      } finally {
        closeSync(fd);
      }
    });
    return done ?? { path, appended: 0, repaired: false, skipped: true };
  } catch (error) {
    return { path, appended: 0, repaired: false, skipped: true, error: (error as Error).message };
  }
}

/** One problem `verifyJournal` found. */
export interface JournalProblem {
  line: number | null;
  seq: number | null;
  problem: 'corrupted' | 'missing' | 'altered' | 'unknown' | 'out-of-order' | 'broken-chain';
  message: string;
}

/** What `engram audit verify` reports. */
export interface JournalReport {
  path: string | null;
  rows: number;
  lines: number;
  ok: boolean;
  problems: JournalProblem[];
}

/**
 * Compares the journal with the SQLite rows line by line, and checks the hash chain of the rows themselves. A line
 * that does not parse, differs from its row, or has no row is reported with its line number; rows missing from the
 * file are reported too (the next sync appends those at the end, it never rewrites the file).
 */
export function verifyJournal(store: Store): JournalReport {
  const path = journalPath(store);
  const rows = entriesAfter(store, 0, Number.MAX_SAFE_INTEGER);
  const problems: JournalProblem[] = [];
  let previous = '';
  for (const row of rows) {
    const { hash, ...rest } = row;
    if (row.prev_hash !== previous || entryHash(rest) !== hash) {
      problems.push({ line: null, seq: row.seq, problem: 'broken-chain', message: `audit row ${row.seq} does not chain to the row before it` });
    }
    previous = hash;
  }
  if (!path) return { path, rows: rows.length, lines: 0, ok: problems.length === 0, problems };
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new EngramError('IO', `cannot read ${path}: ${(error as Error).message}`);
  }
  const bySeq = new Map(rows.map((row) => [row.seq, row]));
  const seen = new Set<number>();
  const lines = text.split('\n');
  let count = 0;
  let last = 0;
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    count++;
    let parsed: AuditEntry;
    try {
      parsed = JSON.parse(line) as AuditEntry;
    } catch {
      problems.push({ line: index + 1, seq: null, problem: 'corrupted', message: `line ${index + 1} is not JSON` });
      return;
    }
    const row = typeof parsed.seq === 'number' ? bySeq.get(parsed.seq) : undefined;
    if (!row) {
      problems.push({ line: index + 1, seq: parsed.seq ?? null, problem: 'unknown', message: `line ${index + 1} names audit row ${String(parsed.seq)}, which the store does not have` });
      return;
    }
    if (parsed.seq <= last) problems.push({ line: index + 1, seq: parsed.seq, problem: 'out-of-order', message: `line ${index + 1} repeats or goes back to row ${parsed.seq}` });
    last = Math.max(last, parsed.seq);
    seen.add(parsed.seq);
    if (line !== journalLine(row)) problems.push({ line: index + 1, seq: row.seq, problem: 'altered', message: `line ${index + 1} differs from audit row ${row.seq}` });
  });
  for (const row of rows) {
    if (!seen.has(row.seq)) problems.push({ line: null, seq: row.seq, problem: 'missing', message: `audit row ${row.seq} (${row.op}) is not in the journal yet` });
  }
  return { path, rows: rows.length, lines: count, ok: problems.length === 0, problems };
}
