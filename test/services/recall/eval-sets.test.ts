import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVAL_SET_NAMES, evalSetFiles, tuningQueryFile } from '../../../src/services/index.js';
import { ROOT, SHARED } from '../../_helpers.js';
import { existsSync } from 'node:fs';

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { q: string; relevant: string[]; kind: string });

describe('evaluation sets', () => {
  it.each(['conversations', 'lessons', 'dialogue'] as const)('%s: at least 300 queries, a third held out as test, with unanswerable ones', (set) => {
    const dev = lines(evalSetFiles(ROOT, set, 'dev').queries);
    const test = lines(evalSetFiles(ROOT, set, 'test').queries);
    expect(dev.length + test.length).toBeGreaterThanOrEqual(300);
    expect(test.length / (dev.length + test.length)).toBeGreaterThan(0.28);
    expect(test.length / (dev.length + test.length)).toBeLessThan(0.4);
    for (const split of [dev, test]) expect(split.filter((q) => q.relevant.length === 0).length).toBeGreaterThanOrEqual(10);
    expect(new Set(dev.map((q) => q.q)).size).toBe(dev.length);
    expect(dev.some((q) => test.some((t) => t.q === q.q))).toBe(false);
  });

  it('every query sits in the split its text hashes to, and names memories that exist', () => {
    const check = spawnSync(process.execPath, [join(ROOT, 'scripts', 'eval', 'split.mjs'), '--check'], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it.skipIf(!existsSync(join(SHARED, 'fixtures', 'hook-payloads')))(
    'the lessons set holds what the hooks search with today, and the conversation turns are what the transcripts give',
    () => {
      const lessons = spawnSync(process.execPath, [join(ROOT, 'scripts', 'eval', 'lessons.mjs'), '--check'], { encoding: 'utf8' });
      expect(lessons.stderr).toBe('');
      expect(lessons.status).toBe(0);
      const turns = spawnSync(process.execPath, [join(ROOT, 'scripts', 'eval', 'conversation-turns.mjs'), '--check'], { encoding: 'utf8' });
      expect(turns.stderr).toBe('');
      expect(turns.status).toBe(0);
    },
    60_000,
  );

  it('the dialogue set is what its hand-written sources give, one store per conversation, with every question type', () => {
    const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'eval', 'dialogue.mjs'), '--check'], { encoding: 'utf8' });
    expect(built.stderr).toBe('');
    expect(built.status).toBe(0);
    const files = evalSetFiles(ROOT, 'dialogue', 'dev');
    expect(files.storePerGroup).toBe(true);
    expect(evalSetFiles(ROOT, 'conversations', 'dev').storePerGroup).toBe(false);
    const queries = [...lines(files.queries), ...lines(evalSetFiles(ROOT, 'dialogue', 'test').queries)] as unknown as Array<{ type: string; group: string }>;
    for (const type of ['single', 'multi-hop', 'temporal', 'inference', 'none']) expect(queries.filter((q) => q.type === type).length).toBeGreaterThanOrEqual(10);
    expect(new Set(queries.map((q) => q.group)).size).toBeGreaterThanOrEqual(3);
  });

  it('tuning may read dev splits only: the test split is refused in code and by bench/tune.mjs', () => {
    for (const set of EVAL_SET_NAMES) expect(tuningQueryFile(ROOT, set)).toMatch(/queries-dev\.jsonl$/);
    expect(() => tuningQueryFile(ROOT, 'lessons', 'test')).toThrow(/dev split only/);
    const refused = spawnSync(process.execPath, [join(ROOT, 'bench', 'tune.mjs'), '--split', 'test', '--sets', 'eval'], { encoding: 'utf8' });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('tuning reads the dev split only');
  }, 60_000);
});
