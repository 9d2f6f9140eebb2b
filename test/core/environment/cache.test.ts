import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clearEnvironmentMemory } from '../../../src/core/index.js';
import { cacheKey, contextHash, sha256Hex } from '../../../src/core/environment/cache.js';
import { gitRepo, rules, settle, world, write, type World } from './_fixture.js';

/** A project with a remote, a package.json, Claude and Codex configs, settled so its result can be cached. */
function project(): World {
  const w = world();
  gitRepo(w.project, { origin: 'git@github.com:acme/shop.git' });
  write(join(w.project, 'package.json'), JSON.stringify({ dependencies: { react: '19' } }));
  write(join(w.home, '.claude.json'), JSON.stringify({ mcpServers: { github: {} } }));
  write(join(w.home, '.codex', 'config.toml'), '[mcp_servers.engram]\ncommand = "node"\n');
  settle(w.root);
  return w;
}

/** The one cache file of a world. */
const cacheFile = (w: World): string => {
  const files = readdirSync(w.cacheDir);
  expect(files).toHaveLength(1);
  expect(files[0]).toMatch(/^[0-9a-f]{16}\.json$/);
  return join(w.cacheDir, files[0] as string);
};

/**
 * Settles the files (new mtimes, so nothing cached matches), then detects twice from disk only (memory cleared):
 * the first must miss, the second hit with the same result.
 */
function missThenHit(w: World, options: Parameters<World['detect']>[0] = {}) {
  settle(w.root);
  clearEnvironmentMemory();
  const miss = w.detect(options);
  clearEnvironmentMemory();
  const hit = w.detect(options);
  expect([miss.cache, hit.cache]).toEqual(['miss', 'hit']);
  expect({ ...hit, ms: 0, cache: '' }).toEqual({ ...miss, ms: 0, cache: '' });
  return hit;
}

describe('environment cache', () => {
  it('reuses a result from memory, then from disk, while nothing it read has changed', () => {
    const w = project();
    const first = w.detect();
    expect(first).toMatchObject({ cache: 'miss', tags: ['frontend', 'github', 'nodejs', 'react'], mcpServers: ['engram', 'github'] });
    expect(w.detect().cache).toBe('hit');
    const file = cacheFile(w);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(w.cacheDir).mode & 0o777).toBe(0o700);
    rmSync(file);
    expect(w.detect().cache).toBe('hit'); // memory, no file needed
    clearEnvironmentMemory();
    expect(w.detect().cache).toBe('miss');
    clearEnvironmentMemory();
    const fromDisk = w.detect();
    expect(fromDisk.cache).toBe('hit');
    expect({ ...fromDisk, ms: 0, cache: '' }).toEqual({ ...first, ms: 0, cache: '' });
  });

  it('with recheckAfterMs, serves memory without looking at the inputs inside the window, and sees a change after it', () => {
    const w = project();
    let clock = 1_000_000;
    const trusted = { recheckAfterMs: 1_000, now: () => clock };
    expect(w.detect(trusted)).toMatchObject({ cache: 'miss', tags: ['frontend', 'github', 'nodejs', 'react'] });
    expect(w.detect(trusted).cache).toBe('hit'); // its inputs looked at: the window starts now
    write(join(w.project, 'package.json'), JSON.stringify({ dependencies: { vue: '3' } }));
    settle(w.root);
    clock += 999;
    expect(w.detect(trusted)).toMatchObject({ cache: 'hit', tags: ['frontend', 'github', 'nodejs', 'react'] });
    // Without the window (the default), the same call looks and sees the change at once.
    expect(w.detect({ now: () => clock })).toMatchObject({ cache: 'miss', tags: ['frontend', 'github', 'nodejs', 'vue'] });
    // A new result is looked at once before it is trusted.
    expect(w.detect(trusted)).toMatchObject({ cache: 'hit', tags: ['frontend', 'github', 'nodejs', 'vue'] });
    write(join(w.project, 'package.json'), JSON.stringify({ dependencies: { svelte: '5' } }));
    settle(w.root);
    clock += 999;
    expect(w.detect(trusted)).toMatchObject({ cache: 'hit', tags: ['frontend', 'github', 'nodejs', 'vue'] });
    clock += 1;
    expect(w.detect(trusted)).toMatchObject({ cache: 'miss', tags: ['frontend', 'github', 'nodejs', 'svelte'] });
  });

  it('with recheckAfterMs, another folder or other rules are their own results inside the window', () => {
    const w = project();
    const trusted = { recheckAfterMs: 60_000, now: () => 5 };
    expect(w.detect(trusted).repo).toBe('shop');
    expect(w.detect(trusted).cache).toBe('hit');
    expect(w.detect({ ...trusted, cwd: w.home })).toMatchObject({ cache: 'miss', repo: null });
    const acme = rules({ remote_patterns: [{ pattern: 'github\\.com[:/]acme/', tags: ['acme'] }] });
    expect(w.detect({ ...trusted, rules: acme })).toMatchObject({ cache: 'miss', tags: ['acme', 'frontend', 'github', 'nodejs', 'react'] });
    expect(w.detect(trusted).tags).not.toContain('acme');
  });

  it('hands out copies: changing a result does not change the cache', () => {
    const w = project();
    w.detect().tags.push('mutated');
    expect(w.detect().tags).not.toContain('mutated');
  });

  it('keeps one entry per folder and agent', () => {
    const w = project();
    w.detect({ agent: 'claude' });
    w.detect({ agent: 'codex' });
    expect(w.detect({ agent: 'claude' })).toMatchObject({ cache: 'hit', mcpServers: ['github'] });
    expect(w.detect({ agent: 'codex' })).toMatchObject({ cache: 'hit', mcpServers: ['engram'] });
    expect(readdirSync(w.cacheDir)).toHaveLength(2);
  });

  it('misses when a marker file appears in the repository', () => {
    const w = project();
    missThenHit(w);
    write(join(w.project, 'tsconfig.json'), '{}');
    expect(w.detect()).toMatchObject({ cache: 'miss', tags: ['frontend', 'github', 'nodejs', 'react', 'typescript'] });
    expect(missThenHit(w).tags).toContain('typescript');
  });

  it('misses when package.json dependencies change', () => {
    const w = project();
    missThenHit(w);
    write(join(w.project, 'package.json'), JSON.stringify({ dependencies: { vue: '3' } }));
    expect(w.detect()).toMatchObject({ cache: 'miss', tags: ['frontend', 'github', 'nodejs', 'vue'] });
  });

  it('misses when a remote changes in .git/config', () => {
    const w = project();
    missThenHit(w);
    gitRepo(w.project, { origin: 'https://gitlab.com/acme/shop.git' });
    expect(w.detect()).toMatchObject({ cache: 'miss', remotes: ['https://gitlab.com/acme/shop.git'] });
    expect(w.detect().tags).toContain('gitlab');
  });

  it('misses when the remote of a linked worktree changes in the shared config', () => {
    const w = project();
    const gitDir = join(w.project, '.git', 'worktrees', 'wt');
    write(join(gitDir, 'commondir'), '../..\n');
    const worktree = join(w.root, 'wt');
    write(join(worktree, '.git'), `gitdir: ${gitDir}\n`);
    settle(w.root);
    missThenHit(w, { cwd: worktree });
    gitRepo(w.project, { origin: 'https://bitbucket.org/acme/shop.git' });
    expect(w.detect({ cwd: worktree })).toMatchObject({ cache: 'miss', tags: ['bitbucket'] });
  });

  it('misses when the MCP servers in .claude.json or config.toml change', () => {
    const w = project();
    missThenHit(w);
    write(join(w.home, '.claude.json'), JSON.stringify({ mcpServers: { github: {}, linear: {} } }));
    expect(w.detect()).toMatchObject({ cache: 'miss', mcpServers: ['engram', 'github', 'linear'] });
    missThenHit(w);
    write(join(w.home, '.codex', 'config.toml'), '[mcp_servers.engram]\ncommand = "node"\nenabled = false\n');
    expect(w.detect()).toMatchObject({ cache: 'miss', mcpServers: ['github', 'linear'] });
  });

  it('misses when the rules change', () => {
    const w = project();
    missThenHit(w);
    const acme = rules({ remote_patterns: [{ pattern: 'github\\.com[:/]acme/', tags: ['acme'] }] });
    expect(w.detect({ rules: acme })).toMatchObject({ cache: 'miss', tags: ['acme', 'frontend', 'github', 'nodejs', 'react'] });
    expect(w.detect({ rules: acme }).cache).toBe('hit');
    expect(w.detect({ rules: rules({ builtin: false }) })).toMatchObject({ cache: 'miss', tags: [] });
  });

  it('recomputes silently over a torn or foreign cache file', () => {
    const w = project();
    const first = w.detect();
    const file = cacheFile(w);
    for (const garbage of ['{"version":1,"cwd":', 'null', '[]', JSON.stringify({ version: 1, stamps: 'no' }), '\u0000\u0001']) {
      writeFileSync(file, garbage);
      clearEnvironmentMemory();
      const again = w.detect();
      expect(again.cache).toBe('miss');
      expect(again.errors).toEqual([]);
      expect(again.tags).toEqual(first.tags);
      expect(JSON.parse(readFileSync(file, 'utf8')).result.tags).toEqual(first.tags);
    }
  });

  it('does not cache a result that read a file changed in the last moments', () => {
    const w = project();
    write(join(w.project, 'tsconfig.json'), '{}'); // mtime: now
    expect(w.detect().cache).toBe('miss');
    expect(w.detect().cache).toBe('miss');
    expect(existsSync(w.cacheDir)).toBe(false);
  });

  it('reports a cache it cannot write and still answers', () => {
    const w = project();
    write(w.cacheDir, 'a file where the folder should be');
    const found = w.detect();
    expect(found).toMatchObject({ cache: 'miss', tags: ['frontend', 'github', 'nodejs', 'react'] });
    expect(found.errors).toEqual([expect.stringContaining('cannot write the environment cache')]);
  });

  it('neither reads nor writes a cache when cacheDir is null', () => {
    const w = project();
    w.detect();
    expect(w.detect({ cacheDir: null }).cache).toBe('off');
    expect(readdirSync(w.cacheDir)).toHaveLength(1);
  });
});

describe('the cache’s hashes (JavaScript SHA-256, so a hook need not load node:crypto)', () => {
  it('are the SHA-256 digests node:crypto gives, for ASCII and non-ASCII text', () => {
    const digest = (text: string): string => createHash('sha256').update(text).digest('hex');
    for (const text of ['', 'abc', '/home/ünïcødé/项目\0claude', 'x'.repeat(1_000)]) expect(sha256Hex(text)).toBe(digest(text));
    expect(cacheKey('/work/p', 'claude')).toBe(digest('/work/p\0claude').slice(0, 16));
    const parts = { home: '/h', agent: 'codex', rules: ['a', 'ß'] };
    expect(contextHash(parts)).toBe(digest(JSON.stringify(parts)).slice(0, 32));
  });
});
