/**
 * Keeps an index in step with a tapes folder: a cheap check by tape id, then either indexing the new tapes or, when
 * that would break indexing order (a tape older than the newest indexed one, say after a merge) or the file is
 * missing or stale, a full rebuild.
 * @module
 */
import type { LoadedTape } from './events.js';
import { firstMs } from './_tape-content.js';
import {
  indexedTapeIds,
  indexState,
  indexTapes,
  latestIndexedTime,
  openEvidenceIndex,
  rebuildIndex,
  type EvidenceIndex,
} from './evidence-index.js';
import type { IndexProfile } from './tuning.js';

/** Where the tapes are: their ids and paths, and how to read one. */
export interface TapeCatalog {
  list(): Array<{ tape_id: string; path: string }>;
  read(path: string): LoadedTape;
}

/** What a refresh did. */
export interface RefreshReport {
  action: 'none' | 'added' | 'rebuilt';
  added: number;
  tapes: number;
}

/** Brings the index at `path` up to date with `catalog` and opens it. */
export function refreshIndex(
  path: string,
  catalog: TapeCatalog,
  options: { profile?: IndexProfile } = {},
): { index: EvidenceIndex; report: RefreshReport } {
  const profile = options.profile ?? 'default';
  const files = catalog.list();
  const rebuild = (): { index: EvidenceIndex; report: RefreshReport } => {
    rebuildIndex(path, readAll(catalog, files), { profile });
    return { index: openEvidenceIndex(path, { profile }), report: { action: 'rebuilt', added: files.length, tapes: files.length } };
  };
  if (indexState(path, profile) !== 'ready') return rebuild();
  const index = openEvidenceIndex(path, { profile });
  const known = indexedTapeIds(index);
  const missing = files.filter((file) => !known.has(file.tape_id));
  if (missing.length === 0) return { index, report: { action: 'none', added: 0, tapes: files.length } };
  const tapes = missing.map((file) => catalog.read(file.path)).sort((a, b) => (firstMs(a) ?? Infinity) - (firstMs(b) ?? Infinity));
  const latest = latestIndexedTime(index);
  if (latest !== null && tapes.some((tape) => (firstMs(tape) ?? Infinity) < latest)) {
    index.close();
    return rebuild();
  }
  indexTapes(index, tapes);
  return { index, report: { action: 'added', added: tapes.length, tapes: files.length } };
}

function* readAll(catalog: TapeCatalog, files: Array<{ path: string }>): Iterable<LoadedTape> {
  for (const file of files) yield catalog.read(file.path);
}

