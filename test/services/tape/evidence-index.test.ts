import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  indexedTapeIds,
  indexPathForProfile,
  indexState,
  indexTape,
  indexTapes,
  openEvidenceIndex,
  rebuildIndex,
} from '../../../src/services/tape/evidence-index.js';
import { openDatabase } from '../../../src/core/index.js';
import { INDEX_BUILD } from '../../../src/services/tape/tuning.js';
import { tempDir } from '../../_helpers.js';
import { ask, code, create, dump, edit, freshIndex, read, remove, say, tape } from './_tapes.js';

const first = tape('t1', 1, [ask('add the token checker'), create('src/auth.ts', code('auth', 20)), say('done: the checker rejects expired tokens')]);
const second = tape('t2', 2, [read('src/auth.ts', code('auth', 20)), edit('src/auth.ts', code('auth', 20), `${code('auth', 20)}\n${code('skew', 6)}`)]);
const third = tape('t3', 3, [remove('src/auth.ts', code('skew', 6), 21)]);

describe('evidence index', () => {
  it('fingerprints code and prose and maps them to tape events', () => {
    const index = freshIndex();
    const added = indexTape(index, first);
    expect(added).toMatchObject({ tape_id: 't1', added: true });
    expect(added.fingerprints).toBeGreaterThan(0);
    const kinds = index.db.prepare('select distinct kind from evidence_view where tape_id = ? order by kind').pluck().all('t1');
    expect(kinds).toEqual(['code.edit', 'msg.in', 'msg.out']);
    const tapeRow = index.db.prepare('select harness, session_id, event_count, profile, first_time from tapes').get();
    expect(tapeRow).toEqual({ harness: 'claude', session_id: 'session-t1', event_count: 4, profile: 'default', first_time: '2026-01-01T00:00:00.000Z' });
  });

  it('adds nothing when the same tape is indexed twice', () => {
    const index = freshIndex();
    indexTape(index, first);
    indexTape(index, second);
    const before = dump(index);
    expect(indexTape(index, second)).toMatchObject({ added: false, fingerprints: 0, edges: 0 });
    expect(dump(index)).toEqual(before);
    expect(indexedTapeIds(index)).toEqual(new Set(['t1', 't2']));
  });

  it('rebuilds to the same content, whatever order the tapes come in, and as indexing them one by one', () => {
    const dir = tempDir();
    const a = rebuildIndex(join(dir, 'a.sqlite'), [third, first, second]);
    const b = rebuildIndex(join(dir, 'b.sqlite'), [first, second, third]);
    expect(a).toMatchObject({ tapes: 3, tombstones: 1 });
    expect(a.edges).toBeGreaterThan(0);
    const incremental = freshIndex();
    for (const t of [first, second, third]) indexTape(incremental, t);
    const left = openEvidenceIndex(join(dir, 'a.sqlite'));
    const right = openEvidenceIndex(join(dir, 'b.sqlite'));
    expect(dump(left)).toEqual(dump(right));
    expect(dump(incremental)).toEqual(dump(left));
    left.close();
    right.close();
  });

  it('packs one tape’s repeated text into one row per fingerprint and loses no event', () => {
    const index = freshIndex();
    indexTape(index, second); // the read and the edit's old text are the same 20 lines
    const { rows } = index.db.prepare('select count(*) as rows from evidence_rows').get() as { rows: number };
    const { postings } = index.db.prepare('select count(*) as postings from evidence').get() as { postings: number };
    const { expected } = index.db.prepare('select sum(fp_text + fp_before + fp_after) as expected from events').get() as { expected: number };
    expect(postings).toBe(expected);
    expect(rows).toBeLessThan(postings);
    const parts = index.db.prepare('select part, count(*) as n from evidence group by part order by part').all();
    expect(parts).toEqual([
      { part: 0, n: expect.any(Number) },
      { part: 1, n: expect.any(Number) },
      { part: 2, n: expect.any(Number) },
    ]);
  });

  it('writes the same index however the evidence is batched: one by one, in a batch, or a rebuild in many runs', () => {
    const tapes = [first, second, third, tape('t4', 4, [read('src/auth.ts', code('auth', 20)), say(code('auth', 20))])];
    const single = freshIndex();
    for (const t of tapes) indexTape(single, t);
    const batched = freshIndex();
    expect(indexTapes(batched, [...tapes, first]).map((r) => r.added)).toEqual([true, true, true, true, false]);
    const limits = INDEX_BUILD as { bufferedRows: number };
    const saved = limits.bufferedRows;
    limits.bufferedRows = 10; // flush after every tape
    const path = join(tempDir(), 'index.sqlite');
    try {
      rebuildIndex(path, tapes);
    } finally {
      limits.bufferedRows = saved;
    }
    const rebuilt = openEvidenceIndex(path);
    expect(dump(batched)).toEqual(dump(single));
    expect(dump(rebuilt)).toEqual(dump(single));
    const count = (index: typeof single): unknown => index.db.prepare('select count(*) from evidence').pluck().get();
    expect(count(rebuilt)).toBe(single.db.prepare('select sum(fingerprint_count) from tapes').pluck().get());
    rebuilt.close();
  });

  it('treats an index of an older schema as stale and leaves the file as it was', () => {
    const path = join(tempDir(), 'index.sqlite');
    const old = openDatabase({ path, busyTimeoutMs: 1000 });
    old.exec("create table meta (key text primary key, value text not null); create table evidence (hash integer, tape integer, offset integer, part integer)");
    old.prepare("insert into meta values ('build', ?)").run(JSON.stringify({ schema: 1, profile: 'default', k: 5, w: 4 }));
    old.close();
    expect(indexState(path)).toBe('stale');
    expect(() => openEvidenceIndex(path)).toThrow(/index rebuild/);
    const after = openDatabase({ path, busyTimeoutMs: 1000, readonly: true });
    expect(after.prepare("select name from sqlite_master order by name").pluck().all()).toEqual(['evidence', 'meta', 'sqlite_autoindex_meta_1']);
    after.close();
    rebuildIndex(path, [first]);
    expect(indexState(path)).toBe('ready');
  });

  it('replaces an existing index atomically and keeps one file per profile', () => {
    const cache = tempDir();
    const path = indexPathForProfile(cache);
    expect(indexState(path)).toBe('missing');
    rebuildIndex(path, [first]);
    rebuildIndex(path, [first, second]);
    expect(indexState(path)).toBe('ready');
    expect(indexState(path, 'coarse')).toBe('stale');
    const coarse = indexPathForProfile(cache, 'coarse');
    expect(coarse).toBe(join(cache, 'index.coarse.sqlite'));
    rebuildIndex(coarse, [first, second], { profile: 'coarse' });
    const index = openEvidenceIndex(path);
    expect(indexedTapeIds(index)).toEqual(new Set(['t1', 't2']));
    index.close();
    expect(() => openEvidenceIndex(path, { profile: 'coarse' })).toThrow(/index rebuild/);
    const coarseIndex = openEvidenceIndex(coarse, { profile: 'coarse' });
    expect(indexedTapeIds(coarseIndex).size).toBe(2);
    coarseIndex.close();
  });

  it('keeps tombstones through rebuilds, even when the deleting tape is gone', () => {
    const path = join(tempDir(), 'index.sqlite');
    rebuildIndex(path, [first, second, third]);
    const report = rebuildIndex(path, [first, second]);
    expect(report.carried_tombstones).toBe(1);
    const index = openEvidenceIndex(path);
    const tombstones = index.db.prepare('select t.tape_id, t.present, s.file, s.start_line, s.fingerprint_count from tombstones s join tapes t on t.id = s.tape').all();
    expect(tombstones).toEqual([{ tape_id: 't3', present: 0, file: 'src/auth.ts', start_line: 21, fingerprint_count: expect.any(Number) }]);
    expect(indexedTapeIds(index)).toEqual(new Set(['t1', 't2']));
    index.close();
    expect(rebuildIndex(path, [first, second, third]).tombstones).toBe(1);
  });
});
