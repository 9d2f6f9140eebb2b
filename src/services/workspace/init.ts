import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { EngramError, findRepo } from '../../core/index.js';

/** Result of {@link initRepo}: exactly what was written, so the CLI can tell the user. */
export interface InitResult {
  /** The folder that was opted in (the repository's working tree root, or the given folder outside git). */
  root: string;
  /** Whether `root` is a git working tree. */
  git: boolean;
  /** Paths created, relative to root. Empty when everything already existed. */
  created: string[];
  /** `created` (new .gitignore), `added` (line appended), or `present` (already ignored). */
  gitignore: 'created' | 'added' | 'present';
  /** True when `.engram/` already existed. */
  already_initialized: boolean;
}

const README = `# .engram

This folder belongs to Engram, a memory and provenance tool for coding agents. It was created by \`engram init\`, which opted this repository in.

- \`tapes/\` holds immutable, compressed records of agent sessions (meant to be committed, so the reasoning behind
  the code travels with it). Tapes are redacted for secrets before they are written.
- \`chunks/\` and \`manifest.json\` (after \`engram sync\`) hold the project's shared memory in the Go engram's format,
  redacted, without anyone's personal memories (commit them; \`engram sync --import\` reads what teammates shared).
- \`../.engram-cache/\` holds derived, rebuildable indexes and is never committed.

Remove this folder and the \`.engram-cache/\` line in .gitignore to opt out.
`;

const IGNORE_LINES = new Set(['.engram-cache', '.engram-cache/', '/.engram-cache', '/.engram-cache/', '.engram-cache/*']);

/**
 * Opts a repository in: creates `.engram/` (committed: tapes) and `.engram-cache/` (local, derived) at the working
 * tree root and makes sure git ignores the cache. Idempotent: a second run creates nothing.
 */
export function initRepo(options: { cwd: string }): InitResult {
  const repo = findRepo(options.cwd);
  const root = repo?.root ?? options.cwd;
  if (!existsSync(root)) throw new EngramError('NOT_FOUND', `folder ${root} does not exist`);
  const created: string[] = [];
  const ensureDir = (path: string): void => {
    if (!existsSync(path)) {
      mkdirSync(path, { recursive: true });
      created.push(`${relative(root, path)}/`);
    }
  };
  const ensureFile = (path: string, text: string): void => {
    if (!existsSync(path)) {
      writeFileSync(path, text);
      created.push(relative(root, path));
    }
  };

  const engramDir = join(root, '.engram');
  const alreadyInitialized = existsSync(engramDir);
  try {
    ensureDir(engramDir);
    ensureDir(join(engramDir, 'tapes'));
    ensureFile(join(engramDir, 'README.md'), README);
    ensureDir(join(root, '.engram-cache'));
    // Belt and braces: even if the root .gitignore is edited later, git still skips the cache.
    ensureFile(join(root, '.engram-cache', '.gitignore'), '*\n');

    const gitignorePath = join(root, '.gitignore');
    let gitignore: InitResult['gitignore'];
    if (!existsSync(gitignorePath)) {
      writeFileSync(gitignorePath, '.engram-cache/\n');
      gitignore = 'created';
    } else {
      const text = readFileSync(gitignorePath, 'utf8');
      if (text.split(/\r?\n/).some((line) => IGNORE_LINES.has(line.trim()))) {
        gitignore = 'present';
      } else {
        appendFileSync(gitignorePath, `${text === '' || text.endsWith('\n') ? '' : '\n'}.engram-cache/\n`);
        gitignore = 'added';
      }
    }
    return { root, git: repo !== undefined, created, gitignore, already_initialized: alreadyInitialized };
  } catch (error) {
    if (error instanceof EngramError) throw error;
    throw new EngramError('IO', `could not initialise ${root}: ${(error as Error).message}`, { cause: error });
  }
}
