import bm25 from 'wink-bm25-text-search';
import type { SearchableFields, SearchState } from '../../core/index.js';
import { cachedSearchTerms, TEXT_PREP_VERSION } from './text.js';
import { TUNING } from './tuning.js';

/**
 * The BM25 base index in typed arrays. wink-bm25-text-search computes every weight (addDoc + consolidate: its BM25F
 * formula, its IDF, its rounding to 4 decimals); this module then keeps only what search needs, packed:
 *
 * - postings per term (CSR): `offsets[t]..offsets[t+1]` index `postDocs` (document indexes, ascending) and
 *   `postWeights` (wink's weight × 10⁴ as an Int32: wink rounds with toFixed(4), so `int / 1e4` is the very double
 *   wink holds — checked while packing);
 * - per-document columns the filters read (review status, learned_by, project, category as dictionary ids; tags as a
 *   CSR list of dictionary ids) and the engram ids, ascending, so a document's index orders like its id;
 * - wink's IDF per term, its document count and corpus length (padding included), for the abstain rule and for
 *   scoring documents changed since the build (the overlay, bm25.ts).
 *
 * No document text or field value is kept twice: the heap holds these arrays, the term strings and a term → index map.
 */
export interface PackedBase {
  state: SearchState;
  /** Real documents (padding excluded). */
  docs: number;
  /** wink's document count and corpus length (padding included): N and the average length of its formula. */
  totalDocs: number;
  totalLength: number;
  terms: Map<string, number>;
  termList: string[];
  idf: Float64Array;
  offsets: Uint32Array;
  postDocs: Uint32Array;
  postWeights: Int32Array;
  ids: Float64Array;
  status: Uint32Array;
  learnedBy: Uint32Array;
  project: Uint32Array;
  category: Uint32Array;
  tagOffsets: Uint32Array;
  tagIds: Uint32Array;
  dicts: Dictionaries;
}

/** String values of the filter columns; a column holds indexes into its list. */
export interface Dictionaries {
  status: string[];
  learnedBy: string[];
  project: string[];
  category: string[];
  tag: string[];
}

/** wink's fields (weights from tuning.ts). Category paths read as words: `tooling/git` → "tooling git". */
export function fieldsOf(engram: Pick<SearchableFields, 'title' | 'text' | 'category' | 'tags'>): Record<string, string> {
  return {
    title: engram.title ?? '',
    text: engram.text,
    category: engram.category.replace(/[/_.-]/g, ' '),
    tags: engram.tags.join(' '),
  };
}

// wink refuses to consolidate fewer than 3 documents. Tiny stores get empty padding documents, which match nothing
// and are never returned; with fewer than three real documents IDF barely matters anyway.
const MIN_DOCS = 3;
const PADDING = { title: '', text: '', category: '', tags: '' };

/** Builds a dictionary column incrementally. */
class Dictionary {
  readonly values: string[] = [];
  private readonly index = new Map<string, number>();
  id(value: string): number {
    let id = this.index.get(value);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(value);
      this.index.set(value, id);
    }
    return id;
  }
}

/** The settings a base was built with; a snapshot with other settings is rebuilt. */
export const buildSettings = () => ({ prep: TEXT_PREP_VERSION, fields: { ...TUNING.bm25Fields }, params: { ...TUNING.bm25Params } });

/**
 * Feeds the live engrams to wink, consolidates, and packs the result. `rows` must be in ascending id order (the
 * order wink's own search breaks ties in).
 */
export function buildPackedBase(rows: Iterable<SearchableFields>, state: SearchState): PackedBase {
  const engine = bm25();
  engine.defineConfig({ fldWeights: { ...TUNING.bm25Fields }, bm25Params: { ...TUNING.bm25Params } });
  // Same analysis as searchTerms, with stems memoised: the build stems millions of words from a small vocabulary.
  engine.definePrepTasks([cachedSearchTerms()]);
  const ids: number[] = [];
  const status = new Dictionary();
  const learnedBy = new Dictionary();
  const project = new Dictionary();
  const category = new Dictionary();
  const tag = new Dictionary();
  const columns = { status: [] as number[], learnedBy: [] as number[], project: [] as number[], category: [] as number[] };
  const tagOffsets: number[] = [0];
  const tagIds: number[] = [];
  let last = -Infinity;
  for (const row of rows) {
    if (row.id <= last) throw new Error('buildPackedBase: rows must come in ascending id order');
    last = row.id;
    engine.addDoc(fieldsOf(row), String(row.id));
    ids.push(row.id);
    columns.status.push(status.id(row.status));
    columns.learnedBy.push(learnedBy.id(row.learned_by));
    columns.project.push(project.id(row.project ?? ''));
    columns.category.push(category.id(row.category));
    for (const value of row.tags) tagIds.push(tag.id(value));
    tagOffsets.push(tagIds.length);
  }
  for (let pad = ids.length; pad < MIN_DOCS; pad++) engine.addDoc(PADDING, `pad:${pad}`);
  engine.consolidate();

  const tokens = engine.getTokens();
  const idf = engine.getIDF();
  const termCount = idf.length;
  const termList = new Array<string>(termCount);
  for (const term in tokens) termList[tokens[term] as number] = term;
  const documents = engine.getDocs();

  // One pass over wink's documents into flat (term, weight) pairs in document order, then a counting sort by term:
  // each term's postings stay in document order.
  let capacity = 1 << 16;
  let flatTerms = new Uint32Array(capacity);
  let flatWeights = new Int32Array(capacity);
  const docEnds = new Uint32Array(ids.length);
  const counts = new Uint32Array(termCount + 1);
  let total = 0;
  ids.forEach((id, doc) => {
    const freq = (documents[String(id)] as { freq: Record<string, number> }).freq;
    for (const token in freq) {
      if (total === capacity) {
        capacity *= 2;
        const terms = new Uint32Array(capacity);
        terms.set(flatTerms);
        flatTerms = terms;
        const weights = new Int32Array(capacity);
        weights.set(flatWeights);
        flatWeights = weights;
      }
      const t = Number(token);
      const weight = freq[token] as number;
      const packed = Math.round(weight * 1e4);
      if (packed / 1e4 !== weight) throw new Error(`wink weight ${weight} is not a 4-decimal number; the packed index would differ`);
      flatTerms[total] = t;
      flatWeights[total] = packed;
      counts[t + 1]! += 1;
      total++;
    }
    docEnds[doc] = total;
  });
  const offsets = new Uint32Array(termCount + 1);
  for (let t = 0; t < termCount; t++) offsets[t + 1] = (offsets[t] as number) + (counts[t + 1] as number);
  const postDocs = new Uint32Array(total);
  const postWeights = new Int32Array(total);
  const cursor = offsets.slice(0, termCount);
  for (let doc = 0, at = 0; doc < ids.length; doc++) {
    for (const end = docEnds[doc] as number; at < end; at++) {
      const t = flatTerms[at] as number;
      const to = cursor[t] as number;
      postDocs[to] = doc;
      postWeights[to] = flatWeights[at] as number;
      cursor[t] = to + 1;
    }
  }
  const terms = new Map<string, number>();
  termList.forEach((term, t) => terms.set(term, t));
  return {
    state,
    docs: ids.length,
    totalDocs: engine.getTotalDocs(),
    totalLength: engine.getTotalCorpusLength(),
    terms,
    termList,
    idf: Float64Array.from(idf),
    offsets,
    postDocs,
    postWeights,
    ids: Float64Array.from(ids),
    status: Uint32Array.from(columns.status),
    learnedBy: Uint32Array.from(columns.learnedBy),
    project: Uint32Array.from(columns.project),
    category: Uint32Array.from(columns.category),
    tagOffsets: Uint32Array.from(tagOffsets),
    tagIds: Uint32Array.from(tagIds),
    dicts: { status: status.values, learnedBy: learnedBy.values, project: project.values, category: category.values, tag: tag.values },
  };
}

/** Index of an engram id among the base's documents, or -1. */
export function docIndex(base: PackedBase, id: number): number {
  const { ids } = base;
  let low = 0;
  let high = ids.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const value = ids[mid] as number;
    if (value === id) return mid;
    if (value < id) low = mid + 1;
    else high = mid - 1;
  }
  return -1;
}

/** Whether document `doc` holds term `t` (binary search in the term's postings, which are in document order). */
export function holds(base: PackedBase, t: number, doc: number): boolean {
  const { postDocs } = base;
  let low = base.offsets[t] as number;
  let high = (base.offsets[t + 1] as number) - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const value = postDocs[mid] as number;
    if (value === doc) return true;
    if (value < doc) low = mid + 1;
    else high = mid - 1;
  }
  return false;
}

// ---- Snapshot bytes: header + typed arrays, read with one readFileSync ----------------------------------------------

const MAGIC = 'ENGRAMB25';
/** Bump when the layout below changes. */
export const SNAPSHOT_FORMAT = 3;

/** What a snapshot's header says: what the base was built from and how, and where each array is. */
export interface SnapshotHeader {
  format: number;
  prep: number;
  fields: Record<string, number>;
  params: Record<string, number>;
  store_uid: string;
  generation: number;
  docs: number;
  total_docs: number;
  total_length: number;
  dicts: Dictionaries;
  /** Byte offset and element count of each section, in {@link SECTIONS} order. */
  sections: Array<[number, number]>;
  bytes: number;
}

type ArrayKind = 'u32' | 'i32' | 'f64' | 'utf8';
const SECTIONS: ReadonlyArray<[keyof PackedBase | 'termBlob', ArrayKind]> = [
  ['offsets', 'u32'],
  ['postDocs', 'u32'],
  ['postWeights', 'i32'],
  ['idf', 'f64'],
  ['ids', 'f64'],
  ['status', 'u32'],
  ['learnedBy', 'u32'],
  ['project', 'u32'],
  ['category', 'u32'],
  ['tagOffsets', 'u32'],
  ['tagIds', 'u32'],
  ['termBlob', 'utf8'],
];

const align8 = (n: number): number => (n + 7) & ~7;

/** Encodes a base as snapshot bytes: magic, header length, JSON header, then each array 8-byte aligned. */
export function encodeSnapshot(base: PackedBase): Uint8Array {
  // Terms are stems of [\p{L}\p{N}]+ words: they never contain a newline.
  const blob = Buffer.from(base.termList.join('\n'), 'utf8');
  const arrays: Array<ArrayBufferView> = SECTIONS.map(([name]) => (name === 'termBlob' ? blob : (base[name] as ArrayBufferView)));
  const counts = arrays.map((array, i) => (SECTIONS[i]?.[1] === 'utf8' ? array.byteLength : (array as Uint32Array).length));
  const header: SnapshotHeader = {
    format: SNAPSHOT_FORMAT,
    ...buildSettings(),
    store_uid: base.state.store_uid,
    generation: base.state.generation,
    docs: base.docs,
    total_docs: base.totalDocs,
    total_length: base.totalLength,
    dicts: base.dicts,
    sections: [],
    bytes: 0,
  };
  // The header holds the offsets, and its length moves them: lay out with a generous fixed space for the numbers.
  const provisional = Buffer.byteLength(JSON.stringify({ ...header, sections: counts.map(() => [1e15, 1e15]), bytes: 1e15 }), 'utf8');
  let at = align8(16 + provisional);
  header.sections = arrays.map((array, i) => {
    const section: [number, number] = [at, counts[i] as number];
    at = align8(at + array.byteLength);
    return section;
  });
  header.bytes = at;
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const out = new Uint8Array(at);
  out.set(Buffer.from(MAGIC, 'latin1'), 0);
  new DataView(out.buffer).setUint32(12, json.byteLength, true);
  out.set(json, 16);
  arrays.forEach((array, i) => out.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), (header.sections[i] as [number, number])[0]));
  return out;
}

/** Reads just the header, or undefined when the bytes are not a snapshot. */
export function readSnapshotHeader(bytes: Uint8Array): SnapshotHeader | undefined {
  if (bytes.byteLength < 16 || Buffer.from(bytes.buffer, bytes.byteOffset, MAGIC.length).toString('latin1') !== MAGIC) return undefined;
  const length = new DataView(bytes.buffer, bytes.byteOffset, 16).getUint32(12, true);
  if (16 + length > bytes.byteLength) return undefined;
  try {
    const header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 16, length).toString('utf8')) as SnapshotHeader;
    return typeof header === 'object' && header !== null ? header : undefined;
  } catch {
    return undefined;
  }
}

/** True when a snapshot was built with this build's format, analysis and BM25 settings. */
export function sameSettings(header: SnapshotHeader): boolean {
  const now = buildSettings();
  return (
    header.format === SNAPSHOT_FORMAT &&
    header.prep === now.prep &&
    JSON.stringify(header.fields) === JSON.stringify(now.fields) &&
    JSON.stringify(header.params) === JSON.stringify(now.params)
  );
}

/**
 * Decodes snapshot bytes into a base whose arrays are views on `bytes` (no copy when aligned). Throws on anything
 * torn or inconsistent: every offset is checked against the file, every posting against the document count.
 */
export function decodeSnapshot(input: Uint8Array): PackedBase {
  const header = readSnapshotHeader(input);
  if (!header) throw new Error('not a BM25 snapshot');
  if (header.bytes !== input.byteLength) throw new Error('BM25 snapshot has the wrong length (torn)');
  if (!Array.isArray(header.sections) || header.sections.length !== SECTIONS.length) throw new Error('BM25 snapshot sections missing');
  // Typed arrays need aligned offsets; a Buffer from the pool may not start on 8 bytes.
  const bytes = input.byteOffset % 8 === 0 ? input : input.slice();
  const view = <T>(i: number, make: (buffer: ArrayBufferLike, offset: number, length: number) => T, size: number): T => {
    const [offset, count] = header.sections[i] as [number, number];
    if (!Number.isInteger(offset) || !Number.isInteger(count) || offset < 0 || count < 0 || offset % 8 !== 0 || offset + count * size > bytes.byteLength) {
      throw new Error('BM25 snapshot section out of bounds');
    }
    return make(bytes.buffer, bytes.byteOffset + offset, count);
  };
  const u32 = (i: number) => view(i, (b, o, n) => new Uint32Array(b, o, n), 4);
  const offsets = u32(0);
  const postDocs = u32(1);
  const postWeights = view(2, (b, o, n) => new Int32Array(b, o, n), 4);
  const idf = view(3, (b, o, n) => new Float64Array(b, o, n), 8);
  const ids = view(4, (b, o, n) => new Float64Array(b, o, n), 8);
  const [status, learnedBy, project, category, tagOffsets, tagIds] = [5, 6, 7, 8, 9, 10].map(u32) as [
    Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array,
  ];
  const blob = view(11, (b, o, n) => Buffer.from(b, o, n), 1);
  const termList = blob.byteLength === 0 ? [] : blob.toString('utf8').split('\n');
  const docs = ids.length;
  const termCount = idf.length;
  const { dicts } = header;
  const ok =
    docs === header.docs &&
    termList.length === termCount &&
    offsets.length === termCount + 1 &&
    offsets[0] === 0 &&
    offsets[termCount] === postDocs.length &&
    postWeights.length === postDocs.length &&
    [status, learnedBy, project, category].every((column) => column.length === docs) &&
    tagOffsets.length === docs + 1 &&
    tagOffsets[docs] === tagIds.length &&
    typeof header.total_docs === 'number' &&
    typeof header.total_length === 'number' &&
    ['status', 'learnedBy', 'project', 'category', 'tag'].every((key) => Array.isArray(dicts?.[key as keyof Dictionaries]));
  if (!ok) throw new Error('BM25 snapshot is inconsistent');
  for (let t = 0; t < termCount; t++) if ((offsets[t] as number) > (offsets[t + 1] as number)) throw new Error('BM25 snapshot postings out of order');
  for (let p = 0; p < postDocs.length; p++) if ((postDocs[p] as number) >= docs) throw new Error('BM25 snapshot posting out of range');
  const inDict = (column: Uint32Array, size: number): boolean => column.every((value) => value < size);
  if (
    !inDict(status, dicts.status.length) ||
    !inDict(learnedBy, dicts.learnedBy.length) ||
    !inDict(project, dicts.project.length) ||
    !inDict(category, dicts.category.length) ||
    !inDict(tagIds, dicts.tag.length)
  ) {
    throw new Error('BM25 snapshot column out of range');
  }
  const terms = new Map<string, number>();
  termList.forEach((term, t) => terms.set(term, t));
  return {
    state: { store_uid: header.store_uid, generation: header.generation },
    docs,
    totalDocs: header.total_docs,
    totalLength: header.total_length,
    terms,
    termList,
    idf,
    offsets,
    postDocs,
    postWeights,
    ids,
    status,
    learnedBy,
    project,
    category,
    tagOffsets,
    tagIds,
    dicts,
  };
}
