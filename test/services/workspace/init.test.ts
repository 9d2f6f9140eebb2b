import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { initRepo } from '../../../src/services/index.js';
import { tempDir } from '../../_helpers.js';

describe('initRepo', () => {
  it('creates .engram/ and .engram-cache/ at the repository root and ignores the cache in git', () => {
    const repo = tempDir();
    execFileSync('git', ['init', '-q'], { cwd: repo });
    writeFileSync(join(repo, '.gitignore'), 'node_modules/');
    mkdirSync(join(repo, 'src'));
    const result = initRepo({ cwd: join(repo, 'src') });
    expect(result).toEqual({
      root: repo,
      git: true,
      created: ['.engram/', '.engram/tapes/', '.engram/README.md', '.engram-cache/', '.engram-cache/.gitignore'],
      gitignore: 'added',
      already_initialized: false,
    });
    expect(readFileSync(join(repo, '.gitignore'), 'utf8')).toBe('node_modules/\n.engram-cache/\n');
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: repo, encoding: 'utf8' });
    expect(status).toContain('.engram/README.md');
    expect(status).not.toContain('.engram-cache');
  });

  it('is idempotent: a second run creates nothing and does not touch .gitignore', () => {
    const repo = tempDir();
    execFileSync('git', ['init', '-q'], { cwd: repo });
    initRepo({ cwd: repo });
    const gitignore = readFileSync(join(repo, '.gitignore'), 'utf8');
    expect(initRepo({ cwd: repo })).toMatchObject({ created: [], gitignore: 'present', already_initialized: true });
    expect(readFileSync(join(repo, '.gitignore'), 'utf8')).toBe(gitignore);
  });

  it('creates a .gitignore when there is none, and works outside git', () => {
    const dir = tempDir();
    expect(initRepo({ cwd: dir })).toMatchObject({ root: dir, git: false, gitignore: 'created' });
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('.engram-cache/\n');
    expect(existsSync(join(dir, '.engram', 'tapes'))).toBe(true);
  });
});
