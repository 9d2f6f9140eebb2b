import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EngramError } from '../../../src/core/errors.js';
import { migrate, MIGRATIONS, openDatabase, openStore, SCHEMA_VERSION, schemaVersion } from '../../../src/core/store/index.js';
import { ROOT, runWorker, tempDir, thrown } from '../../_helpers.js';

/** The schema as SQLite describes it, for comparing a migrated store with a fresh one. */
function schemaOf(path: string): string[] {
  const db = openDatabase({ path, busyTimeoutMs: 1000, readonly: true });
  try {
    return db
      .prepare("SELECT type || ' ' || name || ': ' || coalesce(sql, '') AS s FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
      .pluck()
      .all() as string[];
  } finally {
    db.close();
  }
}

describe('migrate', () => {
  it('creates the latest schema on a new store in WAL mode with foreign keys on', () => {
    const store = openStore({ path: join(tempDir(), 'engram.db') });
    expect(store.migration).toEqual({ from: 0, to: SCHEMA_VERSION, applied: MIGRATIONS.map((m) => `${m.version}-${m.name}`) });
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(10_000);
    expect(store.db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all()).toEqual(
      MIGRATIONS.map((m) => m.version),
    );
    store.close();
  });

  it('numbers migrations 1, 2, 3, … with no gap: a store at N never applies a migration numbered N or below', () => {
    const versions = MIGRATIONS.map((m) => m.version);
    // migrate() applies only versions above the store's user_version, so a migration numbered below one already
    // released is silently never applied to upgraded stores; numbering without gaps makes a late low number visible.
    expect(versions).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
  });

  it('is idempotent: reopening applies nothing and changes nothing', () => {
    const path = join(tempDir(), 'engram.db');
    openStore({ path }).close();
    const before = schemaOf(path);
    const again = openStore({ path });
    expect(again.migration.applied).toEqual([]);
    expect(migrate(again.db).applied).toEqual([]);
    again.close();
    expect(schemaOf(path)).toEqual(before);
  });

  it('upgrades a store written by schema version 1, keeping its rows, to exactly the fresh schema', () => {
    const dir = tempDir();
    const oldPath = join(dir, 'old.db');
    const db = openDatabase({ path: oldPath, busyTimeoutMs: 1000 });
    db.exec(readFileSync(join(ROOT, 'fixtures', 'store', 'engram-v1.sql'), 'utf8'));
    expect(schemaVersion(db)).toBe(1);
    db.close();

    const store = openStore({ path: oldPath });
    expect(store.migration.from).toBe(1);
    expect(store.migration.to).toBe(SCHEMA_VERSION);
    expect(store.migration.applied).toEqual(MIGRATIONS.filter((m) => m.version > 1).map((m) => `${m.version}-${m.name}`));
    const engrams = store.engrams.list({ deprecated: 'include' }).engrams;
    expect(engrams.map((e) => [e.id, e.uid, e.text, e.pinned, e.deprecated_reason])).toEqual([
      [1, '00000000-0000-4000-8000-000000000001', 'Run migrations with --dry-run first; production has triggers.', true, null],
      [2, '00000000-0000-4000-8000-000000000002', 'This user prefers pnpm over npm in every project.', false, null],
      [3, '00000000-0000-4000-8000-000000000003', 'The legacy build used make; it is gone now.', false, 'make was removed in 2026'],
    ]);
    expect(engrams[0]?.prerequisites).toEqual({ repos: ['shop'] });
    // Review state (governance): everything shown before review existed stays active, confirmed when it was made;
    // a deprecated engram becomes status deprecated with its reason; learned_by follows the old source.
    expect(engrams.map((e) => [e.status, e.status_reason, e.learned_by, e.confirmed_at === e.created_at, e.liveness])).toEqual([
      ['active', null, 'user', true, 'unknown'],
      ['active', null, 'harvest', true, 'unknown'],
      ['deprecated', 'make was removed in 2026', 'user', true, 'unknown'],
    ]);
    // The old rows work with the new tables: statistics reference them through foreign keys.
    store.stats.replace(1, { repos: [{ repo: 'shop', times_matched: 4, last_matched_at: null }], tag_sets: [], tag_relevance: [] });
    expect(store.db.pragma('foreign_key_check')).toEqual([]);
    store.close();

    const freshPath = join(dir, 'fresh.db');
    openStore({ path: freshPath }).close();
    expect(schemaOf(oldPath)).toEqual(schemaOf(freshPath));
  });

  it('starts the relevance history (14) from the relevance a store had learned before it', () => {
    const path = join(tempDir(), 'engram.db');
    const db = openDatabase({ path, busyTimeoutMs: 1000 });
    const before = MIGRATIONS.filter((m) => m.version < 14).at(-1)?.version as number;
    migrate(db, before);
    db.prepare("INSERT INTO engrams (id, uid, text, content_hash, category, created_at, updated_at, last_seen_at) VALUES (1, 'u-1', 'Use pnpm.', 'h', 'general', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')").run();
    db.prepare("INSERT INTO engram_tag_relevance (engram_id, tag, score, positive_evals, negative_evals, last_evaluated_at) VALUES (1, 'node', 1.2, 4, 0, '2026-02-01T00:00:00.000Z')").run();
    expect(migrate(db).applied).toContain('14-relevance-history');
    expect(db.prepare('SELECT engram_id, tag, score_before, score, cause, judgement_id, at FROM engram_tag_relevance_history').all()).toEqual([
      { engram_id: 1, tag: 'node', score_before: null, score: 1.2, cause: 'baseline', judgement_id: null, at: '2026-02-01T00:00:00.000Z' },
    ]);
    // History goes with its engram.
    db.prepare('DELETE FROM engrams WHERE id = 1').run();
    expect(db.prepare('SELECT count(*) FROM engram_tag_relevance_history').pluck().get()).toBe(0);
    db.close();
  });

  it('records lessons written before 16 in the first session they were learned from, and keeps a session already named', () => {
    const path = join(tempDir(), 'engram.db');
    const db = openDatabase({ path, busyTimeoutMs: 1000 });
    migrate(db, 15);
    const insert = db.prepare("INSERT INTO engrams (id, uid, text, content_hash, category, source, source_sessions, session_id, created_at, updated_at, last_seen_at) VALUES (?, ?, ?, ?, 'general', ?, ?, ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')");
    insert.run(1, 'u-1', 'Extracted from two sessions.', 'h1', 'extracted', '["s-a","s-b"]', null);
    insert.run(2, 'u-2', 'Hand-written.', 'h2', 'manual', '[]', null);
    insert.run(3, 'u-3', 'Saved in its own session.', 'h3', 'extracted', '["s-a"]', 's-saved');
    expect(migrate(db).applied).toContain('16-lesson-sessions');
    expect(db.prepare('SELECT id, session_id FROM engrams ORDER BY id').all()).toEqual([
      { id: 1, session_id: 's-a' },
      { id: 2, session_id: null },
      { id: 3, session_id: 's-saved' },
    ]);
    db.close();
  });

  it('refuses a store written by a newer Engram instead of touching it', () => {
    const path = join(tempDir(), 'engram.db');
    openStore({ path }).close();
    const db = openDatabase({ path, busyTimeoutMs: 1000 });
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    const error = thrown(() => openStore({ path }));
    expect(error).toBeInstanceOf(EngramError);
    expect(error?.code).toBe('STORE_TOO_NEW');
    expect(error?.message).toContain(`schema version ${SCHEMA_VERSION + 1}`);
  });

  it('applies each step exactly once when several processes open a new store at the same moment', async () => {
    const path = join(tempDir(), 'engram.db');
    const runs = await Promise.all(Array.from({ length: 6 }, () => runWorker(['open', path])));
    const applied = runs.flatMap((out) => JSON.parse(out) as string[]);
    expect(applied.sort()).toEqual(MIGRATIONS.map((m) => `${m.version}-${m.name}`).sort());
    const store = openStore({ path });
    expect(store.db.prepare('SELECT count(*) FROM schema_migrations').pluck().get()).toBe(MIGRATIONS.length);
    store.close();
  }, 60_000);
});
