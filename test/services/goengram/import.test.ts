/**
 * Moving in from the Go engram: a database built in the test from the schema seed 001 gives (soft-deleted rows,
 * topic keys, prompts, a row without a sync id, a personal one) is imported twice through the real CLI; the Go ids
 * answer on the HTTP API; hostile files are refused with a clear error and leave nothing behind.
 */
import { closeSync, copyFileSync, existsSync, ftruncateSync, mkdirSync, openSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSqlite, openStore } from '../../../src/core/index.js';
import { addEngram, readGoDatabase } from '../../../src/services/index.js';
import { startApi } from '../../http/_api.js';
import { cli, tempDir, thrown } from '../../_helpers.js';
import { goDatabase, GO_ROWS } from './_go-db.js';

function homeWithGoDb(): { home: string; goDb: string } {
  const home = tempDir();
  const goDir = join(home, 'go-data');
  mkdirSync(goDir);
  return { home, goDb: goDatabase(goDir) };
}

describe('engram import --from-go', () => {
  it('imports sessions, observations (soft-deleted kept deleted) and prompts, keeps Go ids, and a second run adds nothing', async () => {
    const { home, goDb } = homeWithGoDb();
    const first = await cli(['import', '--from-go', goDb, '--no-embed'], { home });
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ source: goDb, moved_from: null, sessions_imported: 3, observations_imported: 4, prompts_imported: 2, renumbered: [], skipped: [] });
    const second = await cli(['import', '--from-go', goDb, '--no-embed'], { home });
    expect(second.json).toMatchObject({ sessions_imported: 0, observations_imported: 0, observations_updated: 0, prompts_imported: 0, unchanged: 6 });

    const store = openStore({ path: join(home, 'engram.db') });
    try {
      expect(store.engrams.counts()).toMatchObject({ total: 4, deleted: 1, personal: 1 });
      const rounding = store.engrams.get(3);
      expect(rounding).toMatchObject({ uid: 'obs-00000000000000000000000000000003', kind: 'bugfix', title: 'Checkout rounding', topic_key: 'bug/checkout-rounding', revision_count: 1, project: 'shop', session_id: 'sess-1', created_at: '2026-03-01T09:10:00.000Z', updated_at: '2026-03-01T09:30:00.000Z', source: 'import' });
      expect(store.engrams.get(7)).toMatchObject({ tool_name: 'Edit', duplicate_count: 2 });
      expect(store.engrams.get(9)?.deleted_at).toBe('2026-03-02T11:00:00.000Z');
      expect(store.engrams.get(12)).toMatchObject({ scope: 'personal', uid: expect.stringMatching(/^obs-[0-9a-f]{32}$/) });
      expect(store.sessions.get('sess-1')).toMatchObject({ summary: '## Goal\nFix checkout', ended_at: '2026-03-01T10:00:00.000Z', cwd: '/home/ana/shop' });
      expect(store.sessions.get('sess-empty')).toBeDefined();
      expect(store.sessions.allPrompts().map((p) => [p.id, p.uid])).toEqual([
        [2, 'prompt-00000000000000000000000000000002'],
        [5, 'prompt-00000000000000000000000000000005'],
      ]);

      // The Go ids answer as before; the soft-deleted one stays hidden.
      const api = await startApi({ store });
      expect((await api.json('/observations/3')).body).toMatchObject({ id: 3, sync_id: 'obs-00000000000000000000000000000003', title: 'Checkout rounding', created_at: '2026-03-01 09:10:00', revision_count: 2 });
      expect((await api.json('/observations/7')).body.duplicate_count).toBe(3);
      expect((await api.json('/observations/9')).status).toBe(404);
      expect((await api.json('/timeline?observation_id=3')).body.after.map((o: any) => o.id)).toEqual([7]);
      expect((await api.json('/search?q=rounding')).body[0].id).toBe(3);
      expect((await api.json('/prompts/search?q=cent')).body[0]).toMatchObject({ id: 2, session_id: 'sess-1' });
    } finally {
      store.close();
    }
  });

  it('gives a new id to an observation whose Go id is taken here, and says so', async () => {
    const { home, goDb } = homeWithGoDb();
    const store = openStore({ path: join(home, 'engram.db') });
    for (let i = 0; i < 3; i++) addEngram(store, { text: `An earlier lesson number ${i} about caching` });
    store.close();
    const result = await cli(['import', '--from-go', goDb, '--no-embed'], { home });
    expect(result.json.renumbered).toEqual([{ go_id: 3, id: 13 }]);
    expect(result.json.observations_imported).toBe(4);
  });

  it('takes an update from the Go database on a later run (a newer updated_at), without adding a row', async () => {
    const { home, goDb } = homeWithGoDb();
    await cli(['import', '--from-go', goDb, '--no-embed'], { home });
    const db = new (loadSqlite())(goDb);
    db.prepare("UPDATE observations SET content = 'Round per line; see roundLine().', updated_at = '2026-03-05 08:00:00' WHERE id = 3").run();
    db.close();
    const again = await cli(['import', '--from-go', goDb, '--no-embed'], { home });
    expect(again.json).toMatchObject({ observations_imported: 0, observations_updated: 1 });
    const store = openStore({ path: join(home, 'engram.db') });
    expect(store.engrams.get(3)?.text).toBe('Round per line; see roundLine().');
    store.close();
  });

  it('moves the Go engram database out of the store path (~/.engram/engram.db), then imports it', async () => {
    const home = tempDir();
    const engramHome = join(home, '.engram');
    mkdirSync(engramHome);
    goDatabase(engramHome);
    // Engram refuses to open the Go database as its store, and leaves it as it was.
    const status = await cli(['status'], { home: engramHome, env: { HOME: home } });
    expect(status.code).toBe(4);
    expect(status.stderr).toContain('STORE_FOREIGN');
    const moved = await cli(['import', '--from-go', '--no-embed'], { home: engramHome, env: { HOME: home } });
    expect(moved.code).toBe(0);
    expect(moved.json).toMatchObject({ source: join(engramHome, 'go-engram.db'), moved_from: join(engramHome, 'engram.db'), observations_imported: 4 });
    // A second run finds the moved database and adds nothing.
    expect((await cli(['import', '--from-go', '--no-embed'], { home: engramHome, env: { HOME: home } })).json).toMatchObject({ source: join(engramHome, 'go-engram.db'), observations_imported: 0, unchanged: 6 });
    expect((await cli(['status'], { home: engramHome, env: { HOME: home } })).json.engrams.total).toBe(4);
  });

  it('refuses to move a Go database another process has open', async () => {
    const home = tempDir();
    const engramHome = join(home, '.engram');
    mkdirSync(engramHome);
    const path = goDatabase(engramHome);
    const holder = new (loadSqlite())(path);
    holder.prepare('SELECT count(*) FROM observations').get();
    try {
      const result = await cli(['import', '--from-go', '--no-embed'], { home: engramHome, env: { HOME: home } });
      expect(result.code).toBe(4);
      expect(result.stderr).toContain('BUSY');
      expect(existsSync(path)).toBe(true);
    } finally {
      holder.close();
    }
  });

  it('imports the Go export JSON (GET /export, engram export) the same way', async () => {
    const { home, goDb } = homeWithGoDb();
    const data = readGoDatabase(goDb);
    const file = join(home, 'engram-export.json');
    writeFileSync(file, JSON.stringify({ version: '0.1.0', exported_at: '2026-03-05 10:00:00', ...data }));
    const first = await cli(['import', file, '--no-embed'], { home });
    expect(first.json).toMatchObject({ observations_imported: 4, prompts_imported: 2, sessions_imported: 3 });
    expect((await cli(['import', '--from-go', file, '--no-embed'], { home })).json).toMatchObject({ observations_imported: 0 });
  });
});

describe('hostile input', () => {
  /** Imports `path` and checks the error, and that the store holds nothing afterwards. */
  async function refused(path: string, code: string, message: RegExp, extra: string[] = []): Promise<void> {
    const home = tempDir();
    const result = await cli(['import', '--from-go', path, '--no-embed', ...extra], { home });
    expect(result.code).not.toBe(0);
    const error = JSON.parse(result.stderr).error;
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
    const store = openStore({ path: join(home, 'engram.db') });
    expect(store.engrams.counts().total).toBe(0);
    expect(store.sessions.counts().sessions).toBe(0);
    store.close();
  }

  it('refuses a file that is not SQLite', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'notes.db'), 'these are my notes, not a database\n');
    await refused(join(dir, 'notes.db'), 'INVALID_INPUT', /not a SQLite database/);
  });

  it('refuses a truncated database before reading it', async () => {
    const dir = tempDir();
    const big = goDatabase(dir, 'big.db', { ...GO_ROWS, observations: Array.from({ length: 400 }, (_, i) => ({ ...GO_ROWS.observations[0]!, id: i + 1, sync_id: `obs-${String(i).padStart(32, '0')}`, content: `row ${i} ${'x'.repeat(400)}` })) });
    const cut = join(dir, 'cut.db');
    copyFileSync(big, cut);
    truncateSync(cut, Math.floor(statSync(cut).size / 2));
    await refused(cut, 'INVALID_INPUT', /truncated/);
  });

  it('refuses an unknown newer Go schema and a database that is not the Go engram’s', async () => {
    const dir = tempDir();
    const newer = goDatabase(dir, 'newer.db');
    const db = new (loadSqlite())(newer);
    db.pragma('user_version = 99');
    db.close();
    await refused(newer, 'UNSUPPORTED_VERSION', /newer than the ones this Engram knows/);
    const other = join(dir, 'other.db');
    const plain = new (loadSqlite())(other);
    plain.exec('CREATE TABLE observations (id INTEGER PRIMARY KEY, body TEXT)');
    plain.close();
    await refused(other, 'UNSUPPORTED_VERSION', /missing .*observations\.session_id/);
  });

  it('refuses a 2 GB file from its size and header alone (a sparse file: nothing is read)', async () => {
    const dir = tempDir();
    const huge = join(dir, 'huge.db');
    copyFileSync(goDatabase(dir, 'seed.db'), huge);
    const fd = openSync(huge, 'r+');
    ftruncateSync(fd, 2 * 1024 * 1024 * 1024);
    closeSync(fd);
    const started = performance.now();
    await refused(huge, 'INVALID_INPUT', /2048 MB; the largest Go engram database Engram imports is 1024 MB/);
    // Refused without reading 2 GB (a generous bound: reading it would take many seconds).
    expect(performance.now() - started).toBeLessThan(15_000);
    const garbage = join(dir, 'garbage.db');
    const gfd = openSync(garbage, 'w');
    ftruncateSync(gfd, 2 * 1024 * 1024 * 1024);
    closeSync(gfd);
    await refused(garbage, 'INVALID_INPUT', /not a SQLite database/);
  });

  it('refuses an export JSON with rows of the wrong types, importing none of it', async () => {
    const dir = tempDir();
    const file = join(dir, 'export.json');
    writeFileSync(file, JSON.stringify({ sessions: [{ id: 's', project: 'p' }], observations: [{ id: 1, title: 'ok', content: 'ok', session_id: 's' }, { id: 2, title: 42 }] }));
    await refused(file, 'INVALID_INPUT', /not a Go engram export: observations\.1\.title/);
    expect(thrown(() => readGoDatabase(join(dir, 'missing.db')))?.code).toBe('NOT_FOUND');
    expect(readFileSync(file, 'utf8')).toContain('"title":42');
  });
});
