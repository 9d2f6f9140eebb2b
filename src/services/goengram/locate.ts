/**
 * Finding the Go engram's data to move in from, and moving its database out of our way: the Go engram keeps it in
 * `~/.engram/engram.db` (`$ENGRAM_DATA_DIR`), the very path of our store in the default home.
 * @module
 */
import { existsSync, renameSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { EngramError, loadSqlite, type EngramEnv } from '../../core/index.js';
import { sniffFile } from './database.js';

/** What to import: a database or an export JSON file, and where a database moved from when it was in our way. */
export interface GoSource {
  path: string;
  kind: 'sqlite' | 'json';
  /** The Go engram's database sat at our store's path; it was moved to `path` first. */
  moved_from: string | null;
}

/** Whether a SQLite file is a Go engram database (observations, no engrams), without trusting it further. */
function isGoDatabase(path: string): boolean {
  if (!existsSync(path) || sniffFile(path) !== 'sqlite') return false;
  const Database = loadSqlite();
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true, timeout: 2_000 });
    try {
      const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
      return tables.has('observations') && !tables.has('engrams');
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
}

/** The first free name beside `path`: go-engram.db, go-engram.1.db, … */
function freeName(folder: string): string {
  for (let n = 0; ; n++) {
    const candidate = join(folder, n === 0 ? 'go-engram.db' : `go-engram.${n}.db`);
    if (!existsSync(candidate) && !existsSync(`${candidate}-wal`)) return candidate;
  }
}

/**
 * Moves the Go engram's database away from our store's path (with its WAL folded in first), so our store can be
 * created there. Refuses (BUSY) while another process has it open: the Go engram's server or MCP process would go on
 * writing into a file that moved under it.
 */
export function moveGoDatabase(path: string): string {
  const Database = loadSqlite();
  let db;
  try {
    db = new Database(path, { fileMustExist: true, timeout: 0 });
  } catch (error) {
    throw new EngramError('IO', `cannot open ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) {
      throw new EngramError(
        'BUSY',
        `the Go engram has ${path} open (its server, TUI or MCP process): stop it, then run \`engram import --from-go\` again`,
        { cause: error, details: { path } },
      );
    }
    throw new EngramError('IO', `cannot prepare ${path} for the move: ${(error as Error).message}`, { cause: error });
  }
  db.close();
  const target = freeName(dirname(path));
  renameSync(path, target);
  for (const suffix of ['-wal', '-shm']) if (existsSync(`${path}${suffix}`)) renameSync(`${path}${suffix}`, `${target}${suffix}`);
  return target;
}

/**
 * What `engram import --from-go [path]` reads: the path given (a database or an export JSON file), else the Go
 * engram's database (`$ENGRAM_DATA_DIR/engram.db`, else `~/.engram/engram.db`), else one moved aside by an earlier
 * run (`go-engram.db` in our home). When the Go engram's database is our store's own path it is moved aside first.
 */
export function locateGoSource(options: { given?: string | undefined; cwd: string; env: EngramEnv; storePath: string }): GoSource {
  const ourStore = resolve(options.storePath);
  if (options.given !== undefined) {
    const path = resolve(options.cwd, options.given);
    if (!existsSync(path)) throw new EngramError('NOT_FOUND', `${path} does not exist`);
    const kind = sniffFile(path);
    if (kind === 'json') return { path, kind, moved_from: null };
    if (path === ourStore && isGoDatabase(path)) return { path: moveGoDatabase(path), kind: 'sqlite', moved_from: path };
    return { path, kind: 'sqlite', moved_from: null };
  }
  const candidates = [
    ...(options.env.goDataDir ? [join(options.env.goDataDir, 'engram.db')] : []),
    join(options.env.userHome, '.engram', 'engram.db'),
    join(dirname(ourStore), 'go-engram.db'),
  ].map((path) => resolve(path));
  for (const path of [...new Set(candidates)]) {
    if (!isGoDatabase(path)) continue;
    if (path === ourStore) return { path: moveGoDatabase(path), kind: 'sqlite', moved_from: path };
    return { path, kind: 'sqlite', moved_from: null };
  }
  throw new EngramError('NOT_FOUND', `no Go engram database found (looked at ${[...new Set(candidates)].join(', ')}); give its path: engram import --from-go <path>`);
}
