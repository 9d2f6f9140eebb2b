import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

/** The git repository a folder belongs to, found without spawning git. */
export interface RepoInfo {
  /** The working tree that contains the folder (a linked worktree's own root for worktrees). */
  root: string;
  /** The main working tree: the same for every worktree of one repository. */
  mainRoot: string;
  /** Project name: the main working tree's folder name, so worktrees share one project. */
  name: string;
}

const MAX_LEVELS = 128;

/** Reads `gitdir: <path>` from a `.git` file (worktrees, submodules). */
function readGitFile(file: string): string | undefined {
  try {
    const match = /^gitdir:\s*(.+)\s*$/m.exec(readFileSync(file, 'utf8'));
    if (!match?.[1]) return undefined;
    return isAbsolute(match[1]) ? match[1] : resolve(dirname(file), match[1]);
  } catch {
    return undefined;
  }
}

/** The main working tree for a git dir: follows `commondir` (linked worktrees) to the shared `.git`. */
function mainRootFor(gitDir: string, fallback: string): string {
  try {
    const common = readFileSync(join(gitDir, 'commondir'), 'utf8').trim();
    const commonDir = isAbsolute(common) ? common : resolve(gitDir, common);
    return basename(commonDir) === '.git' ? dirname(commonDir) : fallback;
  } catch {
    return fallback;
  }
}

/**
 * Finds the repository that contains `cwd` by walking up to the nearest `.git` (folder or file).
 * Returns undefined outside a repository.
 */
export function findRepo(cwd: string): RepoInfo | undefined {
  let dir = resolve(cwd);
  for (let level = 0; level < MAX_LEVELS; level++) {
    const dotGit = join(dir, '.git');
    if (existsSync(dotGit)) {
      let mainRoot = dir;
      try {
        if (statSync(dotGit).isFile()) {
          const gitDir = readGitFile(dotGit);
          if (gitDir) mainRoot = mainRootFor(gitDir, dir);
        }
      } catch {
        // Unreadable .git: treat the folder as its own root.
      }
      return { root: dir, mainRoot, name: basename(mainRoot) };
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}
