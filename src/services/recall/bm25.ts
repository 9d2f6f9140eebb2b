import { closeSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EngramStatus, SearchableFields, SearchState, Store } from '../../core/index.js';
import {
  buildPackedBase,
  decodeSnapshot,
  docIndex,
  encodeSnapshot,
  fieldsOf,
  holds,
  readSnapshotHeader,
  sameSettings,
  type PackedBase,
} from './bm25-packed.js';
import { hasAllTags, inCategory } from './gates.js';
import { searchTerms } from './text.js';
import { TUNING } from './tuning.js';

/** One BM25 hit: engram id and score (higher is better). */
export interface Bm25Hit {
  id: number;
  score: number;
}

/** Which engrams a BM25 search may return (evaluated from per-document columns, before ranking). */
export interface Bm25Filter {
  /** Hierarchical category prefix. */
  category?: string;
  /** All of these tags. */
  tags?: readonly string[];
  /** Allowed projects; `''` stands for "no project" (personal engrams). Absent: any. */
  projects?: ReadonlySet<string>;
  /** Allowed review states (pending ones also when learned as `pendingLearnedBy` says). Absent: any. */
  statuses?: ReadonlySet<EngramStatus>;
  pendingLearnedBy?: ReadonlySet<string>;
}

/** A BM25 index over the store's live engrams at one generation. */
export interface Bm25Index {
  readonly state: SearchState;
  /** Real documents (without the padding tiny stores need). */
  readonly docs: number;
  search(query: string, limit: number, filter?: Bm25Filter): Bm25Hit[];
  /** The same scoring for analysed terms (stems), each counting `weight` times: a query expanded by feedback. */
  searchWeighted(terms: ReadonlyArray<{ term: string; weight: number }>, limit: number, filter?: Bm25Filter): Bm25Hit[];
  /** The IDF of an analysed term (a stem); a term no engram holds gets the largest IDF possible in this store. */
  idf(term: string): number;
  /**
   * Which of these analysed terms an indexed engram holds (what re-analysing its title, text, category and tags would
   * give, read from the index instead), or undefined when the engram is not in the index.
   */
  termsOf(id: number, among: readonly string[]): Set<string> | undefined;
}

const { k1, b, k } = TUNING.bm25Params;
const FIELDS = Object.entries(TUNING.bm25Fields);

/** wink's IDF, log((N − n + 0.5) / (n + 0.5) + k). */
const winkIdf = (total: number, n: number): number => Math.log((total - n + 0.5) / (n + 0.5) + k);

/** An engram changed since the base was built, analysed as wink's addDoc would, weighted at query time. */
interface OverlayDoc {
  id: number;
  /** Field-weighted term frequencies (wink's `freq` before consolidation). */
  freq: Map<string, number>;
  /** wink's length normalisation, (1 − b) + b · length / average length of the base. */
  norm: number;
  status: string;
  learnedBy: string;
  project: string;
  category: string;
  tags: string[];
}

/** Scratch space for scoring one base: one accumulator slot per document, and the query that last wrote it. */
interface Scratch {
  scores: Float64Array;
  seen: Uint32Array;
  epoch: number;
  touched: Uint32Array;
}
const scratches = new WeakMap<PackedBase, Scratch>();
function scratchOf(base: PackedBase): Scratch {
  let scratch = scratches.get(base);
  if (!scratch) {
    scratch = { scores: new Float64Array(base.docs), seen: new Uint32Array(base.docs), epoch: 0, touched: new Uint32Array(base.docs) };
    scratches.set(base, scratch);
  }
  if (scratch.epoch >= 0xfffffffe) {
    scratch.seen.fill(0);
    scratch.epoch = 0;
  }
  scratch.epoch++;
  return scratch;
}

/**
 * The k best of a stream of (score, id), best first: higher score, then lower id — the order wink's search gives
 * (a stable sort by score of results listed in ascending id order). A min-heap of the k best keeps the worst on top.
 */
class TopK {
  private readonly scores: Float64Array;
  private readonly ids: Float64Array;
  private size = 0;
  constructor(private readonly k: number) {
    this.scores = new Float64Array(k);
    this.ids = new Float64Array(k);
  }
  /** True when (s1, id1) ranks below (s2, id2). */
  private static worse(s1: number, id1: number, s2: number, id2: number): boolean {
    return s1 < s2 || (s1 === s2 && id1 > id2);
  }
  push(score: number, id: number): void {
    const { scores, ids } = this;
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!TopK.worse(score, id, scores[parent] as number, ids[parent] as number)) break;
        scores[i] = scores[parent] as number;
        ids[i] = ids[parent] as number;
        i = parent;
      }
      scores[i] = score;
      ids[i] = id;
      return;
    }
    if (!TopK.worse(scores[0] as number, ids[0] as number, score, id)) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.size) break;
      const right = left + 1;
      let child = left;
      if (right < this.size && TopK.worse(scores[right] as number, ids[right] as number, scores[left] as number, ids[left] as number)) child = right;
      if (!TopK.worse(scores[child] as number, ids[child] as number, score, id)) break;
      scores[i] = scores[child] as number;
      ids[i] = ids[child] as number;
      i = child;
    }
    scores[i] = score;
    ids[i] = id;
  }
  sorted(): Bm25Hit[] {
    const hits: Bm25Hit[] = [];
    for (let i = 0; i < this.size; i++) hits.push({ id: this.ids[i] as number, score: this.scores[i] as number });
    return hits.sort((x, y) => (y.score !== x.score ? (y.score > x.score ? 1 : -1) : x.id - y.id));
  }
}

/** A filter compiled against one base's dictionaries: per-value verdicts, so a document costs a few array reads. */
function compileFilter(base: PackedBase, filter: Bm25Filter): ((doc: number) => boolean) | 'none' {
  const { dicts } = base;
  const statusOk = Uint8Array.from(dicts.status, (s) =>
    !filter.statuses || filter.statuses.has(s as EngramStatus) ? 1 : s === 'pending' && filter.pendingLearnedBy ? 2 : 0,
  );
  const learnedOk = Uint8Array.from(dicts.learnedBy, (l) => (filter.pendingLearnedBy?.has(l) ? 1 : 0));
  const projectOk = filter.projects ? Uint8Array.from(dicts.project, (p) => (filter.projects?.has(p) ? 1 : 0)) : undefined;
  const categoryOk =
    filter.category !== undefined ? Uint8Array.from(dicts.category, (c) => (inCategory(c, filter.category as string) ? 1 : 0)) : undefined;
  let required: number[] | undefined;
  if (filter.tags?.length) {
    required = [];
    for (const tag of filter.tags) {
      const id = dicts.tag.indexOf(tag);
      if (id < 0) return 'none'; // no base document holds that tag
      required.push(id);
    }
  }
  const { status, learnedBy, project, category, tagOffsets, tagIds } = base;
  return (doc) => {
    const verdict = statusOk[status[doc] as number];
    if (verdict === 0 || (verdict === 2 && learnedOk[learnedBy[doc] as number] === 0)) return false;
    if (projectOk && projectOk[project[doc] as number] === 0) return false;
    if (categoryOk && categoryOk[category[doc] as number] === 0) return false;
    if (required) {
      const from = tagOffsets[doc] as number;
      const to = tagOffsets[doc + 1] as number;
      for (const tag of required) {
        let found = false;
        for (let i = from; i < to; i++) {
          if (tagIds[i] === tag) {
            found = true;
            break;
          }
        }
        if (!found) return false;
      }
    }
    return true;
  };
}

/** The same filter on an overlay document's values (the rule wink's filter applied to retained field values). */
function overlayPasses(doc: OverlayDoc, filter: Bm25Filter): boolean {
  if (filter.statuses && !filter.statuses.has(doc.status as EngramStatus)) {
    if (doc.status !== 'pending' || !filter.pendingLearnedBy?.has(doc.learnedBy)) return false;
  }
  if (filter.projects && !filter.projects.has(doc.project)) return false;
  if (filter.category !== undefined && !inCategory(doc.category, filter.category)) return false;
  return hasAllTags(doc.tags, filter.tags);
}

const filterActive = (filter: Bm25Filter | undefined): filter is Bm25Filter =>
  filter !== undefined && (filter.projects !== undefined || filter.statuses !== undefined || filter.category !== undefined || (filter.tags?.length ?? 0) > 0);

/**
 * The index: a packed base (built by wink at one generation) plus an overlay of the engrams changed since, which
 * masks their base documents and scores their current version with wink's BM25F formula against the base's
 * statistics (N, average length, IDF). With an empty overlay, search returns exactly what wink's search returns
 * on the same documents: same ids, scores, order and ties (test/services/recall/bm25-packed.test.ts).
 */
export class PackedBm25Index implements Bm25Index {
  private generation: number;
  private masked: Uint8Array | undefined;
  private maskedCount = 0;
  private readonly overlay = new Map<number, OverlayDoc>();
  /** Overlay postings: term → ids of overlay documents holding it. */
  private readonly overlayTerms = new Map<string, Set<number>>();
  /** Ids changed since the base (whatever became of them): what the overlay costs. */
  private readonly changed = new Set<number>();

  constructor(readonly base: PackedBase) {
    this.generation = base.state.generation;
  }

  get state(): SearchState {
    return { store_uid: this.base.state.store_uid, generation: this.generation };
  }

  get docs(): number {
    return this.base.docs - this.maskedCount + this.overlay.size;
  }

  /** Engrams changed since the base was built. */
  get overlaySize(): number {
    return this.changed.size;
  }

  /** IDF of a term only overlay documents hold: wink's formula with the overlay's document frequency. */
  private overlayIdf(term: string): number | undefined {
    const holders = this.overlayTerms.get(term);
    return holders?.size ? winkIdf(this.base.totalDocs + this.overlay.size, holders.size) : undefined;
  }

  idf(term: string): number {
    const t = this.base.terms.get(term);
    if (t !== undefined) return this.base.idf[t] as number;
    return this.overlayIdf(term) ?? winkIdf(this.base.totalDocs, 0);
  }

  termsOf(id: number, among: readonly string[]): Set<string> | undefined {
    const fresh = this.overlay.get(id);
    if (fresh) return new Set(among.filter((term) => fresh.freq.has(term)));
    const doc = docIndex(this.base, id);
    if (doc < 0 || this.masked?.[doc]) return undefined;
    return new Set(
      among.filter((term) => {
        const t = this.base.terms.get(term);
        return t !== undefined && holds(this.base, t, doc);
      }),
    );
  }

  search(query: string, limit: number, filter?: Bm25Filter): Bm25Hit[] {
    return this.scoreTokens(searchTerms(query), undefined, limit, filter);
  }

  searchWeighted(terms: ReadonlyArray<{ term: string; weight: number }>, limit: number, filter?: Bm25Filter): Bm25Hit[] {
    return this.scoreTokens(
      terms.map((entry) => entry.term),
      terms.map((entry) => entry.weight),
      limit,
      filter,
    );
  }

  /** Term at a time into one slot per document; each term's postings count `weights[i]` times (1 when absent). */
  private scoreTokens(tokens: readonly string[], weights: readonly number[] | undefined, limit: number, filter?: Bm25Filter): Bm25Hit[] {
    const top = new TopK(Math.max(limit || 10, 1));
    const base = this.base;
    const pass = filterActive(filter) ? compileFilter(base, filter) : undefined;
    // No base document can pass (a required tag the base never saw), but an engram written since may: the overlay.
    if (pass === 'none') {
      if (this.overlay.size > 0) this.searchOverlay(tokens, weights, filter, top);
      return top.sorted();
    }
    const scratch = scratchOf(base);
    const { scores, seen, touched, epoch } = scratch;
    const { offsets, postDocs, postWeights, ids } = base;
    const masked = this.masked;
    let count = 0;
    // Term at a time, in query order (a repeated query word counts again, as in wink), into one slot per document.
    for (let i = 0; i < tokens.length; i++) {
      const t = base.terms.get(tokens[i] as string);
      if (t === undefined) continue;
      const scale = weights === undefined ? 1 : (weights[i] as number);
      const end = offsets[t + 1] as number;
      for (let p = offsets[t] as number; p < end; p++) {
        const doc = postDocs[p] as number;
        if (masked !== undefined && masked[doc] === 1) continue;
        if (pass !== undefined && !pass(doc)) continue;
        const weight = scale === 1 ? (postWeights[p] as number) / 1e4 : ((postWeights[p] as number) / 1e4) * scale;
        if (seen[doc] !== epoch) {
          seen[doc] = epoch;
          scores[doc] = weight;
          touched[count++] = doc;
        } else {
          scores[doc] = weight + (scores[doc] as number);
        }
      }
    }
    for (let i = 0; i < count; i++) {
      const doc = touched[i] as number;
      top.push(scores[doc] as number, ids[doc] as number);
    }
    if (this.overlay.size > 0) this.searchOverlay(tokens, weights, filter, top);
    return top.sorted();
  }

  private searchOverlay(tokens: readonly string[], weights: readonly number[] | undefined, filter: Bm25Filter | undefined, top: TopK): void {
    const active = filterActive(filter);
    const totals = new Map<number, number>();
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i] as string;
      const scale = weights === undefined ? 1 : (weights[i] as number);
      const holders = this.overlayTerms.get(token);
      if (!holders) continue;
      const t = this.base.terms.get(token);
      const idf = t !== undefined ? (this.base.idf[t] as number) : (this.overlayIdf(token) as number);
      for (const id of holders) {
        const doc = this.overlay.get(id) as OverlayDoc;
        if (active && !overlayPasses(doc, filter)) continue;
        const freq = doc.freq.get(token) as number;
        // wink's consolidate(): Math.sign(freq) * (|freq (k1 + 1) / (k1 · norm + freq)| · idf).toFixed(4)
        const weight = Math.sign(freq) * Number((Math.abs((freq * (k1 + 1)) / (k1 * doc.norm + freq)) * idf).toFixed(4));
        totals.set(id, (scale === 1 ? weight : weight * scale) + (totals.get(id) ?? 0));
      }
    }
    for (const [id, score] of totals) top.push(score, id);
  }

  /**
   * Takes the engrams changed since this index's generation: `ids` every changed id, `rows` their current searchable
   * fields (deleted ones included, hard-deleted ones absent). Their base documents are masked; live ones join the overlay.
   */
  apply(ids: readonly number[], rows: readonly SearchableFields[], generation: number): void {
    const base = this.base;
    for (const id of ids) {
      this.changed.add(id);
      const doc = docIndex(base, id);
      if (doc >= 0) {
        this.masked ??= new Uint8Array(base.docs);
        if (this.masked[doc] === 0) {
          this.masked[doc] = 1;
          this.maskedCount++;
        }
      }
      this.removeOverlay(id);
    }
    const average = base.totalLength / base.totalDocs;
    for (const row of rows) {
      if (row.deleted_at !== null) continue;
      const fields = fieldsOf(row);
      const freq = new Map<string, number>();
      let length = 0;
      for (const [field, weight] of FIELDS) {
        const tokens = searchTerms(fields[field] as string);
        for (const token of tokens) freq.set(token, (freq.get(token) ?? 0) + weight);
        length += tokens.length * Math.abs(weight);
      }
      const doc: OverlayDoc = {
        id: row.id,
        freq,
        norm: 1 - b + b * (length / average),
        status: row.status,
        learnedBy: row.learned_by,
        project: row.project ?? '',
        category: row.category,
        tags: row.tags,
      };
      this.overlay.set(row.id, doc);
      for (const term of freq.keys()) {
        let holders = this.overlayTerms.get(term);
        if (!holders) this.overlayTerms.set(term, (holders = new Set()));
        holders.add(row.id);
      }
    }
    this.generation = generation;
  }

  private removeOverlay(id: number): void {
    const doc = this.overlay.get(id);
    if (!doc) return;
    this.overlay.delete(id);
    for (const term of doc.freq.keys()) {
      const holders = this.overlayTerms.get(term);
      holders?.delete(id);
      if (holders?.size === 0) this.overlayTerms.delete(term);
    }
  }
}

/** Builds a base from the store's live engrams of every review state, read in one snapshot with the state. */
export function buildBm25Base(store: Store): PackedBase {
  return store.read(() => buildPackedBase(store.engrams.iterateSearchable(), store.searchState()));
}

/** Builds the index from the store's live engrams of every review state; searches filter by state, so asking for
 * pending or deprecated engrams works and active ones are never crowded out. */
export function buildBm25Index(store: Store): { index: PackedBm25Index; base: PackedBase } {
  const base = buildBm25Base(store);
  return { index: new PackedBm25Index(base), base };
}

/** Where a store's snapshot lives: one file per store (its random uid), in `$ENGRAM_HOME/index/`. */
export const snapshotPath = (indexDir: string, storeUid: string): string => join(indexDir, `bm25-${storeUid}.bin`);

/** The generation of the snapshot on disk, read from its header alone, or undefined. */
function snapshotGeneration(file: string): number | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const prefix = Buffer.alloc(16);
    if (readSync(fd, prefix, 0, 16, 0) !== 16) return undefined;
    const length = prefix.readUInt32LE(12);
    const head = Buffer.alloc(16 + length);
    if (readSync(fd, head, 0, head.length, 0) !== head.length) return undefined;
    return readSnapshotHeader(head)?.generation;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Loads a persisted snapshot built from this store with today's settings at or before `state`'s generation, or
 * undefined (missing, stale settings, another store's, a later generation than the store's, torn or foreign).
 */
export function loadBm25Snapshot(indexDir: string, state: SearchState): PackedBase | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(snapshotPath(indexDir, state.store_uid));
  } catch {
    return undefined;
  }
  const header = readSnapshotHeader(bytes);
  if (!header || !sameSettings(header) || header.store_uid !== state.store_uid || header.generation > state.generation) return undefined;
  try {
    return decodeSnapshot(bytes);
  } catch {
    return undefined; // A torn or foreign file is rebuilt, never trusted.
  }
}

/**
 * Writes a snapshot atomically (temp file + rename), so a reader never sees half of one; a snapshot of a later
 * generation already there is kept. Returns whether this one was written.
 */
export function saveBm25Snapshot(indexDir: string, base: PackedBase, bytes: Uint8Array = encodeSnapshot(base)): boolean {
  mkdirSync(indexDir, { recursive: true, mode: 0o700 });
  const target = snapshotPath(indexDir, base.state.store_uid);
  if ((snapshotGeneration(target) ?? -1) > base.state.generation) return false;
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, bytes, { mode: 0o600 });
  renameSync(temporary, target);
  // The JSON snapshot of earlier versions is never read again.
  rmSync(join(indexDir, `bm25-${base.state.store_uid}.json`), { force: true });
  return true;
}

/** How {@link Bm25Cache.get} obtained the index. */
export type Bm25Source = 'memory' | 'snapshot' | 'rebuilt';

/**
 * Builds a base away from the caller's thread (the warm server's worker): reads the store at `dbPath`, persists the
 * snapshot in `indexDir` when given, and answers its bytes.
 */
export type Bm25Builder = (job: { dbPath: string; indexDir: string | undefined }) => Promise<Uint8Array>;

/** Options for {@link createBm25Cache}. */
export interface Bm25CacheOptions {
  /** Non-fatal problems (a snapshot that cannot be written, a background build that failed). */
  onError?: (error: unknown) => void;
  /** Rebuilds off this thread; without it, a rebuild runs synchronously in the search that needs it. */
  builder?: Bm25Builder;
  /** Smallest base that takes changes incrementally; smaller stores rebuild, which costs less than 50 ms. @default 1000 */
  overlayFrom?: number;
}

/** Keeps the current index in memory; takes changes incrementally, reloads or rebuilds when it has to. */
export interface Bm25Cache {
  /** The index at the store's current generation (synchronous: a rebuild, if needed, runs here). */
  get(store: Store): { index: Bm25Index; source: Bm25Source };
  /** The same, but a rebuild the builder can do is awaited instead of run on this thread. */
  getAsync(store: Store): Promise<{ index: Bm25Index; source: Bm25Source }>;
  /** Resolves when no background build is running (tests, shutdown). */
  settled(): Promise<void>;
}

/** Changes an index takes incrementally before a rebuild is due (background) or forced (synchronous). */
export function overlayLimits(docs: number): { background: number; rebuild: number } {
  return { background: Math.max(200, Math.ceil(docs * 0.02)), rebuild: Math.max(1_000, Math.ceil(docs * 0.1)) };
}

/**
 * An index cache for one process. A warm process asks SQLite for the generation (one row) and reuses its index,
 * taking the engrams changed since from the change log; a cold one loads the snapshot and takes the changes since
 * it; when too much changed, or the store is small, the base is rebuilt — by the builder off the event loop when
 * there is one (the warm server), else here — and persisted for the next cold process.
 * `indexDir` undefined keeps everything in memory (benchmarks on throwaway stores).
 */
export function createBm25Cache(indexDir: string | undefined, options: Bm25CacheOptions | ((error: unknown) => void) = {}): Bm25Cache {
  const { onError, builder, overlayFrom = 1_000 } = typeof options === 'function' ? { onError: options } : options;
  let current: PackedBm25Index | undefined;
  /** A base the builder finished, waiting to take over at the next search. */
  let fresh: PackedBase | undefined;
  let building: Promise<void> | undefined;

  /** Brings `index` to the store's current generation from the change log, if the log allows it within `limit`. */
  const advance = (index: PackedBm25Index, store: Store, limit: number): boolean => {
    if (index.base.docs < overlayFrom) return false;
    const changes = store.read(() => {
      const since = store.searchChanges(index.state.generation);
      if (!since.complete || index.overlaySize + since.ids.length > limit) return undefined;
      return { since, rows: store.engrams.searchable(since.ids) };
    });
    if (!changes) return false;
    index.apply(changes.since.ids, changes.rows, changes.since.generation);
    return true;
  };

  // With a builder the rebuild happens away from searches, so the overlay may grow further while it runs.
  const limitFor = (index: PackedBm25Index): number => overlayLimits(index.base.docs).rebuild * (builder ? 3 : 1);

  /** When a background build last failed: the next one waits a minute (a locked store is not hammered per search). */
  let failedAt = -Infinity;
  const background = (store: Store): void => {
    if (!builder || building || store.path === ':memory:' || !current || Date.now() - failedAt < 60_000) return;
    if (current.overlaySize < overlayLimits(current.base.docs).background) return;
    void rebuildAway(store);
  };

  const rebuildAway = (store: Store): Promise<void> => {
    building ??= (builder as Bm25Builder)({ dbPath: store.path, indexDir })
      .then((bytes) => {
        fresh = decodeSnapshot(bytes);
      })
      .catch((error: unknown) => {
        failedAt = Date.now();
        onError?.(error);
      })
      .finally(() => {
        building = undefined;
      });
    return building;
  };

  /** Everything short of a rebuild: memory, a fresh background base, the snapshot — each brought up to date. */
  const cheap = (store: Store): { index: Bm25Index; source: Bm25Source } | undefined => {
    const state = store.searchState();
    if (fresh) {
      const candidate = fresh.state.store_uid === state.store_uid ? new PackedBm25Index(fresh) : undefined;
      fresh = undefined;
      if (candidate && (candidate.state.generation === state.generation || advance(candidate, store, limitFor(candidate)))) current = candidate;
    }
    if (current && current.state.store_uid === state.store_uid) {
      if (current.state.generation === state.generation) return { index: current, source: 'memory' };
      if (advance(current, store, limitFor(current))) {
        background(store);
        return { index: current, source: 'memory' };
      }
    }
    const loaded = indexDir ? loadBm25Snapshot(indexDir, state) : undefined;
    if (loaded) {
      const index = new PackedBm25Index(loaded);
      if (loaded.state.generation === state.generation || advance(index, store, limitFor(index))) {
        current = index;
        background(store);
        return { index, source: 'snapshot' };
      }
    }
    return undefined;
  };

  const rebuildHere = (store: Store): { index: Bm25Index; source: Bm25Source } => {
    const base = buildBm25Base(store);
    current = new PackedBm25Index(base);
    if (indexDir) {
      try {
        saveBm25Snapshot(indexDir, base);
      } catch (error) {
        onError?.(error); // A read-only home still searches; it just rebuilds next time.
      }
    }
    return { index: current, source: 'rebuilt' };
  };

  return {
    get(store) {
      return cheap(store) ?? rebuildHere(store);
    },
    async getAsync(store) {
      const found = cheap(store);
      if (found) return found;
      // A small store rebuilds faster here than a worker starts.
      const small = current ? current.base.docs < overlayFrom : store.engrams.counts().total < overlayFrom;
      if (!builder || store.path === ':memory:' || small) return rebuildHere(store);
      await rebuildAway(store);
      const built = cheap(store);
      return built ? { ...built, source: 'rebuilt' } : rebuildHere(store);
    },
    async settled() {
      await building;
    },
  };
}

/**
 * Builds a base, persists it when `indexDir` is given (then prunes the change log it covers) and answers the snapshot
 * bytes: what a {@link Bm25Builder} runs in the warm server's worker thread.
 */
export function buildBm25Snapshot(store: Store, indexDir: string | undefined): Uint8Array {
  const base = buildBm25Base(store);
  const bytes = encodeSnapshot(base);
  if (indexDir && saveBm25Snapshot(indexDir, base, bytes)) store.write(() => store.pruneSearchChanges(base.state.generation));
  return bytes;
}

/** Rebuilds the index from the store now, persists it and prunes the change log it covers (`engram reindex`). */
export function rebuildBm25Snapshot(store: Store, indexDir: string): { docs: number; ms: number } {
  const started = performance.now();
  const bytes = buildBm25Snapshot(store, indexDir);
  const docs = readSnapshotHeader(bytes)?.docs ?? 0;
  return { docs, ms: Math.round(performance.now() - started) };
}
