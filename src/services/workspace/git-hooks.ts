import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { EngramError, findRepo } from '../../core/index.js';

/**
 * Git hooks that keep tapes and the provenance index in step with git (../shared/seeds/000 "Git hook integration"):
 * `pre-commit` ingests the agents' new sessions and stages the new tapes, so the reasons travel with the commit;
 * `post-merge` rebuilds the local index from the merged tapes and applies the engrams teammates shared (`engram sync
 * --import`), as `post-checkout` does after a checkout or a clone's first checkout. Our lines live between markers inside the hook file,
 * right after its first line, so an existing hook keeps running unchanged (even one that ends in `exit 0`) and
 * uninstall removes exactly what we added. Nothing here can fail a commit or a merge: every command ends in `|| :`.
 */

/** The hooks we manage: pre-commit ingests and stages new tapes, post-merge rebuilds the index and imports shared
 * engrams, post-checkout imports shared engrams. */
const GIT_HOOKS = ['pre-commit', 'post-merge', 'post-checkout'] as const;
export type GitHookName = (typeof GIT_HOOKS)[number];

/** The shell command a hook runs, with `engram` the command's path (quoted). */
function hookCommand(hook: GitHookName, engram: string): string {
  const receive = `${engram} sync --import >/dev/null 2>&1 || :`;
  if (hook === 'pre-commit') return `${engram} ingest >/dev/null 2>&1 && git add -- .engram/tapes >/dev/null 2>&1 || :`;
  if (hook === 'post-merge') return `${engram} index rebuild >/dev/null 2>&1 || :; ${receive}`;
  return receive;
}

const BEGIN = '# >>> engram >>> (managed by `engram hooks git install`; `engram hooks git uninstall` removes it)';
const END = '# <<< engram <<<';
const BLOCK = /\n?# >>> engram >>>[^\n]*\n[\s\S]*?# <<< engram <<<\n?/;

/** What install, uninstall or status found for one hook. */
export interface GitHookReport {
  hook: GitHookName;
  file: string;
  /** `created` (new file), `added` (into an existing hook), `updated`, `unchanged`, `removed`, `deleted` (the file was
   * ours alone), `absent`, `skipped` (not a shell script: chain it by hand), `installed` (status). */
  action: 'created' | 'added' | 'updated' | 'unchanged' | 'removed' | 'deleted' | 'absent' | 'skipped' | 'installed';
  note: string | null;
}

/** The result of one command over every managed hook. */
export interface GitHooksResult {
  root: string;
  hooks_dir: string;
  dry_run: boolean;
  hooks: GitHookReport[];
}

function block(hook: GitHookName, engram: string): string {
  return [
    BEGIN,
    `ENGRAM_BIN="${engram}"`,
    // ENGRAM_GIT_HOOKS_OFF=1 skips it for one command; a moved or removed Engram is skipped silently.
    `if [ -z "\${ENGRAM_GIT_HOOKS_OFF:-}" ] && [ -x "$ENGRAM_BIN" ]; then ${hookCommand(hook, '"$ENGRAM_BIN"')}; fi`,
    END,
    '',
  ].join('\n');
}

/** The repository root of an opted-in repository, and where git reads its hooks (worktrees and core.hooksPath). */
function locate(cwd: string): { root: string; hooksDir: string } {
  const repo = findRepo(cwd);
  if (!repo) throw new EngramError('NOT_FOUND', `${cwd} is not inside a git repository`);
  if (!existsSync(join(repo.root, '.engram'))) {
    throw new EngramError('INVALID_INPUT', `${repo.root} is not opted in: run \`engram init\` there first (git hooks ingest into .engram/tapes/)`);
  }
  let path: string;
  try {
    path = execFileSync('git', ['rev-parse', '--git-path', 'hooks'], { cwd: repo.root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (error) {
    throw new EngramError('IO', `git could not tell where ${repo.root} keeps its hooks: ${(error as Error).message}`, { cause: error });
  }
  return { root: repo.root, hooksDir: isAbsolute(path) ? path : resolve(repo.root, path) };
}

/** A hook file we may edit: absent, empty, or a POSIX shell script (sh, bash, dash, zsh, env sh…). */
const isShell = (text: string): boolean => text.trim() === '' || /^#!\s*\S*\/(?:env\s+)?(?:ba|da|z|k)?sh\b/.test(text);

/**
 * Adds our lines to the pre-commit, post-merge and post-checkout hooks (creating them when absent), or brings them up to date.
 * `engram` is the command the hooks run (this install's `bin/engram`, an absolute path).
 */
export function installGitHooks(options: { cwd: string; engram: string; dryRun?: boolean }): GitHooksResult {
  if (/["$`\\\n]/.test(options.engram)) {
    throw new EngramError('INVALID_INPUT', `Engram's path ${options.engram} holds a character a hook cannot quote safely; move Engram elsewhere`);
  }
  const { root, hooksDir } = locate(options.cwd);
  const dryRun = options.dryRun ?? false;
  const hooks = GIT_HOOKS.map((hook): GitHookReport => {
    const file = join(hooksDir, hook);
    const ours = block(hook, options.engram);
    const existing = existsSync(file) ? readFileSync(file, 'utf8') : null;
    let next: string;
    let action: GitHookReport['action'];
    if (existing === null) {
      next = `#!/bin/sh\n${ours}`;
      action = 'created';
    } else if (!isShell(existing)) {
      return { hook, file, action: 'skipped', note: `not a shell script, left as it is; to chain Engram, have it run: ${hookCommand(hook, `"${options.engram}"`)}` };
    } else if (BLOCK.test(existing)) {
      next = existing.replace(BLOCK, `\n${ours}`);
      if (next === existing) return { hook, file, action: 'unchanged', note: null };
      action = 'updated';
    } else {
      // Right after the first line (the shebang), so a hook that ends in `exit` still runs ours.
      const newline = existing.indexOf('\n');
      next = existing.startsWith('#!') ? `${existing.slice(0, newline < 0 ? existing.length : newline)}\n${ours}${newline < 0 ? '' : existing.slice(newline + 1)}` : `#!/bin/sh\n${ours}${existing}`;
      action = 'added';
    }
    if (!dryRun) {
      mkdirSync(hooksDir, { recursive: true });
      writeFileSync(file, next);
      chmodSync(file, 0o755);
    }
    return { hook, file, action, note: null };
  });
  return { root, hooks_dir: hooksDir, dry_run: dryRun, hooks };
}

/** Removes our lines, and a hook file that held nothing else (we created it). */
export function uninstallGitHooks(options: { cwd: string; dryRun?: boolean }): GitHooksResult {
  const { root, hooksDir } = locate(options.cwd);
  const dryRun = options.dryRun ?? false;
  const hooks = GIT_HOOKS.map((hook): GitHookReport => {
    const file = join(hooksDir, hook);
    const existing = existsSync(file) ? readFileSync(file, 'utf8') : null;
    if (existing === null || !BLOCK.test(existing)) return { hook, file, action: 'absent', note: null };
    const rest = existing.replace(BLOCK, '\n').replace(/^(#![^\n]*)\n\n/, '$1\n');
    const onlyShebang = rest.replace(/^#![^\n]*/, '').trim() === '';
    if (!dryRun) {
      if (onlyShebang) rmSync(file);
      else writeFileSync(file, rest);
    }
    return { hook, file, action: onlyShebang ? 'deleted' : 'removed', note: null };
  });
  return { root, hooks_dir: hooksDir, dry_run: dryRun, hooks };
}

/** Which of our hooks are installed. */
export function gitHooksStatus(options: { cwd: string }): GitHooksResult {
  const { root, hooksDir } = locate(options.cwd);
  const hooks = GIT_HOOKS.map((hook): GitHookReport => {
    const file = join(hooksDir, hook);
    const existing = existsSync(file) ? readFileSync(file, 'utf8') : null;
    return { hook, file, action: existing !== null && BLOCK.test(existing) ? 'installed' : 'absent', note: null };
  });
  return { root, hooks_dir: hooksDir, dry_run: false, hooks };
}
