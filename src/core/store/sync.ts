import type { Statement } from 'better-sqlite3';
import type { Database } from './database.js';

/** What a store did with one chunk file of a repository. */
export type ChunkDirection = 'exported' | 'imported' | 'rejected';

/** One chunk this store wrote, applied or refused. */
export interface SyncChunkRow {
  repo: string;
  chunk_id: string;
  direction: ChunkDirection;
  records: number;
  error: string | null;
  at: string;
}

/** Which kind of record a sync id names. */
export type SyncKind = 'observation' | 'session' | 'prompt';

/** The version of one shared record this store holds, and the chunk it came in or went out in ('' = none yet). */
export interface SyncRecordRow {
  kind: SyncKind;
  sync_id: string;
  version: string;
  chunk_id: string;
  deleted: boolean;
}

/** SQL for `engram sync`'s bookkeeping (the git-sync migration). Callers own transactions. */
export interface SyncRepo {
  chunks(repo: string): SyncChunkRow[];
  addChunk(row: SyncChunkRow): void;
  record(repo: string, kind: SyncKind, syncId: string): SyncRecordRow | undefined;
  /** Every record of one kind this store has shared or received for a repository. */
  records(repo: string, kind: SyncKind): SyncRecordRow[];
  setRecord(repo: string, row: SyncRecordRow): void;
}

/** Builds the sync repository over a connection (statements prepared on first use). */
export function createSyncRepo(db: Database): SyncRepo {
  const statements = new Map<string, Statement>();
  const prepared = (sql: string): Statement => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
  const toRecord = (row: Omit<SyncRecordRow, 'deleted'> & { deleted: number }): SyncRecordRow => ({ ...row, deleted: row.deleted === 1 });
  return {
    chunks: (repo) => prepared('SELECT * FROM sync_chunks WHERE repo = ? ORDER BY at, chunk_id').all(repo) as SyncChunkRow[],
    addChunk(row) {
      prepared(
        `INSERT INTO sync_chunks (repo, chunk_id, direction, records, error, at) VALUES (@repo, @chunk_id, @direction, @records, @error, @at)
         ON CONFLICT (repo, chunk_id) DO UPDATE SET direction = excluded.direction, records = excluded.records, error = excluded.error, at = excluded.at`,
      ).run(row);
    },
    record(repo, kind, syncId) {
      const row = prepared('SELECT kind, sync_id, version, chunk_id, deleted FROM sync_records WHERE repo = ? AND kind = ? AND sync_id = ?').get(repo, kind, syncId);
      return row ? toRecord(row as Parameters<typeof toRecord>[0]) : undefined;
    },
    records: (repo, kind) =>
      (prepared('SELECT kind, sync_id, version, chunk_id, deleted FROM sync_records WHERE repo = ? AND kind = ? ORDER BY sync_id').all(repo, kind) as Array<
        Parameters<typeof toRecord>[0]
      >).map(toRecord),
    setRecord(repo, row) {
      prepared(
        `INSERT INTO sync_records (repo, kind, sync_id, version, chunk_id, deleted) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (repo, kind, sync_id) DO UPDATE SET version = excluded.version, chunk_id = excluded.chunk_id, deleted = excluded.deleted`,
      ).run(repo, row.kind, row.sync_id, row.version, row.chunk_id, row.deleted ? 1 : 0);
    },
  };
}
