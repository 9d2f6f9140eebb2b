/**
 * Reading a Go engram database (../shared/seeds/001 §3) without trusting it: the file's size and SQLite header are
 * checked before SQLite reads a page, the schema before a row, and every row is read in one snapshot. Nothing here
 * writes to it.
 * @module
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { EngramError, loadSqlite } from '../../core/index.js';
import { GoExportInSchema, type GoExportIn } from './schema.js';

/** The largest database `engram import --from-go` reads unless told otherwise (heavy Go users have tens of MB). */
export const GO_DB_MAX_BYTES = 1024 * 1024 * 1024;
/** The newest schema generation of the Go engram we know (its `PRAGMA user_version`). */
export const GO_SCHEMA_KNOWN = 8;

const MAGIC = 'SQLite format 3\u0000';

/** What kind of file a path holds, judged by its first bytes. */
export function sniffFile(path: string): 'sqlite' | 'json' | 'other' | 'empty' {
  const head = readHead(path, 16);
  if (head.length === 0) return 'empty';
  if (head.toString('latin1') === MAGIC) return 'sqlite';
  return /^\s*[[{]/.test(head.toString('utf8')) ? 'json' : 'other';
}

function readHead(path: string, bytes: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const read = readSync(fd, buffer, 0, bytes, 0);
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`;

/**
 * Checks a file is a whole SQLite database no larger than `maxBytes`, from its size and its 100-byte header only:
 * a non-SQLite file, a truncated one (the header counts more pages than the file holds) and an oversized one are
 * refused before anything else is read.
 */
export function checkSqliteFile(path: string, maxBytes: number = GO_DB_MAX_BYTES): { bytes: number } {
  let size: number;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) throw new EngramError('INVALID_INPUT', `${path} is not a file`);
    size = stats.size;
  } catch (error) {
    if (error instanceof EngramError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new EngramError(code === 'ENOENT' ? 'NOT_FOUND' : 'IO', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  if (size === 0) throw new EngramError('INVALID_INPUT', `${path} is empty: not a Go engram database`);
  const header = readHead(path, 100);
  if (header.subarray(0, 16).toString('latin1') !== MAGIC) {
    throw new EngramError('INVALID_INPUT', `${path} is not a SQLite database (its first bytes are not "SQLite format 3"): not a Go engram database`);
  }
  if (size > maxBytes) {
    throw new EngramError('INVALID_INPUT', `${path} is ${mb(size)}; the largest Go engram database Engram imports is ${mb(maxBytes)} (--max-bytes raises it)`, {
      details: { bytes: size, max_bytes: maxBytes },
    });
  }
  if (header.length < 100) throw new EngramError('INVALID_INPUT', `${path} is truncated: ${size} bytes, shorter than a SQLite header`);
  const raw = header.readUInt16BE(16);
  const pageSize = raw === 1 ? 65_536 : raw;
  const pages = header.readUInt32BE(28);
  // The page count in the header is valid only when written by the same change as the counter beside it.
  const valid = header.readUInt32BE(92) === header.readUInt32BE(24);
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) throw new EngramError('INVALID_INPUT', `${path} has a damaged SQLite header (page size ${raw})`);
  if (valid && pages > 0 && pages * pageSize > size) {
    throw new EngramError('INVALID_INPUT', `${path} is truncated: its header counts ${pages} pages of ${pageSize} bytes (${mb(pages * pageSize)}) but the file holds ${mb(size)}`, {
      details: { bytes: size, expected_bytes: pages * pageSize },
    });
  }
  return { bytes: size };
}

/** Columns each table must have for us to read it; the rest are optional. */
const REQUIRED: Record<string, string[]> = {
  sessions: ['id', 'project'],
  observations: ['id', 'session_id', 'type', 'title', 'content', 'created_at'],
  user_prompts: ['id', 'session_id', 'content', 'created_at'],
};
const OPTIONAL: Record<string, string[]> = {
  sessions: ['directory', 'started_at', 'ended_at', 'summary'],
  observations: ['sync_id', 'tool_name', 'project', 'scope', 'topic_key', 'revision_count', 'duplicate_count', 'last_seen_at', 'updated_at', 'deleted_at'],
  user_prompts: ['sync_id', 'project'],
};

type Sqlite = InstanceType<ReturnType<typeof loadSqlite>>;

/** The Go engram's data in a database file, as its export shape. Throws a specific INVALID_INPUT, UNSUPPORTED_VERSION or BUSY. */
export function readGoDatabase(path: string, options: { maxBytes?: number } = {}): GoExportIn {
  checkSqliteFile(path, options.maxBytes);
  const Database = loadSqlite();
  let db: Sqlite;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: 5_000 });
  } catch (error) {
    throw new EngramError('INVALID_INPUT', `${path} cannot be opened as a SQLite database: ${(error as Error).message}`, { cause: error });
  }
  try {
    const columns = (table: string): Set<string> => new Set((db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name));
    let tables: Set<string>;
    let version: number;
    try {
      tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
      version = Number(db.pragma('user_version', { simple: true }));
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new EngramError('INVALID_INPUT', `${path} is damaged: ${String(check)}`);
    } catch (error) {
      if (error instanceof EngramError) throw error;
      throw new EngramError('INVALID_INPUT', `${path} is damaged or not a database: ${(error as Error).message}`, { cause: error });
    }
    if (tables.has('engrams')) {
      throw new EngramError('INVALID_INPUT', `${path} is an Engram store, not the Go engram's database: to bring it in, \`engram export\` there and \`engram import\` the file`);
    }
    const missing = Object.entries(REQUIRED).flatMap(([table, needed]) => {
      if (!tables.has(table)) return [`table ${table}`];
      const have = columns(table);
      return needed.filter((column) => !have.has(column)).map((column) => `${table}.${column}`);
    });
    if (missing.length > 0) {
      throw new EngramError('UNSUPPORTED_VERSION', `${path} is not a Go engram database this Engram can read (missing ${missing.join(', ')})`, { details: { missing } });
    }
    if (version > GO_SCHEMA_KNOWN) {
      throw new EngramError(
        'UNSUPPORTED_VERSION',
        `${path} has Go engram schema ${version}, newer than the ones this Engram knows (up to ${GO_SCHEMA_KNOWN}); export it with that engram (\`engram export\`) and import the JSON file instead`,
        { details: { schema_version: version, known: GO_SCHEMA_KNOWN } },
      );
    }
    const select = (table: string, order: string): unknown[] => {
      const have = columns(table);
      const names = [...REQUIRED[table]!, ...OPTIONAL[table]!.filter((column) => have.has(column))];
      return db.prepare(`SELECT ${names.join(', ')} FROM ${table} ORDER BY ${order}`).all();
    };
    let raw: { sessions: unknown[]; observations: unknown[]; prompts: unknown[] };
    try {
      raw = db.transaction(() => ({
        sessions: select('sessions', 'rowid'),
        observations: select('observations', 'id'),
        prompts: select('user_prompts', 'id'),
      }))();
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'SQLITE_BUSY') throw new EngramError('BUSY', `${path} is locked by another process: stop the Go engram and try again`, { cause: error });
      throw new EngramError('INVALID_INPUT', `${path} could not be read: ${(error as Error).message}`, { cause: error });
    }
    const parsed = GoExportInSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new EngramError('INVALID_INPUT', `${path} holds a row Engram cannot read: ${issue?.path.join('.')}: ${issue?.message}`);
    }
    return parsed.data;
  } finally {
    db.close();
  }
}
