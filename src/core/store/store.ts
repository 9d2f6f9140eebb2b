import { statSync } from 'node:fs';
import { EngramError } from '../errors.js';
import { createActivityRepo, type ActivityRepo } from './activity.js';
import { classifySqliteError, loadVectorExtension, openDatabase, type Database } from './database.js';
import { createEngramRepo, engramFromRow, type EngramRepo } from './engrams.js';
import { createExtractionRepo, type ExtractionRepo } from './extractions.js';
import { createJobRepo, type JobRepo } from './jobs.js';
import { createLlmUsageRepo, type LlmUsageRepo } from './llm-usage.js';
import { migrate, SCHEMA_VERSION, schemaVersion, type MigrationReport } from './migrations.js';
import { createObservationRepo, type ObservationRepo } from './observations.js';
import { createSessionRepo, type SessionRepo } from './sessions.js';
import { createSyncRepo, type SyncRepo } from './sync.js';
import { createStatsRepo, type StatsRepo } from './stats.js';
import { createVectorRepo, pruneSearchChanges, readSearchChanges, readSearchState, type SearchChanges, type SearchState, type VectorRepo } from './vectors.js';

/** An open store: one SQLite connection and the repositories over it. */
export interface Store {
  readonly path: string;
  readonly db: Database;
  readonly engrams: EngramRepo;
  readonly sessions: SessionRepo;
  readonly stats: StatsRepo;
  /** What hooks showed and saw, per session. */
  readonly activity: ActivityRepo;
  /** Background work handed off by hooks. */
  readonly jobs: JobRepo;
  /** What LLM calls used, per day and session (the caps in core/llm). */
  readonly llmUsage: LlmUsageRepo;
  /** How far extraction has read each session's conversation. */
  readonly extractions: ExtractionRepo;
  /** The Go engram's views: recent rows, dedup window, timeline, sessions with counts, prompt search, stats. */
  readonly observations: ObservationRepo;
  /** `engram sync`'s bookkeeping: chunks written or applied, and the version of each shared record. */
  readonly sync: SyncRepo;
  /** What opening did to the schema. */
  readonly migration: MigrationReport;
  /**
   * The vector tables. Loads sqlite-vec into this connection on first use; throws NATIVE_MODULE_MISSING when the
   * extension cannot load, which callers treat as "no vector search".
   */
  vectors(): VectorRepo;
  /** Which version of the searchable fields the store is at (for derived indexes). */
  searchState(): SearchState;
  /** Which engrams changed after a generation (the change log; `complete: false` when it cannot tell). */
  searchChanges(since: number): SearchChanges;
  /** Drops change-log rows a persisted index snapshot at `upTo` covers. */
  pruneSearchChanges(upTo: number): number;
  /**
   * Runs `fn` in an IMMEDIATE transaction: the write lock is taken up front, so two writers queue on the busy
   * timeout instead of one failing with SQLITE_BUSY when it upgrades a read to a write. Commits on return, rolls
   * back on throw.
   */
  write<T>(fn: () => T): T;
  /** Runs `fn` in a read transaction (a consistent snapshot). */
  read<T>(fn: () => T): T;
  close(): void;
}

/** Options for {@link openStore}. */
export interface OpenStoreOptions {
  /** Database file, or `:memory:`. */
  path: string;
  /** How long to wait for another writer. @default 10000 */
  busyTimeoutMs?: number;
  /** Apply pending migrations on open. @default true */
  migrate?: boolean;
  /** Open read-only (no migrations, file must exist). @default false */
  readonly?: boolean;
}

/**
 * The Go engram keeps its data in `~/.engram/engram.db` too. Migrating its database would fail half-way (its
 * `sessions` table is not ours) or, worse, mix two schemas in one file, so a store path holding one is refused with
 * the way out: move in with `engram import --from-go`, which moves that file aside first.
 */
function refuseForeign(db: Database, path: string): void {
  if (schemaVersion(db) !== 0) return;
  const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
  if (tables.has('observations') && !tables.has('engrams')) {
    throw new EngramError(
      'STORE_FOREIGN',
      `${path} is the Go engram's database, not Engram's; it was left untouched. Move in with \`engram import --from-go\` (it moves that file to go-engram.db beside it and imports its memories), or set ENGRAM_HOME to another folder`,
      { details: { path } },
    );
  }
}

/** Opens (creating if needed) and migrates a store. */
export function openStore(options: OpenStoreOptions): Store {
  const db = openDatabase({
    path: options.path,
    busyTimeoutMs: options.busyTimeoutMs ?? 10_000,
    readonly: options.readonly ?? false,
  });
  let migration: MigrationReport;
  try {
    if (options.readonly || options.migrate === false) {
      const version = schemaVersion(db);
      migration = { from: version, to: version, applied: [] };
      if (version !== SCHEMA_VERSION && options.readonly) {
        throw new EngramError(
          version > SCHEMA_VERSION ? 'STORE_TOO_NEW' : 'STORE_UNAVAILABLE',
          `the store has schema version ${version}; this Engram needs ${SCHEMA_VERSION}`,
        );
      }
    } else {
      refuseForeign(db, options.path);
      migration = migrate(db);
    }
  } catch (error) {
    db.close();
    throw classifySqliteError(error, options.path);
  }

  const guard = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      throw classifySqliteError(error, options.path);
    }
  };

  let vectors: VectorRepo | undefined;

  return {
    path: options.path,
    db,
    vectors() {
      if (!vectors) {
        loadVectorExtension(db);
        vectors = createVectorRepo(db);
      }
      return vectors;
    },
    searchState: () => guard(() => readSearchState(db)),
    searchChanges: (since) => guard(() => readSearchChanges(db, since)),
    pruneSearchChanges: (upTo) => guard(() => pruneSearchChanges(db, upTo)),
    engrams: createEngramRepo(db),
    sessions: createSessionRepo(db),
    stats: createStatsRepo(db),
    activity: createActivityRepo(db),
    jobs: createJobRepo(db),
    llmUsage: createLlmUsageRepo(db),
    extractions: createExtractionRepo(db),
    observations: createObservationRepo(db, engramFromRow),
    sync: createSyncRepo(db),
    migration,
    write: (fn) => guard(() => db.transaction(fn).immediate()),
    read: (fn) => guard(() => db.transaction(fn).deferred()),
    close: () => {
      if (db.open) db.close();
    },
  };
}

/** Size on disk of the store and its WAL, in bytes (0 for missing files). */
export function storeSize(path: string): { db_bytes: number; wal_bytes: number } {
  const size = (file: string): number => {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  };
  return { db_bytes: size(path), wal_bytes: size(`${path}-wal`) };
}
