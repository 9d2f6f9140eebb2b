import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findRepo } from '../../src/core/index.js';
import { tempDir } from '../_helpers.js';

const git = (cwd: string, ...args: string[]): void => {
  execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd, stdio: 'ignore' });
};

describe('findRepo', () => {
  it('finds the working tree root from a nested folder and names the project after it', () => {
    const dir = tempDir();
    const repo = join(dir, 'shop');
    mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
    git(repo, 'init', '-q');
    expect(findRepo(join(repo, 'src', 'deep'))).toEqual({ root: repo, mainRoot: repo, name: 'shop' });
  });

  it('gives every linked worktree the main repository’s project name', () => {
    const dir = tempDir();
    const repo = join(dir, 'shop');
    mkdirSync(repo);
    git(repo, 'init', '-q');
    writeFileSync(join(repo, 'a.txt'), 'a');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'init');
    const worktree = join(dir, 'shop-feature');
    git(repo, 'worktree', 'add', '-q', worktree);
    expect(findRepo(worktree)).toEqual({ root: worktree, mainRoot: repo, name: 'shop' });
  });

  it('returns undefined outside any repository', () => {
    expect(findRepo(tempDir())).toBeUndefined();
  });
});
