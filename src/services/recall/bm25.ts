import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bm25, { type Bm25Engine } from 'wink-bm25-text-search';
import type { Engram, EngramStatus, SearchState, Store } from '../../core/index.js';
import { hasAllTags, inCategory } from './gates.js';
import { searchTerms, TEXT_PREP_VERSION } from './text.js';
import { TUNING } from './tuning.js';

/** One BM25 hit: engram id and score (higher is better). */
export interface Bm25Hit {
  id: number;
  score: number;
}

/** Which engrams a BM25 search may return (evaluated inside wink on retained field values, before sorting). */
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

/** A consolidated, read-only BM25 index over the store's live engrams at one generation. */
export interface Bm25Index {
  readonly state: SearchState;
  /** Real documents (without the padding tiny stores need). */
  readonly docs: number;
  search(query: string, limit: number, filter?: Bm25Filter): Bm25Hit[];
  /** The IDF of an analysed term (a stem); a term no engram holds gets the largest IDF possible in this store. */
  idf(term: string): number;
}

// wink refuses to consolidate fewer than 3 documents. Tiny stores get empty padding documents, which match nothing
// and are never returned; with fewer than three real documents IDF barely matters anyway.
const MIN_DOCS = 3;
const PAD_PREFIX = 'pad:';

/** Snapshot header: what the index was built from and how. A mismatch on any field means rebuild. */
interface SnapshotHeader {
  /** 2: documents keep their review status (f_status, f_learned_by). */
  format: 2;
  prep: number;
  fields: Record<string, number>;
  params: Record<string, number>;
  store_uid: string;
  generation: number;
  docs: number;
}

// Original values kept beside each document (wink's `ovFldNames`) so filters run inside the search loop. They
// are not analysed: only `fldWeights` fields are.
const RETAINED = ['f_project', 'f_category', 'f_tags', 'f_status', 'f_learned_by'] as const;

function newEngine(): Bm25Engine {
  const engine = bm25();
  engine.defineConfig({ fldWeights: { ...TUNING.bm25Fields }, bm25Params: { ...TUNING.bm25Params }, ovFldNames: [...RETAINED] });
  engine.definePrepTasks([searchTerms]);
  return engine;
}

/** What each engram contributes to each field. Category paths read as words: `tooling/git` → "tooling git". */
function document(engram: Pick<Engram, 'title' | 'text' | 'category' | 'tags' | 'project' | 'status' | 'learned_by'>): Record<string, unknown> {
  return {
    title: engram.title ?? '',
    text: engram.text,
    category: engram.category.replace(/[/_.-]/g, ' '),
    tags: engram.tags.join(' '),
    f_project: engram.project ?? '',
    f_category: engram.category,
    f_tags: engram.tags,
    f_status: engram.status,
    f_learned_by: engram.learned_by,
  };
}

const PADDING = { title: '', text: '', category: '', tags: '', f_project: '', f_category: '', f_tags: [], f_status: '', f_learned_by: '' };

function matches(values: Record<string, unknown>, filter: Bm25Filter | undefined): boolean {
  if (!filter) return true;
  if (filter.statuses && !filter.statuses.has(values.f_status as EngramStatus)) {
    if (values.f_status !== 'pending' || !filter.pendingLearnedBy?.has(values.f_learned_by as string)) return false;
  }
  if (filter.projects && !filter.projects.has(values.f_project as string)) return false;
  if (filter.category !== undefined && !inCategory(values.f_category as string, filter.category)) return false;
  return hasAllTags(values.f_tags as string[], filter.tags);
}

/**
 * Token index → IDF. wink keeps the table after consolidating but does not export it, so an index loaded from a
 * snapshot recounts document frequencies once, from its documents (one pass over the postings, on first use).
 */
function idfTable(engine: Bm25Engine): number[] {
  const built = engine.getIDF();
  if (built.length > 0) return built;
  const df: number[] = [];
  for (const doc of Object.values(engine.getDocs())) for (const token of Object.keys(doc.freq)) df[Number(token)] = (df[Number(token)] ?? 0) + 1;
  const total = engine.getTotalDocs();
  return Array.from(df, (n = 0) => Math.log((total - n + 0.5) / (n + 0.5) + TUNING.bm25Params.k));
}

function wrap(engine: Bm25Engine, state: SearchState, docs: number): Bm25Index {
  let tokens: Record<string, number> | undefined;
  let idfs: number[] | undefined;
  // wink's IDF, log((N − n + 0.5) / (n + 0.5) + k), at n = 0.
  const unseen = Math.log((engine.getTotalDocs() + 0.5) / 0.5 + TUNING.bm25Params.k);
  return {
    state,
    docs,
    idf(term) {
      tokens ??= engine.getTokens();
      idfs ??= idfTable(engine);
      const index = tokens[term];
      return index === undefined ? unseen : (idfs[index] ?? unseen);
    },
    search(query, limit, filter) {
      // wink calls the filter for every (term, document) pair: pass none when nothing is filtered. Padding documents
      // have no terms, so they can never be returned.
      const active = filter && (filter.projects || filter.statuses || filter.category !== undefined || filter.tags?.length);
      return engine
        .search(query, limit, active ? (values) => matches(values, filter) : undefined)
        .map(([id, score]) => ({ id: Number(id), score }));
    },
  };
}

/** Builds the index from the store's live engrams of every review state (read in one snapshot with the state); searches
 * filter by state inside wink, so asking for pending or deprecated engrams works and active ones are never crowded out. */
export function buildBm25Index(store: Store): { index: Bm25Index; json: string; header: SnapshotHeader } {
  const engine = newEngine();
  const { state, docs } = store.read(() => {
    const current = store.searchState();
    let count = 0;
    for (const engram of store.engrams.iterate()) {
      engine.addDoc(document(engram), String(engram.id));
      count++;
    }
    return { state: current, docs: count };
  });
  for (let pad = docs; pad < MIN_DOCS; pad++) {
    engine.addDoc(PADDING, `${PAD_PREFIX}${pad}`);
  }
  engine.consolidate();
  const header = headerFor(state, docs);
  return { index: wrap(engine, state, docs), json: engine.exportJSON(), header };
}

function headerFor(state: SearchState, docs: number): SnapshotHeader {
  return {
    format: 2,
    prep: TEXT_PREP_VERSION,
    fields: { ...TUNING.bm25Fields },
    params: { ...TUNING.bm25Params },
    store_uid: state.store_uid,
    generation: state.generation,
    docs,
  };
}

const sameSettings = (header: SnapshotHeader): boolean =>
  header.format === 2 &&
  header.prep === TEXT_PREP_VERSION &&
  JSON.stringify(header.fields) === JSON.stringify(TUNING.bm25Fields) &&
  JSON.stringify(header.params) === JSON.stringify(TUNING.bm25Params);

/** Where a store's snapshot lives: one file per store (its random uid), in `$ENGRAM_HOME/index/`. */
export const snapshotPath = (indexDir: string, storeUid: string): string => join(indexDir, `bm25-${storeUid}.json`);

/**
 * Loads a persisted snapshot if it was built from exactly this store state with today's settings; otherwise
 * undefined. Line 1 is the header, line 2 wink's own export, so a stale snapshot is rejected after reading one line
 * of JSON instead of parsing megabytes.
 */
export function loadBm25Snapshot(indexDir: string, state: SearchState): Bm25Index | undefined {
  let text: string;
  try {
    text = readFileSync(snapshotPath(indexDir, state.store_uid), 'utf8');
  } catch {
    return undefined;
  }
  const newline = text.indexOf('\n');
  if (newline < 0) return undefined;
  try {
    const header = JSON.parse(text.slice(0, newline)) as SnapshotHeader;
    if (!sameSettings(header) || header.store_uid !== state.store_uid || header.generation !== state.generation) {
      return undefined;
    }
    const engine = bm25();
    // wink's documented order: import first, then prep tasks (they are functions and are not serialised).
    engine.importJSON(text.slice(newline + 1));
    engine.definePrepTasks([searchTerms]);
    return wrap(engine, state, header.docs);
  } catch {
    return undefined; // A torn or foreign file is rebuilt, never trusted.
  }
}

/** Writes a snapshot atomically (temp file + rename), so a reader never sees half of one. */
export function saveBm25Snapshot(indexDir: string, header: SnapshotHeader, json: string): void {
  mkdirSync(indexDir, { recursive: true, mode: 0o700 });
  const target = snapshotPath(indexDir, header.store_uid);
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(header)}\n${json}`, { mode: 0o600 });
  renameSync(temporary, target);
}

/** How {@link Bm25Cache.get} obtained the index. */
export type Bm25Source = 'memory' | 'snapshot' | 'rebuilt';

/** Keeps the current index in memory; reloads or rebuilds when the store has moved on. */
export interface Bm25Cache {
  get(store: Store): { index: Bm25Index; source: Bm25Source };
}

/**
 * An index cache for one process. A warm process asks SQLite for the generation (one row) and reuses its index; a
 * cold one loads the snapshot; a stale one rebuilds and persists a new snapshot for the next cold process.
 * `indexDir` undefined keeps everything in memory (benchmarks on throwaway stores).
 */
export function createBm25Cache(indexDir: string | undefined, onError?: (error: unknown) => void): Bm25Cache {
  let current: Bm25Index | undefined;
  return {
    get(store) {
      const state = store.searchState();
      if (current && current.state.store_uid === state.store_uid && current.state.generation === state.generation) {
        return { index: current, source: 'memory' };
      }
      const loaded = indexDir ? loadBm25Snapshot(indexDir, state) : undefined;
      if (loaded) {
        current = loaded;
        return { index: loaded, source: 'snapshot' };
      }
      const built = buildBm25Index(store);
      current = built.index;
      if (indexDir) {
        try {
          saveBm25Snapshot(indexDir, built.header, built.json);
        } catch (error) {
          onError?.(error); // A read-only home still searches; it just rebuilds next time.
        }
      }
      return { index: built.index, source: 'rebuilt' };
    },
  };
}

/** Rebuilds the index from the store now and persists it (`engram reindex`). */
export function rebuildBm25Snapshot(store: Store, indexDir: string): { docs: number; ms: number } {
  const started = performance.now();
  const built = buildBm25Index(store);
  saveBm25Snapshot(indexDir, built.header, built.json);
  return { docs: built.index.docs, ms: Math.round(performance.now() - started) };
}
