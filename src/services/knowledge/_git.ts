import { spawnSync } from 'node:child_process';
import { EngramError } from '../../core/index.js';

/** Output of a git command run in `cwd`, or null when git fails (not a repository, unknown revision). */
export function gitOutput(cwd: string, args: readonly string[], options: { maxBuffer?: number } = {}): string | null {
  const result = spawnSync('git', ['-c', 'core.quotepath=off', ...args], {
    cwd,
    encoding: 'utf8',
    maxBuffer: options.maxBuffer ?? 64 * 1024 * 1024,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
  });
  if (result.error || result.status !== 0) return null;
  return result.stdout;
}

/** Runs git and throws IO with git's own message when it fails. */
export function gitOrThrow(cwd: string, args: readonly string[], what: string): string {
  const result = spawnSync('git', ['-c', 'core.quotepath=off', ...args], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
  });
  if (result.error || result.status !== 0) {
    const why = result.error?.message ?? (result.stderr.trim().split('\n')[0] || `exit ${result.status}`);
    throw new EngramError('IO', `${what}: git ${args[0]} failed: ${why}`);
  }
  return result.stdout;
}
