/**
 * `explain` and `index rebuild` for a working folder: find its tapes and cache (`tapeLocation`), bring the index up
 * to date with the tapes (by tape id), and answer from it. The surfaces call these and only shape the output.
 * @module
 */
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { EngramError } from '../../core/index.js';
import { indexPathForProfile, rebuildIndex, type RebuildReport } from './evidence-index.js';
import { explainSpan, type ExplainOptions, type ExplainResponse } from './explain.js';
import { refreshIndex, type RefreshReport, type TapeCatalog } from './index-refresh.js';
import { tapeLocation } from './location.js';
import { listTapes, readTape } from './store.js';
import type { IndexProfile } from './tuning.js';

/** Which folder and home to work in. */
export interface FolderOptions {
  cwd: string;
  /** `$ENGRAM_HOME`: where tapes of repositories that are not opted in live. */
  home: string;
  /** @default 'default' */
  profile?: IndexProfile;
}

function catalogOf(tapesDir: string): TapeCatalog {
  return { list: () => listTapes(tapesDir), read: (path) => readTape(path) };
}

/** The lines `start..end` of a file (1-based, inclusive) and the whole text; NOT_FOUND / IO / INVALID_INPUT. */
export function readSpan(path: string, start: number, end: number): { text: string; fileText: string } {
  let fileText: string;
  try {
    fileText = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new EngramError(code === 'ENOENT' ? 'NOT_FOUND' : 'IO', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  const lines = fileText.split('\n');
  const count = fileText.endsWith('\n') ? lines.length - 1 : lines.length;
  if (end > count) throw new EngramError('INVALID_INPUT', `${path} has ${count} lines; the span ${start}-${end} goes past its end`);
  return { text: lines.slice(start - 1, end).join('\n'), fileText };
}

/** Explains lines `start..end` of `file` (relative to `cwd`), refreshing the folder's index first. */
export function explainInFolder(
  folder: FolderOptions,
  target: { file: string; start: number; end: number },
  options: Omit<ExplainOptions, 'loadTape'> = {},
): ExplainResponse & { index: { path: string; refresh: RefreshReport } } {
  const location = tapeLocation(folder.cwd, folder.home);
  const absolute = resolve(folder.cwd, target.file);
  const { text, fileText } = readSpan(absolute, target.start, target.end);
  const path = indexPathForProfile(location.cache_dir, folder.profile ?? 'default');
  const catalog = catalogOf(location.tapes_dir);
  const { index, report } = refreshIndex(path, catalog, { profile: folder.profile ?? 'default' });
  try {
    const paths = new Map(catalog.list().map((file) => [file.tape_id, file.path]));
    const file = relative(location.root, absolute) || target.file;
    const response = explainSpan(index, { file, start: target.start, end: target.end, text, fileText }, {
      ...options,
      loadTape: (tapeId) => {
        const tapePath = paths.get(tapeId);
        return tapePath ? readTape(tapePath) : null;
      },
    });
    return { ...response, index: { path, refresh: report } };
  } finally {
    index.close();
  }
}

/** Rebuilds the folder's index of `profile` from all its tapes. */
export function rebuildFolderIndex(folder: FolderOptions): RebuildReport & { tapes_dir: string } {
  const location = tapeLocation(folder.cwd, folder.home);
  const catalog = catalogOf(location.tapes_dir);
  const profile = folder.profile ?? 'default';
  const files = catalog.list();
  const report = rebuildIndex(indexPathForProfile(location.cache_dir, profile), (function* () {
    for (const file of files) yield catalog.read(file.path);
  })(), { profile });
  return { ...report, tapes_dir: location.tapes_dir };
}
