/**
 * Bootstrap paths A and C with the real bin/engram and the scripted fold agent (test/e2e/_fold-agent.mjs):
 * `engram docs init --from-date` seeds in an ephemeral git worktree at that date — the agent sees the code of that
 * day, the user's tree is never touched, the worktree is gone afterwards — then folds forward chronologically; and
 * `engram docs init --adopt` followed by `engram fold` continues adopted docs from the continuation date.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engramProcess, ROOT, tempDir } from '../_helpers.js';

const FOLD_AGENT = join(ROOT, 'test', 'e2e', '_fold-agent.mjs');

function repository() {
  const root = join(tempDir('engram-boot-'), 'shop');
  const home = tempDir('engram-boot-home-');
  mkdirSync(join(root, 'src'), { recursive: true });
  const git = (date: string | null, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, ...(date ? { GIT_AUTHOR_DATE: `${date}T12:00:00Z`, GIT_COMMITTER_DATE: `${date}T12:00:00Z` } : {}) },
    });
  const commit = (date: string, files: Record<string, string>, message: string) => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    git(date, 'add', '-A');
    git(date, 'commit', '-qm', message);
  };
  git(null, 'init', '-q');
  const env = { CLAUDE_CONFIG_DIR: join(home, '.claude'), CODEX_HOME: join(home, '.codex'), ENGRAM_EMBEDDER: 'none' };
  const engram = (args: string[]) => {
    const result = engramProcess(args, { home, cwd: root, env });
    let json: any;
    try {
      json = JSON.parse(result.stdout);
    } catch {
      json = undefined;
    }
    return { ...result, json };
  };
  const plan = (steps: object[]) => {
    const file = join(home, `plan-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify({ steps }));
    const config = join(root, '.engram', 'config.yaml');
    writeFileSync(config, readFileSync(config, 'utf8').replace(/^ {2}command: .*$/m, `  command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(FOLD_AGENT)}, ${JSON.stringify(file)}]`).replace('docs: []', 'docs: [notes/]'));
    return () => readFileSync(`${file}.log`, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
  };
  return { root, home, git, commit, engram, plan };
}

describe('engram docs init --from-date (path A)', () => {
  it('seeds in a worktree at that date without touching the user\'s tree, then folds forward oldest first', { timeout: 60_000 }, () => {
    const r = repository();
    r.commit('2026-01-10', { 'src/a.ts': 'export const a = 1;\n' }, 'start with a');
    r.commit('2026-03-05', { 'src/b.ts': 'export const b = 2;\n', 'notes/spec.md': '# Spec\n\nFirst draft.\n' }, 'add b and the spec');
    r.commit('2026-06-01', { 'notes/spec.md': '# Spec\n\nSecond draft: b is deprecated.\n' }, 'revise the spec');
    expect(r.engram(['docs', 'init']).status).toBe(0);
    const calls = r.plan([{ do: 'good', name: 'a_module', code: 'src/a.ts', phase: 'Start' }, { do: 'good', name: 'b_module', code: 'src/b.ts', phase: 'Growth' }]);
    const before = readFileSync(join(r.root, 'src', 'b.ts'), 'utf8');
    const init = r.engram(['docs', 'init', '--from-date', '2026-02-01']);
    expect(init.status, init.stderr).toBe(0);
    expect(init.json).toMatchObject({ mode: 'date', seed: { id: 1, state: 'committed' }, fold: [{ id: 2, state: 'committed' }] });
    const [seed, fold] = calls();
    // The seed agent worked in a worktree of 2026-01-10: src/b.ts did not exist yet.
    expect(seed.cwd).not.toBe(r.root);
    expect(seed.src).toEqual(['a.ts']);
    expect(fold.cwd).toBe(r.root);
    expect(existsSync(seed.cwd)).toBe(false);
    expect(r.git(null, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
    expect(readFileSync(join(r.root, 'src', 'b.ts'), 'utf8')).toBe(before);
    // The seed's docs came back into the repository, and the fold added to them.
    const registry = readFileSync(join(r.root, 'docs', 'decisions', 'concept_registry.md'), 'utf8');
    expect(registry).toMatch(/## C001: a_module \(ACTIVE\)[\s\S]*## C002: b_module \(ACTIVE\)/);
    const chunk = readFileSync(join(r.root, '.engram', 'fold', 'chunk_002_input.md'), 'utf8');
    expect(chunk).toContain('This chunk covers 2026-03-05 to 2026-06-01.');
    expect(chunk.indexOf('add b and the spec')).toBeLessThan(chunk.indexOf('revise the spec'));
    expect(chunk).toContain('notes/spec.md (2026-03-05 — INITIAL)');
    expect(chunk).toContain('notes/spec.md (2026-06-01 — REVISIT)');
    expect(chunk).toContain('First draft.');
    expect(chunk).toContain('Second draft: b is deprecated.');
    expect(r.engram(['docs', 'status']).json).toMatchObject({ buffer: { items: 0 }, continuation_date: expect.any(String) });
  });
});

describe('engram docs init --adopt, then engram fold (path C)', () => {
  it('folds only what happened after the continuation date into the adopted docs', { timeout: 60_000 }, () => {
    const r = repository();
    mkdirSync(join(r.root, 'docs', 'decisions'), { recursive: true });
    const v2 = join(ROOT, 'fixtures', 'knowledge', 'v2');
    for (const name of readdirSync(v2)) copyFileSync(join(v2, name), join(r.root, 'docs', 'decisions', name));
    r.commit('2026-01-02', { 'src/old.ts': 'export const old = 0;\n' }, 'v2 fold stopped here');
    r.commit('2026-02-01', { 'src/new.ts': 'export const fresh = 1;\n' }, 'after the v2 fold');
    expect(r.engram(['docs', 'init']).status).toBe(0);
    r.plan([]);
    const adopt = r.engram(['docs', 'init', '--adopt', '--continue-from', '2026-01-15']);
    expect(adopt.status, adopt.stderr).toBe(0);
    expect(adopt.json.continuation_date).toBe('2026-01-15');
    const calls = r.plan([{ do: 'good', name: 'fresh_module', code: 'src/new.ts', phase: 'After adoption' }]);
    const fold = r.engram(['fold']);
    expect(fold.status, fold.stderr).toBe(0);
    expect(fold.json).toMatchObject({ from: '2026-01-15', chunks: [{ state: 'committed' }] });
    const chunk = readFileSync(join(r.root, '.engram', 'fold', `chunk_${String(fold.json.chunks[0].id).padStart(3, '0')}_input.md`), 'utf8');
    expect(chunk).toContain('after the v2 fold');
    expect(chunk).not.toContain('v2 fold stopped here');
    expect(chunk).toContain('- C004: (new concept');
    expect(calls()).toHaveLength(1);
    expect(readFileSync(join(r.root, 'docs', 'decisions', 'concept_registry.md'), 'utf8')).toContain('## C004: fresh_module (ACTIVE)');
    expect(r.engram(['docs', 'lint']).json.ok).toBe(true);
  });
});
