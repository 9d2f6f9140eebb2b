/**
 * audit.jsonl against the SQLite audit rows: one line per mutation, identical to its row; a process killed between
 * its commit and the append is caught up by the next process that opens the store; a torn last line is cut and
 * written again; a corrupted or altered line is reported by number, and undo (which reads SQLite) still works.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../../src/core/index.js';
import { addEngram, journalPath, listAudit, pinEngram, syncJournal, verifyJournal } from '../../../src/services/index.js';
import { undoOperation } from '../../../src/services/gate/index.js';
import { cli, runWorker, tempDir, tempStore } from '../../_helpers.js';

const lines = (path: string): Array<Record<string, unknown>> =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('audit.jsonl', () => {
  it('gets one line per mutation, the same as its SQLite row, chained by hash', () => {
    const store = tempStore();
    const path = journalPath(store) as string;
    expect(path).toBe(join(dirname(store.path), 'audit.jsonl'));
    const added = addEngram(store, { text: 'Use pnpm to install dependencies.' });
    pinEngram(store, added.engram.id, true);
    pinEngram(store, added.engram.id, true); // no change: no audit row, no line
    const written = lines(path);
    expect(written.map((line) => [line.seq, line.op, line.token])).toEqual([
      [1, 'add', added.undo_token],
      [2, 'pin', listAudit(store, { limit: 1 })[0]?.token],
    ]);
    expect(written[1]?.prev_hash).toBe(written[0]?.hash);
    expect(written[0]).toMatchObject({ actor: 'user', via: 'api', engram_ids: [1], changes: [{ table: 'engrams', key: { id: 1 }, before: null }] });
    expect(verifyJournal(store)).toEqual({ path, rows: 2, lines: 2, ok: true, problems: [] });
  });

  it('a process killed between its commit and the append: the next open appends the missing line', async () => {
    const home = tempDir();
    const db = join(home, 'engram.db');
    const store = openStore({ path: db });
    addEngram(store, { text: 'Run the linter before every commit.' });
    store.close();
    await expect(runWorker(['crash-after-commit', db, '1'])).rejects.toThrow(/worker exited null/);
    const path = join(home, 'audit.jsonl');
    expect(lines(path).map((line) => line.op)).toEqual(['add']); // the pin committed, its line never came
    const listed = await cli(['list'], { home });
    expect(listed.code).toBe(0);
    expect(lines(path).map((line) => line.op)).toEqual(['add', 'pin']);
    const reopened = openStore({ path: db });
    expect(verifyJournal(reopened)).toMatchObject({ ok: true, rows: 2 });
    reopened.close();
  });

  it('a torn last line is cut and written again', () => {
    const store = tempStore();
    addEngram(store, { text: 'Use pnpm to install dependencies.' });
    const path = journalPath(store) as string;
    const good = readFileSync(path, 'utf8');
    const second = addEngram(store, { text: 'The API client timeout is 30s.' });
    const full = readFileSync(path, 'utf8');
    writeFileSync(path, full.slice(0, good.length + 40)); // the second line, torn
    expect(verifyJournal(store).problems.map((p) => p.problem)).toEqual(['corrupted', 'missing']);
    expect(syncJournal(store)).toMatchObject({ appended: 1, repaired: true });
    expect(readFileSync(path, 'utf8')).toBe(full);
    expect(lines(path)[1]?.token).toBe(second.undo_token);
  });

  it('a corrupted or altered line is reported by number; the store and undo are unaffected', () => {
    const store = tempStore();
    const a = addEngram(store, { text: 'Use pnpm to install dependencies.' });
    addEngram(store, { text: 'The API client timeout is 30s.' });
    const path = journalPath(store) as string;
    const [first, second] = readFileSync(path, 'utf8').split('\n');
    writeFileSync(path, `${first?.replace('"op":"add"', '"op":"forget"')}\n{not json\n${second}\n`);
    const report = verifyJournal(store);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      { line: 1, seq: 1, problem: 'altered', message: 'line 1 differs from audit row 1' },
      { line: 2, seq: null, problem: 'corrupted', message: 'line 2 is not JSON' },
    ]);
    undoOperation(store, a.undo_token as string);
    expect(store.engrams.get(a.engram.id)).toBeUndefined();
    expect(readFileSync(path, 'utf8').split('\n').filter(Boolean)).toHaveLength(4); // appended after, never rewritten
  });

  it('a lock left by a dead process is taken over', () => {
    const store = tempStore();
    const path = journalPath(store) as string;
    writeFileSync(`${path}.lock`, '999999999');
    addEngram(store, { text: 'Use pnpm to install dependencies.' });
    expect(lines(path)).toHaveLength(1);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});
