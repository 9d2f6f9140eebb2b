/**
 * The real `bin/engram` in child processes: what a user or agent runs.
 * Pins the foundation issue's round-trip promise: engrams survive add → export → import into an empty home byte for
 * byte.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/core/index.js';
import { engramProcess, tempDir } from '../_helpers.js';

describe('bin/engram', () => {
  it('round-trips engrams through export and import into an empty home byte for byte', () => {
    const home = tempDir();
    const run = (args: string[], input?: string) => {
      const result = engramProcess(args, { home, ...(input === undefined ? {} : { input }) });
      expect(result.status, result.stderr).toBe(0);
      return result.stdout;
    };
    run(['add', 'Migrations run with --dry-run first; production has triggers.', '--category', 'development/database', '--tags', 'sql,postgres', '--project', 'shop', '--title', 'Migrations']);
    run(['add', 'Prefer pnpm over npm.', '--topic-key', 'tooling/package-manager', '--pin']);
    run(['add', 'Quote “curly” text, emoji 👩‍💻, tabs\tand\nnew lines survive.', '--content', 'Long detail\nover lines.', '--prerequisites', '{"os":["linux"],"mcp_servers":["github"]}']);
    run(['add', 'An obsolete lesson.']);
    run(['deprecate', '4', '--reason', 'superseded']);
    run(['update', '1', '--add-tags', 'migrations']);
    run(['add', 'A deleted lesson.']);
    run(['delete', '5']);
    const exported = run(['export', '--include-deleted', '--status', 'all']);
    expect(exported.trim().split('\n')).toHaveLength(5);

    const empty = tempDir();
    const imported = engramProcess(['import', '-'], { home: empty, input: exported });
    expect(imported.status, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ lines: 5, created: 5 });
    const again = engramProcess(['export', '--include-deleted', '--status', 'all'], { home: empty });
    expect(again.stdout).toBe(exported);

    const file = join(empty, 'copy.jsonl');
    engramProcess(['export', '--include-deleted', '--status', 'all', '-o', file], { home: empty });
    expect(readFileSync(file, 'utf8')).toBe(exported);
    // A dozen CLI processes one after another: on a busy 2-core machine that alone can take longer than the default
    // 20 s; the limit only guards against a hang.
  }, 90_000);

  it('reports status and an honest doctor for a fresh home', () => {
    const home = tempDir();
    const status = engramProcess(['status'], { home });
    expect(status.status).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ home, store: { journal_mode: 'wal', schema_version: SCHEMA_VERSION }, engrams: { total: 0 } });
    const doctor = engramProcess(['doctor', '--pretty'], { home });
    expect(doctor.status).toBe(0);
    expect(doctor.stdout).toMatch(/^engram doctor: (ok|degraded)\n/);
    expect(doctor.stdout).toContain('ok    store: ');
    expect(doctor.stdout).toContain('embeddings: use-lite (no hub model pulled; using USE lite from npm)');
  });

  it('keeps stdout for results and stderr for errors, with meaningful exit codes', () => {
    const home = tempDir();
    const missing = engramProcess(['get', '7'], { home });
    expect(missing.status).toBe(3);
    expect(missing.stdout).toBe('');
    expect(JSON.parse(missing.stderr)).toEqual({ error: { code: 'NOT_FOUND', message: 'engram 7 does not exist', details: { ref: 7 } } });
    const usage = engramProcess(['add', 'x', '--no-such-flag'], { home });
    expect(usage.status).toBe(2);
  });
});
