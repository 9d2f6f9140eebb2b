import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EngramError, findRepo } from '../../core/index.js';

/** An opted-in repository as sync sees it. */
export interface SyncRepository {
  /** The working tree's root. */
  root: string;
  /** The main working tree's path: the key of this repository's sync state (worktrees share it). */
  key: string;
  /** The project its memory belongs to (the main tree's folder name, as the hooks name it). */
  project: string;
  /** `<root>/.engram`. */
  engramDir: string;
}

/** The repository `cwd` is in, which must have opted in with `engram init` (sync writes into its .engram/). */
export function syncRepository(cwd: string): SyncRepository {
  const repo = findRepo(cwd);
  if (!repo) throw new EngramError('NOT_FOUND', `${cwd} is not inside a git repository: engram sync shares memory through one`);
  const engramDir = join(repo.root, '.engram');
  if (!existsSync(engramDir)) {
    throw new EngramError('INVALID_INPUT', `${repo.root} is not opted in: run \`engram init\` there first (engram sync writes into .engram/)`);
  }
  return { root: repo.root, key: repo.mainRoot, project: repo.name, engramDir };
}
