import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRemoteUrls, stripCredentials } from '../../../src/core/index.js';
import { gitRepo, world, write } from './_fixture.js';

const git = (cwd: string, ...args: string[]): void => {
  execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', '-c', 'init.defaultBranch=main', ...args], { cwd, stdio: 'ignore' });
};

describe('git remotes', () => {
  it('reads the url of every remote section and nothing else', () => {
    const config = [
      '[core]',
      '\tbare = false',
      '[remote "origin"]',
      '\turl = git@github.com:acme/shop.git ; the main one',
      '\tfetch = +refs/heads/*:refs/remotes/origin/*',
      '# [remote "commented"]',
      '[branch "main"]',
      '\tremote = origin',
      '[remote "quoted"]',
      '\tURL = "https://gitlab.com/acme/shop.git"',
      '[remote.legacy]',
      '\turl = https://bitbucket.org/acme/shop',
      '[submodule "lib"]',
      '\turl = https://example.com/lib.git',
    ].join('\r\n');
    expect(parseRemoteUrls(config)).toEqual([
      'git@github.com:acme/shop.git',
      'https://gitlab.com/acme/shop.git',
      'https://bitbucket.org/acme/shop',
    ]);
  });

  it('strips credentials from URLs and leaves scp-like addresses alone', () => {
    expect(stripCredentials('https://user:ghp_secret123@github.com/acme/shop.git')).toBe('https://github.com/acme/shop.git');
    expect(stripCredentials('https://oauth2:tok@gitlab.com/a/b')).toBe('https://gitlab.com/a/b');
    expect(stripCredentials('ssh://git@github.com/acme/shop.git')).toBe('ssh://github.com/acme/shop.git');
    expect(stripCredentials('git@github.com:acme/shop.git')).toBe('git@github.com:acme/shop.git');
    expect(stripCredentials('https://github.com/a/b?x=@y')).toBe('https://github.com/a/b?x=@y');
  });

  it('reports remotes without their credentials', () => {
    const w = world();
    gitRepo(w.project, { origin: 'https://bot:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/acme/shop.git' });
    const found = w.detect();
    expect(found.remotes).toEqual(['https://github.com/acme/shop.git']);
    expect(JSON.stringify(found)).not.toContain('ghp_');
  });

  it('follows a linked worktree to the shared config (.git file → gitdir → commondir)', () => {
    const w = world();
    gitRepo(w.project, { origin: 'git@github.com:acme/shop.git' });
    const gitDir = join(w.project, '.git', 'worktrees', 'feature');
    write(join(gitDir, 'commondir'), '../..\n');
    const worktree = join(w.root, 'work', 'shop-feature');
    write(join(worktree, '.git'), `gitdir: ${gitDir}\n`);
    const found = w.detect({ cwd: worktree });
    expect(found).toMatchObject({ repo: 'shop', repoRoot: worktree, remotes: ['git@github.com:acme/shop.git'], tags: ['github'] });
  });

  it('reads a submodule’s own config (a gitdir without commondir)', () => {
    const w = world();
    gitRepo(w.project);
    const moduleDir = join(w.project, '.git', 'modules', 'lib');
    write(join(moduleDir, 'config'), '[remote "origin"]\n\turl = https://gitlab.com/acme/lib.git\n');
    const lib = join(w.project, 'lib');
    write(join(lib, '.git'), 'gitdir: ../.git/modules/lib\n');
    expect(w.detect({ cwd: lib }).remotes).toEqual(['https://gitlab.com/acme/lib.git']);
  });

  it('works with a worktree made by real git', () => {
    const w = world();
    git(w.project, 'init', '-q');
    git(w.project, 'remote', 'add', 'origin', 'https://github.com/acme/shop.git');
    write(join(w.project, 'a.txt'), 'a');
    git(w.project, 'add', '.');
    git(w.project, 'commit', '-qm', 'init');
    const worktree = join(w.root, 'work', 'shop-wt');
    git(w.project, 'worktree', 'add', '-q', worktree);
    mkdirSync(join(worktree, 'sub'));
    expect(w.detect({ cwd: join(worktree, 'sub') })).toMatchObject({
      repo: 'shop',
      repoRoot: worktree,
      remotes: ['https://github.com/acme/shop.git'],
    });
  });

  it('reports a .git file without a gitdir line instead of throwing', () => {
    const w = world();
    write(join(w.project, '.git'), 'nonsense');
    const found = w.detect();
    expect(found.remotes).toEqual([]);
    expect(found.errors).toEqual([expect.stringContaining('is a file without a gitdir line')]);
  });
});
