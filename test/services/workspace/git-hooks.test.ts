/**
 * Git hooks in real repositories (git init, real commits and merges): ours are added beside existing hooks, never
 * over them, run on commit and merge, never fail either, and uninstall removes exactly what was added.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitHooksStatus, initRepo, installGitHooks, uninstallGitHooks } from '../../../src/services/index.js';
import { tempDir, thrown } from '../../_helpers.js';

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=T', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** A git repository opted in with `engram init`, with one commit. */
function repo(): string {
  const root = join(tempDir(), 'shop');
  mkdirSync(root, { recursive: true });
  git(root, 'init', '-q');
  writeFileSync(join(root, 'README.md'), '# shop\n');
  initRepo({ cwd: root });
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'init');
  return root;
}

/** A stand-in for bin/engram: logs its arguments, and on `ingest` writes a new tape like the real one would. */
function fakeEngram(exitCode = 0): { path: string; log: string } {
  const dir = tempDir();
  const log = join(dir, 'calls.log');
  const path = join(dir, 'engram');
  writeFileSync(
    path,
    `#!/bin/sh\necho "$@" >> "${log}"\nif [ "$1" = ingest ]; then echo '{}' > .engram/tapes/abc123.jsonl.zst; fi\nexit ${exitCode}\n`,
  );
  chmodSync(path, 0o755);
  return { path, log };
}

describe('engram hooks git', () => {
  it('refuses a repository that did not opt in, and a folder outside git', () => {
    const root = join(tempDir(), 'plain');
    mkdirSync(root);
    git(root, 'init', '-q');
    expect(thrown(() => installGitHooks({ cwd: root, engram: '/x/engram' }))).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('engram init') });
    expect(thrown(() => installGitHooks({ cwd: tempDir(), engram: '/x/engram' }))?.code).toBe('NOT_FOUND');
    expect(existsSync(join(root, '.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it('creates executable hooks, is idempotent, and uninstall deletes the files it created', () => {
    const root = repo();
    const first = installGitHooks({ cwd: root, engram: '/opt/engram/bin/engram' });
    expect(first.hooks.map((h) => [h.hook, h.action])).toEqual([['pre-commit', 'created'], ['post-merge', 'created'], ['post-checkout', 'created']]);
    expect(readFileSync(join(root, '.git', 'hooks', 'post-merge'), 'utf8')).toContain('"$ENGRAM_BIN" sync --import');
    expect(readFileSync(join(root, '.git', 'hooks', 'post-checkout'), 'utf8')).toContain('"$ENGRAM_BIN" sync --import');
    const file = join(root, '.git', 'hooks', 'pre-commit');
    expect(statSync(file).mode & 0o111).not.toBe(0);
    expect(readFileSync(file, 'utf8')).toContain('ENGRAM_BIN="/opt/engram/bin/engram"');
    expect(installGitHooks({ cwd: root, engram: '/opt/engram/bin/engram' }).hooks.map((h) => h.action)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(installGitHooks({ cwd: root, engram: '/usr/local/engram/bin/engram' }).hooks.map((h) => h.action)).toEqual(['updated', 'updated', 'updated']);
    expect(gitHooksStatus({ cwd: root }).hooks.map((h) => h.action)).toEqual(['installed', 'installed', 'installed']);
    expect(uninstallGitHooks({ cwd: root }).hooks.map((h) => h.action)).toEqual(['deleted', 'deleted', 'deleted']);
    expect(existsSync(file)).toBe(false);
  });

  it('runs before an existing hook (even one ending in exit), keeps it, and uninstall restores it byte for byte', () => {
    const root = repo();
    const file = join(root, '.git', 'hooks', 'pre-commit');
    const original = '#!/bin/bash\nset -e\necho "lint ok" >> lint.log\nexit 0\n';
    writeFileSync(file, original);
    chmodSync(file, 0o755);
    expect(installGitHooks({ cwd: root, engram: '/opt/engram/bin/engram' }).hooks[0]?.action).toBe('added');
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('#!/bin/bash\n# >>> engram >>>')).toBe(true);
    expect(text.endsWith('echo "lint ok" >> lint.log\nexit 0\n')).toBe(true);
    expect(uninstallGitHooks({ cwd: root }).hooks[0]?.action).toBe('removed');
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  it('leaves a hook that is not a shell script alone and says how to chain it', () => {
    const root = repo();
    const file = join(root, '.git', 'hooks', 'post-merge');
    writeFileSync(file, '#!/usr/bin/env python3\nprint("hi")\n');
    const result = installGitHooks({ cwd: root, engram: '/opt/engram/bin/engram' });
    expect(result.hooks[1]).toMatchObject({ hook: 'post-merge', action: 'skipped', note: expect.stringContaining('"/opt/engram/bin/engram" index rebuild') });
    expect(readFileSync(file, 'utf8')).toBe('#!/usr/bin/env python3\nprint("hi")\n');
  });

  it('follows core.hooksPath', () => {
    const root = repo();
    git(root, 'config', 'core.hooksPath', '.githooks');
    const result = installGitHooks({ cwd: root, engram: '/opt/engram/bin/engram' });
    expect(result.hooks_dir).toBe(join(root, '.githooks'));
    expect(existsSync(join(root, '.githooks', 'pre-commit'))).toBe(true);
  });

  it('a commit ingests and carries the new tapes; a merge rebuilds the index; a failing engram never blocks either', () => {
    const root = repo();
    const engram = fakeEngram();
    installGitHooks({ cwd: root, engram: engram.path });
    writeFileSync(join(root, 'app.ts'), 'export const x = 1;\n');
    git(root, 'add', 'app.ts');
    git(root, 'commit', '-q', '-m', 'app');
    expect(git(root, 'show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort()).toEqual(['.engram/tapes/abc123.jsonl.zst', 'app.ts']);

    git(root, 'checkout', '-q', '-b', 'side');
    writeFileSync(join(root, 'side.ts'), 'export const y = 2;\n');
    git(root, 'add', 'side.ts');
    git(root, 'commit', '-q', '-m', 'side');
    git(root, 'checkout', '-q', 'main');
    writeFileSync(join(root, 'main.ts'), 'export const z = 3;\n');
    git(root, 'add', 'main.ts');
    git(root, 'commit', '-q', '-m', 'main');
    git(root, 'merge', '-q', '--no-edit', 'side');
    // Each checkout and the merge also import what teammates shared (engram sync --import).
    expect(readFileSync(engram.log, 'utf8').trim().split('\n')).toEqual(['ingest', 'sync --import', 'ingest', 'sync --import', 'ingest', 'index rebuild', 'sync --import']);

    const failing = fakeEngram(1);
    installGitHooks({ cwd: root, engram: failing.path });
    writeFileSync(join(root, 'more.ts'), 'export const w = 4;\n');
    git(root, 'add', 'more.ts');
    expect(() => git(root, 'commit', '-q', '-m', 'more')).not.toThrow();
    expect(() => execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'off'], { cwd: root, env: { ...process.env, ENGRAM_GIT_HOOKS_OFF: '1', GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@e' } })).not.toThrow();
    expect(readFileSync(failing.log, 'utf8').trim().split('\n')).toEqual(['ingest']);
  });
});
