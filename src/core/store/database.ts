import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { EngramError } from '../errors.js';

/** A better-sqlite3 connection. */
export type Database = BetterSqlite3.Database;

// better-sqlite3 and sqlite-vec are native; they stay outside the bundle and load only when a store is opened, so
// a missing or mis-built binary becomes a clear error instead of a crash at import time.
const nodeRequire = createRequire(import.meta.url);

const NATIVE_FAILURE = /bindings file|NODE_MODULE_VERSION|ERR_DLOPEN_FAILED|better_sqlite3\.node|Cannot find module 'better-sqlite3'/;

/** better-sqlite3's JavaScript carried by the bundle itself (the hooks' in-process path), see {@link useBundledSqlite}. */
let bundledSqlite: typeof BetterSqlite3 | undefined;
/** The bundled constructor bound to the runtime's binary; `null` when that binary is not where the build puts it. */
let boundSqlite: typeof BetterSqlite3 | null | undefined;

/**
 * Makes {@link loadSqlite} use a copy of better-sqlite3's JavaScript that a bundle carries (the hooks' in-process
 * path: compiled with the bundle's V8 code cache instead of ~13 CommonJS files read, resolved and compiled, and the
 * `bindings` package's search for the binary, each time a hook falls back), with the runtime's own native binary
 * passed as `nativeBinding`. When that binary is not at `build/Release/better_sqlite3.node` of the runtime's
 * better-sqlite3, the package is loaded from node_modules as usual (and `bindings` looks for it).
 */
export function useBundledSqlite(Sqlite: typeof BetterSqlite3): void {
  bundledSqlite = Sqlite;
  boundSqlite = undefined;
}

function fromBundle(): typeof BetterSqlite3 | null {
  if (!bundledSqlite) return null;
  if (boundSqlite !== undefined) return boundSqlite;
  let nativeBinding: string | null = null;
  try {
    nativeBinding = join(dirname(nodeRequire.resolve('better-sqlite3/package.json')), 'build', 'Release', 'better_sqlite3.node');
  } catch {
    // No better-sqlite3 beside the bundle: loadSqlite's own require says so.
  }
  if (!nativeBinding || !existsSync(nativeBinding)) return (boundSqlite = null);
  const Base = bundledSqlite;
  const binary = nativeBinding;
  boundSqlite = class extends Base {
    constructor(filename?: string | Buffer, options: BetterSqlite3.Options = {}) {
      super(filename, { ...options, nativeBinding: binary });
    }
  } as unknown as typeof BetterSqlite3;
  return boundSqlite;
}

/** Loads the better-sqlite3 constructor or throws NATIVE_MODULE_MISSING. */
export function loadSqlite(): typeof BetterSqlite3 {
  try {
    return fromBundle() ?? (nodeRequire('better-sqlite3') as typeof BetterSqlite3);
  } catch (error) {
    throw nativeError('better-sqlite3', error);
  }
}

function nativeError(name: string, error: unknown): EngramError {
  return new EngramError(
    'NATIVE_MODULE_MISSING',
    `${name} could not be loaded (${(error as Error).message.split('\n')[0]}); run ./install.sh or 'npm rebuild ${name}' in the Engram folder`,
    { cause: error },
  );
}

/** Loads the sqlite-vec extension into a connection and returns its version, or throws NATIVE_MODULE_MISSING. */
export function loadVectorExtension(db: Database): string {
  try {
    const sqliteVec = nodeRequire('sqlite-vec') as { load(db: Database): void };
    sqliteVec.load(db);
    return String(db.prepare('select vec_version() as v').pluck().get());
  } catch (error) {
    throw nativeError('sqlite-vec', error);
  }
}

/** SQLite result codes that mean the file cannot be used, as opposed to a bug in our SQL. */
const UNAVAILABLE_CODES = /^SQLITE_(CANTOPEN|READONLY|CORRUPT|NOTADB|FULL|IOERR|PERM|AUTH)/;

/** Maps a SQLite error to an EngramError with a stable code; other errors pass through. */
export function classifySqliteError(error: unknown, path: string): unknown {
  if (error instanceof EngramError) return error;
  const code = (error as { code?: unknown }).code;
  const message = (error as Error).message ?? String(error);
  if (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) {
    return new EngramError('STORE_LOCKED', `the store at ${path} is locked by another process (${message})`, {
      cause: error,
    });
  }
  if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) {
    return new EngramError('STORE_UNAVAILABLE', `the store at ${path} cannot be used: ${message} (${code})`, {
      cause: error,
    });
  }
  if (NATIVE_FAILURE.test(message)) return nativeError('better-sqlite3', error);
  return error;
}

/** Options for {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** Database file; `:memory:` for tests. */
  path: string;
  /** Milliseconds a statement waits for another writer before SQLITE_BUSY. */
  busyTimeoutMs: number;
  /** Open read-only; the file must exist. @default false */
  readonly?: boolean;
}

/**
 * Opens a connection with Engram's pragmas: WAL (readers never block the writer), synchronous=NORMAL (durable across
 * process crashes, which is what a killed hook or CLI is), foreign keys on, and a busy timeout so concurrent writers
 * queue instead of failing. New files are created owner-only (0600): the store holds private text.
 */
export function openDatabase(options: OpenDatabaseOptions): Database {
  const Sqlite = loadSqlite();
  const inMemory = options.path === ':memory:';
  const isNew = !inMemory && !existsSync(options.path);
  if (options.readonly && isNew) {
    throw new EngramError('NOT_FOUND', `no store at ${options.path}`);
  }
  if (!inMemory && !options.readonly) mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
  let db: Database | undefined;
  try {
    db = new Sqlite(options.path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
    db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs))}`);
    if (!options.readonly) {
      if (isNew) chmodSync(options.path, 0o600);
      db.pragma('journal_mode = WAL');
    }
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    // Vector search reads every vector of a space per query (sqlite-vec scans in chunks): with SQLite's default 2 MB
    // page cache a 10k-engram store re-reads its 10 MB of vectors from the OS on each search. A 64 MB cache ceiling
    // and memory-mapped reads keep them in memory; both are limits, not allocations, so small stores pay nothing.
    db.pragma('cache_size = -65536');
    if (!inMemory) db.pragma('mmap_size = 268435456');
    return db;
  } catch (error) {
    db?.close();
    throw classifySqliteError(error, options.path);
  }
}
