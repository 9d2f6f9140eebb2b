/**
 * The tape folders a store knows of: those of the folders its sessions ran in and its engrams were learned in (an
 * opted-in repository's `.engram/tapes/`, else `$ENGRAM_HOME/tapes/<project>/`), and every project folder under
 * `$ENGRAM_HOME/tapes/` — for the latter the working folder is read from its newest tape's meta. What the viewer's
 * Tapes screen lists and explains in.
 * @module
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../../core/index.js';
import { listTapePage, tapeLocation, type TapeLocation } from '../tape/index.js';

/** One tape folder and the working tree it belongs to. */
export interface TapeFolder {
  /** The working tree (a repository's root, or the folder itself outside git); null when only its tapes are known and none says where it ran. */
  root: string | null;
  /** The project key of `$ENGRAM_HOME/tapes/<project>/`. */
  project: string;
  opted_in: boolean;
  tapes_dir: string;
}

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

const folderOf = (location: TapeLocation): TapeFolder => ({ root: location.root, project: location.project, opted_in: location.opted_in, tapes_dir: location.tapes_dir });

/** Every tape folder this store and home know of, by tapes folder (each once), opted-in repositories first. */
export function tapeFolders(store: Store, home: string): TapeFolder[] {
  const cwds = store.read(
    () =>
      store.db
        .prepare(
          `SELECT DISTINCT folder FROM (
             SELECT coalesce(repo_root, cwd) AS folder FROM sessions
             UNION SELECT cwd FROM engram_sources) WHERE folder IS NOT NULL`,
        )
        .pluck()
        .all() as string[],
  );
  const folders = new Map<string, TapeFolder>();
  const roots = new Set<string>();
  for (const cwd of cwds) {
    const location = tapeLocation(cwd, home);
    // Several folders of one working tree resolve to the same root.
    if (roots.has(location.root)) continue;
    roots.add(location.root);
    if (!folders.has(location.tapes_dir)) folders.set(location.tapes_dir, folderOf(location));
  }
  const homeTapes = join(home, 'tapes');
  let projects: string[] = [];
  try {
    projects = readdirSync(homeTapes).filter((name) => isDirectory(join(homeTapes, name)));
  } catch {
    // No tapes in the home yet.
  }
  for (const project of projects) {
    const dir = join(homeTapes, project);
    if (folders.has(dir)) continue;
    // Where it ran: the newest tape's meta names the folder, if that folder is still this project (a repository that
    // opted in later keeps its older tapes here).
    const cwd = listTapePage([dir], { limit: 1 }).tapes[0]?.cwd ?? null;
    const location = cwd ? tapeLocation(cwd, home) : null;
    folders.set(dir, { root: location?.project === project ? location.root : null, project, opted_in: false, tapes_dir: dir });
  }
  return [...folders.values()].sort((a, b) => Number(b.opted_in) - Number(a.opted_in) || a.project.localeCompare(b.project));
}
