import type { Neighbour, Store, VectorSpace, VectorWrite } from '../../core/index.js';
import { VECTOR_SCAN_WASM } from './vector-scan-wasm.js';

/**
 * An in-memory index of one vector space for the warm server. It keeps every stored vector twice: as int8 codes
 * (unit-normalised, scaled so the largest component is ±127: one byte per dimension), scanned with WASM SIMD
 * (vector-scan.wat) to pick the nearest `2k + 64` candidates by approximate cosine; and as the float32 vector, from
 * which those candidates' exact distances are computed with sqlite-vec's own arithmetic ({@link cosineDistance}: the
 * same float32 sums in the same order, bit-identical to `vec_distance_cosine` and to the vec0 KNN — tested). The answer
 * is sqlite-vec's exact top k whenever the true top k are among the candidates, which the int8 error leaves far
 * inside the margin (bench/search.mjs counts identical top-50 lists), at a fraction of vec0's brute-force cost.
 *
 * It follows the space: each search first reads the vectors written since it last looked (`engram_vectors.
 * embedded_at`, the time of the write, indexed with the engram id since migration 13) and re-encodes them; at most
 * every 30 s it also compares its count with the space's and, when they differ, drops the vectors pruned from the
 * space (they belong to deleted or deprecated engrams, which the gates reject anyway unless deprecated ones are asked
 * for) and loads any it missed.
 */
export interface VectorIndex {
  readonly size: number;
  /** The k nearest by exact cosine distance (sqlite-vec's), nearest first; ties by engram id. */
  knn(vector: Float32Array, k: number): Neighbour[];
  /** An engram's vector as loaded, or null when the index does not hold it. */
  vectorOf(id: number): Float32Array | null;
  /** Exact distances from `vector` to those of these engrams the index holds, nearest first (ties by id), and the ids
   * it does not hold. */
  distancesTo(vector: Float32Array, ids: readonly number[]): { found: Neighbour[]; missing: number[] };
  /** Reads the vectors written since the last call; `reconcile` also drops vectors removed from the space now. */
  sync(options?: { reconcile?: boolean }): void;
  /** True once every vector of the space is loaded; until then searches use sqlite-vec. */
  readonly ready: boolean;
  /** Loads up to `rows` more vectors (a slice, so a warm server keeps answering); true when the index is ready. */
  loadSlice(rows: number): boolean;
}

/**
 * sqlite-vec's cosine distance (`distance_cosine_float`): float32 dot product and magnitudes summed in order, then
 * 1 − dot / (√a · √b) in double, returned as float32. Every float32 step is a double operation rounded with
 * Math.fround, which is exact (double has more than 2 × 24 + 2 bits), so the result is bit for bit sqlite-vec's.
 */
export function cosineDistance(x: Float32Array, xAt: number, y: Float32Array, dim: number): number {
  const f = Math.fround;
  let dot = 0;
  let a = 0;
  let b = 0;
  for (let i = 0; i < dim; i++) {
    const p = x[xAt + i] as number;
    const q = y[i] as number;
    dot = f(dot + f(p * q));
    a = f(a + f(p * p));
    b = f(b + f(q * q));
  }
  return f(1 - dot / (Math.sqrt(a) * Math.sqrt(b)));
}

/** Σ x[i]² over one vector in float32, summed in order: one of {@link cosineDistance}'s two magnitudes. */
export function squaredNorm(x: Float32Array, xAt: number, dim: number): number {
  const f = Math.fround;
  let sum = 0;
  for (let i = 0; i < dim; i++) {
    const p = x[xAt + i] as number;
    sum = f(sum + f(p * p));
  }
  return sum;
}

/**
 * {@link cosineDistance} from `y` to the vectors of `rows` (each `dim` long in `x`, with its {@link squaredNorm} in
 * `squares`), into `out`; `ySquares` is y's. Each distance is the same float32 sums in the same order, so the same
 * bits; but four rows are summed side by side, whose four dot products do not wait on each other's rounding — a
 * chain of dependent float32 additions is what one distance's time is — and each magnitude is summed once, not per
 * pair. About 2–3× faster than one cosineDistance after another (the index's 464 candidates at k = 200).
 */
export function cosineDistances(x: Float32Array, squares: Float32Array, rows: ArrayLike<number>, y: Float32Array, ySquares: number, dim: number, out: Float64Array): void {
  const f = Math.fround;
  const root = Math.sqrt(ySquares);
  const n = rows.length;
  let r = 0;
  for (; r + 4 <= n; r += 4) {
    const r0 = rows[r] as number;
    const r1 = rows[r + 1] as number;
    const r2 = rows[r + 2] as number;
    const r3 = rows[r + 3] as number;
    const o0 = r0 * dim;
    const o1 = r1 * dim;
    const o2 = r2 * dim;
    const o3 = r3 * dim;
    let d0 = 0;
    let d1 = 0;
    let d2 = 0;
    let d3 = 0;
    for (let i = 0; i < dim; i++) {
      const q = y[i] as number;
      d0 = f(d0 + f((x[o0 + i] as number) * q));
      d1 = f(d1 + f((x[o1 + i] as number) * q));
      d2 = f(d2 + f((x[o2 + i] as number) * q));
      d3 = f(d3 + f((x[o3 + i] as number) * q));
    }
    out[r] = f(1 - d0 / (Math.sqrt(squares[r0] as number) * root));
    out[r + 1] = f(1 - d1 / (Math.sqrt(squares[r1] as number) * root));
    out[r + 2] = f(1 - d2 / (Math.sqrt(squares[r2] as number) * root));
    out[r + 3] = f(1 - d3 / (Math.sqrt(squares[r3] as number) * root));
  }
  // The last one to three rows one at a time (same bits).
  for (; r < n; r++) out[r] = cosineDistance(x, (rows[r] as number) * dim, y, dim);
}

/** How often an index compares its count with the space's (one count query), and loads or drops the difference. */
const RECONCILE_MS = 30_000;
/** How far before its bookmark each sync reads vector writes again (writes of one millisecond, small clock steps). */
const RESYNC_MS = 2_000;

/** Nearest first, ties by engram id. */
const nearest = (a: Neighbour, b: Neighbour): number => a.distance - b.distance || a.id - b.id;

/** Spaces smaller than this are searched by sqlite-vec directly: its scan is already fast, and exact by construction. */
export const VECTOR_INDEX_FROM = 5_000;

/** The module's exports: its memory and the scan. */
interface Scan {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  scan: (query: number, codes: number, rows: number, dim: number, out: number) => void;
}

/** The slice of the WebAssembly API used here (Node's global; the project's TypeScript libs do not declare it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

let compiled: object | undefined;
function instantiate(): Scan {
  compiled ??= new wasmApi.Module(Buffer.from(VECTOR_SCAN_WASM, 'base64'));
  return new wasmApi.Instance(compiled, {}).exports as Scan;
}

/** Unit-normalises and quantises a vector into `codes` (int8); answers 1 / scale (0 for a zero vector). */
function quantise(vector: Float32Array, codes: Int8Array, at: number, stride: number): number {
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += (vector[i] as number) * (vector[i] as number);
  norm = Math.sqrt(norm);
  let largest = 0;
  for (let i = 0; i < vector.length; i++) largest = Math.max(largest, Math.abs(vector[i] as number));
  codes.fill(0, at, at + stride);
  if (norm === 0 || largest === 0) return 0;
  const scale = (127 * norm) / largest; // unit component u = v / norm; code = round(u · 127 / max|u|)
  for (let i = 0; i < vector.length; i++) codes[at + i] = Math.round(((vector[i] as number) / norm) * scale);
  return 1 / scale;
}

/** An index of a space, empty until loaded with {@link VectorIndex.loadSlice} (all at once: `loadSlice(Infinity)`). */
export function createVectorIndex(store: Store, space: VectorSpace): VectorIndex {
  const wasm = instantiate();
  const dim = space.dim;
  const stride = Math.ceil(dim / 16) * 16;
  let capacity = 0;
  let count = 0;
  let ids = new Float64Array(0);
  let floats = new Float32Array(0);
  let inverse = new Float32Array(0);
  // Each vector's Σ x² (squaredNorm), for the exact distances.
  let squares = new Float32Array(0);
  let alive = new Uint8Array(0);
  const rowOf = new Map<number, number>();
  // WASM memory: [query: stride][scores: capacity × 4][codes: capacity × stride]
  const layout = () => ({ query: 0, out: stride, codes: stride + capacity * 4 });

  const reserve = (rows: number): void => {
    if (rows <= capacity) return;
    const old = layout();
    const next = Math.max(rows, Math.ceil(capacity * 1.5), 1024);
    const bytes = stride + next * 4 + next * stride;
    const have = wasm.memory.buffer.byteLength;
    if (bytes > have) wasm.memory.grow(Math.ceil((bytes - have) / 65_536));
    capacity = next;
    const moved = layout();
    new Uint8Array(wasm.memory.buffer).copyWithin(moved.codes, old.codes, old.codes + count * stride);
    const grow = <T extends Float64Array | Float32Array | Uint8Array>(array: T, make: (n: number) => T): T => {
      const bigger = make(next);
      bigger.set(array);
      return bigger;
    };
    ids = grow(ids, (n) => new Float64Array(n));
    const moreFloats = new Float32Array(next * dim);
    moreFloats.set(floats);
    floats = moreFloats;
    inverse = grow(inverse, (n) => new Float32Array(n));
    squares = grow(squares, (n) => new Float32Array(n));
    alive = grow(alive, (n) => new Uint8Array(n));
  };

  const put = (id: number, vector: Float32Array): void => {
    let row = rowOf.get(id);
    if (row === undefined) {
      reserve(count + 1);
      row = count++;
      rowOf.set(id, row);
      ids[row] = id;
    }
    inverse[row] = quantise(vector, new Int8Array(wasm.memory.buffer), layout().codes + row * stride, stride);
    floats.set(vector.subarray(0, dim), row * dim);
    squares[row] = squaredNorm(floats, row * dim, dim);
    alive[row] = 1;
  };

  const vectors = store.vectors();
  // Bookmark: the last vector write read, in (embedded_at, engram id) order. `embedded_at` is the clock at the write,
  // under the write lock (core/store put), so writes arrive in that order — except writes of one millisecond, which
  // order by engram id whatever their commit order, and a clock that steps back. So each sync reads again the writes
  // of the last RESYNC_MS before the bookmark, skipping those already read (`recent`); and a reconcile loads any
  // vector of the space the index still lacks.
  // A write is stamped under the write lock and commits right after, so one stamped more than RESYNC_MS before a
  // sync started had committed by then and was read: the next sync starts no earlier than that (without it, every
  // search re-read all the writes of the 2 s before the bookmark — 10k rows after a bulk embedding, 7 ms a search).
  let since: VectorWrite = { embedded_at: '', id: 0 };
  let syncedAt = Number.NaN;
  const recent = new Map<number, string>();
  let reconciledAt = Date.now();
  const load = (id: number): void => {
    const vector = vectors.vectorOf(space, id);
    if (vector) put(id, vector);
    else if (rowOf.has(id)) alive[rowOf.get(id) as number] = 0; // written, then removed
  };
  const sync = (options: { reconcile?: boolean } = {}): void => {
    const startedAt = Date.now();
    const lows = [Date.parse(since.embedded_at), syncedAt].filter((at) => !Number.isNaN(at));
    const horizon = lows.length === 0 ? '' : new Date(Math.max(...lows) - RESYNC_MS).toISOString();
    for (const write of vectors.writtenSince(space, horizon !== since.embedded_at ? { embedded_at: horizon, id: 0 } : since)) {
      if (recent.get(write.id) !== write.embedded_at) load(write.id);
      recent.set(write.id, write.embedded_at);
      if (write.embedded_at > since.embedded_at || (write.embedded_at === since.embedded_at && write.id > since.id)) since = write;
    }
    syncedAt = startedAt;
    const latest = Date.parse(since.embedded_at);
    if (!Number.isNaN(latest)) {
      const keepFrom = new Date(latest - RESYNC_MS).toISOString();
      for (const [id, at] of recent) if (at < keepFrom) recent.delete(id);
    }
    if (!options.reconcile && Date.now() - reconciledAt < RECONCILE_MS) return;
    reconciledAt = Date.now();
    let live = 0;
    for (let row = 0; row < count; row++) live += alive[row] as number;
    if (live === vectors.written(space).vectors) return;
    const present = new Set(vectors.engramIds(space));
    for (let row = 0; row < count; row++) if (!present.has(ids[row] as number)) alive[row] = 0;
    for (const id of present) {
      const row = rowOf.get(id);
      if (row === undefined || alive[row] === 0) load(id);
    }
  };
  // Loading, a keyset page of engram ids at a time. The bookmark is taken first, so a vector written during the
  // load is read again by the sync that ends it.
  const start = vectors.written(space);
  since = start.last ?? since;
  reserve(start.vectors);
  let loadedAfter = 0;
  let ready = false;
  const loadSlice = (rows: number): boolean => {
    if (ready) return true;
    const limit = Math.min(rows, 2 ** 31 - 1); // SQLite's LIMIT takes an integer: Infinity means everything
    const page = vectors.engramIds(space, { after: loadedAfter, limit });
    for (const id of page) {
      const vector = vectors.vectorOf(space, id);
      if (vector) put(id, vector);
      loadedAfter = id;
    }
    if (page.length < limit) {
      ready = true;
      sync();
    }
    return ready;
  };

  const knn = (vector: Float32Array, k: number): Neighbour[] => {
    if (count === 0 || vector.length !== dim) return [];
    const at = layout();
    const memory = new Int8Array(wasm.memory.buffer);
    quantise(vector, memory, at.query, stride);
    wasm.scan(at.query, at.codes, count, stride, at.out);
    const scores = new Int32Array(wasm.memory.buffer, at.out, count);
    // The best `want` rows by approximate cosine (dot / own scale), through a min-heap of row numbers.
    const want = Math.min(count, 2 * k + 64);
    const heap = new Int32Array(want);
    const value = (row: number): number => (scores[row] as number) * (inverse[row] as number);
    let size = 0;
    for (let row = 0; row < count; row++) {
      if (alive[row] === 0) continue;
      const v = value(row);
      if (size < want) {
        let i = size++;
        while (i > 0) {
          const parent = (i - 1) >> 1;
          if (value(heap[parent] as number) <= v) break;
          heap[i] = heap[parent] as number;
          i = parent;
        }
        heap[i] = row;
      } else if (v > value(heap[0] as number)) {
        let i = 0;
        for (;;) {
          const left = 2 * i + 1;
          if (left >= size) break;
          const right = left + 1;
          const child = right < size && value(heap[right] as number) < value(heap[left] as number) ? right : left;
          if (value(heap[child] as number) >= v) break;
          heap[i] = heap[child] as number;
          i = child;
        }
        heap[i] = row;
      }
    }
    const distances = new Float64Array(size);
    cosineDistances(floats, squares, heap.subarray(0, size), vector, squaredNorm(vector, 0, dim), dim, distances);
    const exact: Neighbour[] = [];
    for (let i = 0; i < size; i++) exact.push({ id: ids[heap[i] as number] as number, distance: distances[i] as number });
    return exact.sort(nearest).slice(0, k);
  };

  const vectorOf = (id: number): Float32Array | null => {
    const row = rowOf.get(id);
    return row === undefined || alive[row] === 0 ? null : floats.slice(row * dim, (row + 1) * dim);
  };

  const distancesTo = (vector: Float32Array, wanted: readonly number[]): { found: Neighbour[]; missing: number[] } => {
    const held: number[] = [];
    const missing: number[] = [];
    for (const id of new Set(wanted)) {
      const row = rowOf.get(id);
      if (row === undefined || alive[row] === 0 || vector.length !== dim) missing.push(id);
      else held.push(row);
    }
    const distances = new Float64Array(held.length);
    if (held.length > 0) cosineDistances(floats, squares, held, vector, squaredNorm(vector, 0, dim), dim, distances);
    const found = held.map((row, i) => ({ id: ids[row] as number, distance: distances[i] as number }));
    return { found: found.sort(nearest), missing };
  };

  return {
    get size() {
      return count;
    },
    get ready() {
      return ready;
    },
    loadSlice,
    sync,
    knn,
    vectorOf,
    distancesTo,
  };
}
