import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { findRepo, homePaths } from '../../core/index.js';

/**
 * Where a folder's tapes and derived data live. A repository opted in with `engram init` (a `.engram/` folder at its
 * working-tree root) keeps tapes in `<root>/.engram/tapes/` (committed) and derived data in `<root>/.engram-cache/`.
 * Anything else keeps both under `$ENGRAM_HOME`, keyed by project, and nothing is written into the repository.
 */
export interface TapeLocation {
  /** The working tree that contains the folder, or the folder itself outside git. */
  root: string;
  /** True when `root` is a git working tree. */
  git: boolean;
  /** True when `root/.engram/` exists: tapes travel with the repository. */
  opted_in: boolean;
  /** Readable, collision-free key of the project (main working tree basename + short hash of its path). */
  project: string;
  /** Immutable tapes: `<id>.jsonl.zst`. */
  tapes_dir: string;
  /** Derived, rebuildable data: `cursors/`, temp files, later the index. */
  cache_dir: string;
}

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/**
 * The project key: `<basename>-<10 hex of SHA-256 of the main working tree path>`. The basename keeps it readable;
 * the hash keeps two `app/` folders apart. Worktrees of one repository share the main tree, hence one key.
 */
export function projectKey(mainRoot: string): string {
  const name = basename(mainRoot).replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '') || 'root';
  return `${name}-${createHash('sha256').update(mainRoot).digest('hex').slice(0, 10)}`;
}

/** Resolves the location for a working folder and an Engram home. Pure lookup: creates nothing. */
export function tapeLocation(cwd: string, home: string): TapeLocation {
  const folder = resolve(cwd);
  const repo = findRepo(folder);
  const root = repo?.root ?? folder;
  const project = projectKey(repo?.mainRoot ?? folder);
  if (isDirectory(join(root, '.engram'))) {
    return { root, git: repo !== undefined, opted_in: true, project, tapes_dir: join(root, '.engram', 'tapes'), cache_dir: join(root, '.engram-cache') };
  }
  return {
    root,
    git: repo !== undefined,
    opted_in: false,
    project,
    tapes_dir: join(home, 'tapes', project),
    cache_dir: join(homePaths(home).cache, 'tapes', project),
  };
}
