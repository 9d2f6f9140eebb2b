import type { Statement } from 'better-sqlite3';
import { EMBED_TEXT_VERSION } from '../embed/text.js';
import type { Database } from './database.js';

/** One embedding model's vector space: its row in `embedding_models` and the vec0 table holding its vectors. */
export interface VectorSpace {
  id: number;
  model: string;
  dim: number;
  /** `engram_vec_<id>`: a sqlite-vec `vec0` table, rowid = engram id, cosine distance. */
  table: string;
}

/** A vector space with how many engrams it covers. */
export interface VectorSpaceInfo extends VectorSpace {
  vectors: number;
  created_at: string;
  last_used_at: string;
}

/** A live engram whose vector in a space is missing or was made from older text. */
export interface PendingVector {
  id: number;
  text: string;
  content_hash: string;
}

/** One vector write: the engram and when its vector was (re)written. */
export interface VectorWrite {
  id: number;
  embedded_at: string;
}

/** A nearest neighbour: engram id and cosine distance (0 = same direction, 2 = opposite). */
export interface Neighbour {
  id: number;
  distance: number;
}

/**
 * sqlite-vec caps `k` in a KNN query; beyond it a caller scans instead ({@link VectorRepo.scan}).
 * 4096 is sqlite-vec 0.1.x's limit.
 */
export const KNN_MAX_K = 4096;

/** SQL access to the vector tables. The connection must have sqlite-vec loaded. Callers own transactions. */
export interface VectorRepo {
  /** The space for this model and dimension, created (row and vec0 table) if new. Call inside a write. */
  ensureSpace(model: string, dim: number, at: string): VectorSpace;
  /** The space for this model and dimension, if vectors were ever made with it. */
  findSpace(model: string, dim: number): VectorSpace | undefined;
  /** Every space with its vector count, newest use first. */
  spaces(): VectorSpaceInfo[];
  /**
   * Stores (or replaces) one engram's vector, made from `embeddingText(text)` of the text whose content hash is given.
   * Call it inside a write transaction: its `embedded_at` is the clock at the write, taken while the write lock is
   * held, so vector writes order by it as they commit (the warm server's in-memory index reads them in that order).
   */
  put(space: VectorSpace, engramId: number, textHash: string, vector: Float32Array): void;
  /** Live, non-deprecated engrams without a current vector in the space, in id order, after `afterId` (keyset paging). */
  pending(space: VectorSpace, limit: number, afterId?: number): PendingVector[];
  countPending(space: VectorSpace): number;
  /** Live, non-deprecated engrams with a current vector in the space. */
  countCurrent(space: VectorSpace): number;
  /** The `k` nearest vectors (k ≤ {@link KNN_MAX_K}), nearest first. */
  knn(space: VectorSpace, vector: Float32Array, k: number): Neighbour[];
  /** Exact distance to every vector in the space, nearest first: the fallback when filters reject most KNN hits. */
  scan(space: VectorSpace, vector: Float32Array, limit: number): Neighbour[];
  /** One engram's stored vector, or null. */
  vectorOf(space: VectorSpace, engramId: number): Float32Array | null;
  /** Cosine distance from `vector` to each of these engrams' vectors (those that have one), nearest first. */
  distancesTo(space: VectorSpace, vector: Float32Array, engramIds: readonly number[]): Neighbour[];
  /** Every stored vector of the space (engram id and vector), in no particular order: in-memory indexes load from it. */
  iterateAll(space: VectorSpace): IterableIterator<{ id: number; vector: Float32Array }>;
  /** The last write of the space (by `embedded_at`, then engram id) and how many vectors it has, from indexes. */
  written(space: VectorSpace): { last: VectorWrite | null; vectors: number };
  /** The engrams that have a vector in the space; with `after` and `limit`, one keyset page in id order. */
  engramIds(space: VectorSpace, page?: { after: number; limit: number }): number[];
  /** Vector writes after `after` in (embedded_at, engram id) order: what an in-memory index has not seen yet. */
  writtenSince(space: VectorSpace, after: VectorWrite): VectorWrite[];
  /** Removes vectors of engrams that are gone, deprecated or deleted. Returns how many. */
  prune(space: VectorSpace): number;
  /** Marks every vector of the space stale: they keep serving searches until each is re-embedded in place. */
  forget(space: VectorSpace): void;
  /** Marks a space as used now (doctor and status show the active one first). */
  touch(space: VectorSpace, at: string): void;
}

const tableName = (id: number): string => `engram_vec_${id}`;

/** Statements each search runs, prepared once per connection (preparing costs more than running them). */
const preparedByDb = new WeakMap<Database, Map<string, Statement>>();
function prepared(db: Database, sql: string): Statement {
  let statements = preparedByDb.get(db);
  if (!statements) preparedByDb.set(db, (statements = new Map()));
  let statement = statements.get(sql);
  if (!statement) statements.set(sql, (statement = db.prepare(sql)));
  return statement;
}

/** What a vector's `text_hash` records: the engram's content hash and the text preparation it was embedded with,
 * so a vector made from older preparation (core/embed/text.ts) is stale like one made from older text. */
const CURRENT = `(e.content_hash || ':t${Math.trunc(EMBED_TEXT_VERSION)}')`;
const stamp = (contentHash: string): string => `${contentHash}:t${EMBED_TEXT_VERSION}`;

const toBlob = (vector: Float32Array): Buffer => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);

/** Builds the vector repository over a connection that has sqlite-vec loaded. */
export function createVectorRepo(db: Database): VectorRepo {
  const toSpace = (row: { id: number; model: string; dim: number }): VectorSpace => ({
    id: row.id,
    model: row.model,
    dim: row.dim,
    table: tableName(row.id),
  });
  const find = db.prepare<[string, number], { id: number; model: string; dim: number }>(
    'SELECT id, model, dim FROM embedding_models WHERE model = ? AND dim = ?',
  );
  const upsertBookkeeping = db.prepare(
    `INSERT INTO engram_vectors (engram_id, model_id, text_hash, embedded_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (model_id, engram_id) DO UPDATE SET text_hash = excluded.text_hash, embedded_at = excluded.embedded_at`,
  );
  // Per-space statements, prepared once: indexing writes thousands of rows.
  const perSpace = new Map<string, { remove: Statement; insert: Statement; knn: Statement; distance: Statement; vector: Statement }>();
  const statements = (space: VectorSpace) => {
    let prepared = perSpace.get(space.table);
    if (!prepared) {
      prepared = {
        remove: db.prepare(`DELETE FROM ${space.table} WHERE rowid = ?`),
        insert: db.prepare(`INSERT INTO ${space.table} (rowid, embedding) VALUES (?, ?)`),
        knn: db.prepare(`SELECT rowid, distance FROM ${space.table} WHERE embedding MATCH ? AND k = ? ORDER BY distance`),
        distance: db.prepare(`SELECT vec_distance_cosine(embedding, ?) FROM ${space.table} WHERE rowid = ?`).pluck(),
        vector: db.prepare(`SELECT embedding FROM ${space.table} WHERE rowid = ?`).pluck(),
      };
      perSpace.set(space.table, prepared);
    }
    return prepared;
  };
  const liveWithoutCurrent = `
    FROM engrams e
    LEFT JOIN engram_vectors v ON v.model_id = ? AND v.engram_id = e.id
    WHERE e.deleted_at IS NULL AND e.deprecated = 0 AND (v.engram_id IS NULL OR v.text_hash != ${CURRENT})`;

  const pendingPage = db.prepare<[number, number, number], PendingVector>(
    `SELECT e.id, e.text, e.content_hash ${liveWithoutCurrent} AND e.id > ? ORDER BY e.id LIMIT ?`,
  );

  return {
    ensureSpace(model, dim, at) {
      const existing = find.get(model, dim);
      const space = existing
        ? toSpace(existing)
        : toSpace({
            id: Number(
              db
                .prepare('INSERT INTO embedding_models (model, dim, created_at, last_used_at) VALUES (?, ?, ?, ?)')
                .run(model, dim, at, at).lastInsertRowid,
            ),
            model,
            dim,
          });
      // Integer-checked above; identifiers cannot be bound as parameters.
      db.exec(
        `CREATE VIRTUAL TABLE IF NOT EXISTS ${space.table} USING vec0(embedding float[${Math.trunc(dim)}] distance_metric=cosine)`,
      );
      return space;
    },
    findSpace(model, dim) {
      const row = find.get(model, dim);
      return row ? toSpace(row) : undefined;
    },
    spaces() {
      const rows = db
        .prepare<[], { id: number; model: string; dim: number; created_at: string; last_used_at: string; vectors: number }>(
          `SELECT m.id, m.model, m.dim, m.created_at, m.last_used_at,
                  (SELECT count(*) FROM engram_vectors v WHERE v.model_id = m.id) AS vectors
             FROM embedding_models m ORDER BY m.last_used_at DESC, m.id DESC`,
        )
        .all();
      return rows.map((row) => ({ ...toSpace(row), vectors: row.vectors, created_at: row.created_at, last_used_at: row.last_used_at }));
    },
    put(space, engramId, textHash, vector) {
      if (vector.length !== space.dim) {
        throw new Error(`vector has ${vector.length} dimensions; ${space.model} has ${space.dim}`);
      }
      statements(space).remove.run(BigInt(engramId));
      statements(space).insert.run(BigInt(engramId), toBlob(vector));
      // The time of the write, not of the embedding (which may be long before: a batch, an extraction's LLM calls).
      upsertBookkeeping.run(engramId, space.id, stamp(textHash), new Date().toISOString());
    },
    pending(space, limit, afterId = 0) {
      return pendingPage.all(space.id, afterId, limit);
    },
    countPending(space) {
      return Number(prepared(db, `SELECT count(*) ${liveWithoutCurrent}`).pluck().get(space.id));
    },
    countCurrent(space) {
      return Number(
        db
          .prepare(
            `SELECT count(*) FROM engram_vectors v JOIN engrams e ON e.id = v.engram_id
              WHERE v.model_id = ? AND e.deleted_at IS NULL AND e.deprecated = 0 AND v.text_hash = ${CURRENT}`,
          )
          .pluck()
          .get(space.id),
      );
    },
    knn(space, vector, k) {
      const rows = statements(space).knn.all(toBlob(vector), Math.max(1, Math.min(KNN_MAX_K, Math.trunc(k)))) as Array<{
        rowid: number | bigint;
        distance: number;
      }>;
      return rows.map((row) => ({ id: Number(row.rowid), distance: row.distance }));
    },
    scan(space, vector, limit) {
      const rows = db
        .prepare<[Buffer, number], { rowid: number | bigint; distance: number }>(
          `SELECT rowid, vec_distance_cosine(embedding, ?) AS distance FROM ${space.table} ORDER BY distance LIMIT ?`,
        )
        .all(toBlob(vector), Math.max(1, Math.trunc(limit)));
      return rows.map((row) => ({ id: Number(row.rowid), distance: row.distance }));
    },
    vectorOf(space, engramId) {
      const embedding = statements(space).vector.get(BigInt(engramId)) as Buffer | undefined;
      if (!embedding) return null;
      const bytes = Uint8Array.from(embedding);
      return new Float32Array(bytes.buffer, 0, bytes.byteLength / 4);
    },
    distancesTo(space, vector, engramIds) {
      if (engramIds.length === 0) return [];
      // One rowid lookup per engram: vec0 does not push `rowid IN (…)` down, so that form computed the distance to
      // every vector in the table (2/3 of a KNN's cost, per hybrid search). Same function, same distances.
      const blob = toBlob(vector);
      const statement = statements(space).distance;
      const found: Neighbour[] = [];
      for (const id of [...new Set(engramIds.map((n) => Math.trunc(n)))].sort((a, b) => a - b)) {
        const distance = statement.get(blob, BigInt(id)) as number | undefined;
        if (distance !== undefined) found.push({ id, distance });
      }
      return found.sort((a, b) => a.distance - b.distance || a.id - b.id);
    },
    *iterateAll(space) {
      for (const row of db.prepare(`SELECT rowid, embedding FROM ${space.table}`).iterate() as IterableIterator<{ rowid: number | bigint; embedding: Buffer }>) {
        const bytes = Uint8Array.from(row.embedding);
        yield { id: Number(row.rowid), vector: new Float32Array(bytes.buffer, 0, bytes.byteLength / 4) };
      }
    },
    written(space) {
      const last = prepared(
        db,
        'SELECT engram_id AS id, embedded_at FROM engram_vectors WHERE model_id = ? ORDER BY embedded_at DESC, engram_id DESC LIMIT 1',
      ).get(space.id) as VectorWrite | undefined;
      const vectors = prepared(db, 'SELECT count(*) FROM engram_vectors WHERE model_id = ?').pluck().get(space.id) as number;
      return { last: last ?? null, vectors };
    },
    engramIds(space, page) {
      if (!page) return db.prepare('SELECT engram_id FROM engram_vectors WHERE model_id = ?').pluck().all(space.id) as number[];
      return prepared(db, 'SELECT engram_id FROM engram_vectors WHERE model_id = ? AND engram_id > ? ORDER BY engram_id LIMIT ?')
        .pluck()
        .all(space.id, page.after, page.limit) as number[];
    },
    writtenSince(space, after) {
      return prepared(
        db,
        `SELECT engram_id AS id, embedded_at FROM engram_vectors
          WHERE model_id = ? AND (embedded_at, engram_id) > (?, ?) ORDER BY embedded_at, engram_id`,
      ).all(space.id, after.embedded_at, after.id) as VectorWrite[];
    },
    prune(space) {
      // Bookkeeping rows of engrams that are no longer searchable go first; then vec0 rows nobody accounts for.
      db.prepare(
        `DELETE FROM engram_vectors WHERE model_id = ? AND engram_id IN
           (SELECT id FROM engrams WHERE deleted_at IS NOT NULL OR deprecated = 1)`,
      ).run(space.id);
      return db
        .prepare(
          `DELETE FROM ${space.table} WHERE rowid NOT IN (SELECT engram_id FROM engram_vectors WHERE model_id = ?)`,
        )
        .run(space.id).changes;
    },
    forget(space) {
      db.prepare("UPDATE engram_vectors SET text_hash = '' WHERE model_id = ?").run(space.id);
    },
    touch(space, at) {
      db.prepare('UPDATE embedding_models SET last_used_at = ? WHERE id = ?').run(at, space.id);
    },
  };
}

/** The store's search bookkeeping: which snapshot of the searchable fields a derived index was built from. */
export interface SearchState {
  /** Random id of this store file, so a snapshot built from another store never matches. */
  store_uid: string;
  /** Moves on every insert, delete, or change to a searchable engram field (triggers). */
  generation: number;
}

/** Reads the search state row. */
export function readSearchState(db: Database): SearchState {
  return prepared(db, 'SELECT store_uid, generation FROM search_state WHERE id = 1').get() as SearchState;
}

/** The engrams whose searchable fields changed after a generation, from the change log (migration 13). */
export interface SearchChanges {
  /** The generation the answer describes (read in the same transaction as the ids). */
  generation: number;
  /** False when the log no longer holds every change since `since` (pruned, or older than the log): rebuild. */
  complete: boolean;
  /** Distinct engram ids, ascending. */
  ids: number[];
}

/** Reads which engrams changed after generation `since`; call inside a read transaction for a consistent answer. */
export function readSearchChanges(db: Database, since: number): SearchChanges {
  const { generation } = readSearchState(db);
  if (since >= generation) return { generation, complete: since === generation, ids: [] };
  const rows = prepared(db, 'SELECT count(*) FROM search_changes WHERE generation > ? AND generation <= ?').pluck().get(since, generation) as number;
  if (rows !== generation - since) return { generation, complete: false, ids: [] };
  const ids = prepared(db, 'SELECT DISTINCT engram_id FROM search_changes WHERE generation > ? AND generation <= ? ORDER BY engram_id')
    .pluck()
    .all(since, generation) as number[];
  return { generation, complete: true, ids };
}

/** Drops change-log rows at or below a generation a persisted snapshot covers. Returns how many. */
export function pruneSearchChanges(db: Database, upTo: number): number {
  return db.prepare('DELETE FROM search_changes WHERE generation <= ?').run(upTo).changes;
}
