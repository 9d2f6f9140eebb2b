import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, tempDir } from '../_helpers.js';

describe('engram CLI', () => {
  it('prints one line of JSON by default and readable text with --pretty', async () => {
    const home = tempDir();
    const added = await cli(['add', 'Run tests with --runInBand on CI', '--tags', 'jest,ci', '--category', 'testing'], { home });
    expect(added.code).toBe(0);
    expect(added.stdout.trim().split('\n')).toHaveLength(1);
    expect(added.json).toMatchObject({ status: 'created', engram: { id: 1, tags: ['ci', 'jest'], category: 'testing' }, redacted: [] });
    const pretty = await cli(['get', '1', '--pretty'], { home });
    expect(pretty.stdout).toBe('#1 [testing] Run tests with --runInBand on CI\n  tags: ci, jest · personal · source: manual\n');
  });

  it('supports every engram command end to end', async () => {
    const home = tempDir();
    await cli(['add', 'First lesson', '--project', 'shop', '--prerequisites', '{"os":["linux"]}'], { home });
    await cli(['add', 'Second lesson', '--pin'], { home });
    expect((await cli(['list'], { home })).json).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect((await cli(['list', '--pinned'], { home })).json.engrams.map((e: { id: number }) => e.id)).toEqual([2]);
    expect((await cli(['list', '--no-project'], { home })).json.total).toBe(1);
    const updated = await cli(['update', '1', '--text', 'First lesson, corrected', '--add-tags', 'x', '--prerequisites', 'null'], { home });
    expect(updated.json).toMatchObject({ status: 'updated', engram: { text: 'First lesson, corrected', tags: ['x'], prerequisites: null } });
    expect((await cli(['deprecate', '1', '--reason', 'wrong'], { home })).json.engram.deprecated).toBe(true);
    expect((await cli(['list', '--deprecated'], { home })).json.total).toBe(1);
    expect((await cli(['unpin', '2'], { home })).json.engram.pinned).toBe(false);
    expect((await cli(['delete', '2'], { home })).json).toMatchObject({ id: 2, mode: 'soft', changed: true });
    expect((await cli(['delete', '1', '--hard'], { home })).json).toMatchObject({ id: 1, mode: 'hard' });
    expect((await cli(['list', '--include-deleted', '--include-deprecated'], { home })).json.total).toBe(1);
  });

  it.each([
    [['get', '42'], 3, 'NOT_FOUND', 'engram 42 does not exist'],
    [['get', 'forty-two'], 2, 'USAGE', "engram id must be a positive integer or a uid, got 'forty-two'"],
    [['add'], 2, 'USAGE', "missing required argument 'text'"],
    [['list', '--limit', 'many'], 2, 'USAGE', "--limit must be an integer ≥ 1, got 'many'"],
    [['frobnicate'], 2, 'USAGE', "unknown command 'frobnicate'"],
    [['add', 'x', '--prerequisites', '{os:'], 2, 'INVALID_INPUT', '--prerequisites is not valid JSON'],
    [['add', 'x', '--category', 'a//b'], 2, 'INVALID_INPUT', 'has an empty segment'],
    [['update', '1', '--text', 'x'], 3, 'NOT_FOUND', 'engram 1 does not exist'],
    [['update', '1'], 2, 'INVALID_INPUT', 'nothing to update'],
    [['import', 'missing.jsonl'], 3, 'NOT_FOUND', 'cannot read'],
  ])('%j exits %i with a %s error on stderr', async (argv, code, errorCode, message) => {
    const home = tempDir();
    const result = await cli(argv, { home });
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('');
    const error = JSON.parse(result.stderr).error;
    expect(error.code).toBe(errorCode);
    expect(error.message).toContain(message);
  });

  it('prints errors as a sentence with --pretty, and lists bad import lines', async () => {
    const home = tempDir();
    const file = join(home, 'bad.jsonl');
    writeFileSync(file, '{"text": "ok"}\n{"text": 12}\n');
    const result = await cli(['import', file, '--pretty'], { home });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^engram: 1 invalid line\(s\); nothing was imported\. line 2: text: /);
    expect(result.stderr).toContain('  line 2: text: ');
  });

  it('exits 2 with CONFIG_INVALID naming the file when config.json is broken', async () => {
    const home = tempDir();
    writeFileSync(join(home, 'config.json'), '{"log": {"level": "loud"}}');
    const result = await cli(['list'], { home });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr).error).toMatchObject({ code: 'CONFIG_INVALID' });
    expect(JSON.parse(result.stderr).error.message).toContain(join(home, 'config.json'));
  });

  it('exports to a file atomically and imports from a file or stdin', async () => {
    const home = tempDir();
    await cli(['add', 'Lesson one'], { home });
    await cli(['add', 'Lesson two', '--tags', 'b'], { home });
    const out = join(home, 'out.jsonl');
    expect((await cli(['export', '-o', 'out.jsonl'], { home })).json).toEqual({ exported: 2, file: out });
    const other = tempDir();
    const fromFile = await cli(['import', out], { home: other });
    expect(fromFile.json).toMatchObject({ lines: 2, created: 2 });
    const third = tempDir();
    const fromStdin = await cli(['import'], { home: third, stdin: readFileSync(out, 'utf8') });
    expect(fromStdin.json).toMatchObject({ created: 2 });
    expect((await cli(['export'], { home: third })).stdout).toBe(readFileSync(out, 'utf8'));
  });

  it('opts a folder in with init and reports what it created', async () => {
    const home = tempDir();
    const repo = tempDir();
    const result = await cli(['init', '--path', repo], { home });
    expect(result.json).toMatchObject({ root: repo, gitignore: 'created', already_initialized: false });
    expect((await cli(['init', '--pretty'], { home, cwd: repo })).stdout).toContain('was already opted in');
  });

  it('--home overrides ENGRAM_HOME', async () => {
    const home = tempDir();
    const other = tempDir();
    await cli(['--home', other, 'add', 'In the other home'], { home });
    expect((await cli(['list'], { home })).json.total).toBe(0);
    expect((await cli(['list', '--home', other], { home })).json.total).toBe(1);
  });

  it('prints help and the version with exit 0', async () => {
    const home = tempDir();
    const help = await cli(['--help'], { home });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: engram');
    for (const command of ['add', 'get', 'list', 'update', 'deprecate', 'delete', 'export', 'import', 'init', 'status', 'doctor']) {
      expect(help.stdout).toContain(`  ${command}`);
    }
    expect((await cli(['--version'], { home })).code).toBe(0);
  });
});
