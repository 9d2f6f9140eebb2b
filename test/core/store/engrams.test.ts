/**
 * The engram repository's SessionStart query (`mostUseful`): live, active engrams of the filter, most matched first,
 * then most recently matched, then most recently updated, then newest — the same rows in the same order whichever
 * index SQLite uses to find them.
 */
import { describe, expect, it } from 'vitest';
import type { Engram } from '../../../src/core/index.js';
import { openStore, type Store } from '../../../src/core/index.js';
import { tempStore } from '../../_helpers.js';

describe('engrams.mostUseful', () => {
  it('returns the live active engrams of the filter in usefulness order, whatever the filter', () => {
    const store = tempStore();
    let seed = 3;
    const random = (): number => {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
      return ((seed >>> 0) % 1_000) / 1_000;
    };
    const day = (n: number): string => new Date(Date.UTC(2026, 0, 1 + n)).toISOString();
    const projects = ['shop', 'blog', null];
    const statuses = ['active', 'active', 'active', 'pending', 'deprecated'] as const;
    store.write(() => {
      for (let i = 0; i < 400; i++) {
        const at = day(Math.floor(random() * 30));
        store.engrams.insert({
          kind: 'discovery', title: null, text: `lesson number ${i}`, content: null, category: 'general', tags: [], prerequisites: null, source: 'manual',
          source_sessions: [], session_id: null, tool_name: null, occurrence_count: 1,
          // Few distinct counts and dates, so the later sort keys decide often.
          times_matched: Math.floor(random() * 4), last_matched_at: random() < 0.5 ? null : day(Math.floor(random() * 5)),
          pinned: random() < 0.2, auto_pinned: false, deprecated: false, deprecated_reason: null,
          project: projects[i % 3] ?? null, scope: projects[i % 3] ? 'project' : 'personal', topic_key: null, revision_count: 0, duplicate_count: 0,
          created_at: at, updated_at: at, last_seen_at: at, deleted_at: random() < 0.1 ? at : null,
          status: statuses[Math.floor(random() * statuses.length)] ?? 'active',
        });
      }
    });
    const all = store.db.prepare('SELECT id FROM engrams').pluck().all() as number[];
    const rows = all.map((id) => store.engrams.get(id) as Engram);
    const useful = (a: Engram, b: Engram): number =>
      b.times_matched - a.times_matched ||
      (b.last_matched_at ?? '').localeCompare(a.last_matched_at ?? '') ||
      b.updated_at.localeCompare(a.updated_at) ||
      b.id - a.id;
    const expected = (filter: { pinned?: boolean; project?: string }, limit: number): number[] =>
      rows
        .filter((e) => e.deleted_at === null && e.status === 'active')
        .filter((e) => filter.pinned === undefined || e.pinned === filter.pinned)
        .filter((e) => filter.project === undefined || e.project === filter.project)
        .sort(useful)
        .slice(0, limit)
        .map((e) => e.id);
    const filters = [{}, { pinned: true }, { pinned: false }, { project: 'shop' }, { project: 'blog', pinned: false }, { project: 'shop', pinned: true }, { project: 'none' }];
    for (const filter of filters) {
      for (const limit of [1, 16, 200]) {
        const found = store.engrams.mostUseful(filter, limit);
        expect(found.map((e) => e.id), `${JSON.stringify(filter)} limit ${limit}`).toEqual(expected(filter, limit));
        // Whole engrams, not just ids.
        for (const engram of found) expect(engram).toEqual(store.engrams.get(engram.id));
      }
    }
    expect(expected({ project: 'shop', pinned: false }, 200).length).toBeGreaterThan(30);
  });

  it('finds pinned engrams through the pinned index, not by reading every active engram (SessionStart asks this on every session)', () => {
    const store = tempStore();
    store.write(() => {
      for (let i = 0; i < 300; i++) {
        const at = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
        store.engrams.insert({
          kind: 'discovery', title: null, text: `lesson number ${i}`, content: null, category: 'general', tags: [], prerequisites: null, source: 'manual',
          source_sessions: [], session_id: null, tool_name: null, occurrence_count: 1, times_matched: i % 7, last_matched_at: null,
          pinned: i % 50 === 0, auto_pinned: false, deprecated: false, deprecated_reason: null,
          project: null, scope: 'personal', topic_key: null, revision_count: 0, duplicate_count: 0,
          created_at: at, updated_at: at, last_seen_at: at, deleted_at: null, status: 'active',
        });
      }
    });
    // The statement mostUseful prepares, and the plan SQLite picks for it.
    const prepare = store.db.prepare.bind(store.db);
    const prepared: string[] = [];
    store.db.prepare = ((sql: string) => (prepared.push(sql), prepare(sql))) as typeof store.db.prepare;
    expect(store.engrams.mostUseful({ pinned: true }, 200)).toHaveLength(6);
    store.db.prepare = prepare;
    const sql = prepared.find((text) => text.includes('pinned = 1')) as string;
    const plan = (prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ limit: 200 }) as Array<{ detail: string }>).map((row) => row.detail).join(' | ');
    expect(plan).toContain('engrams_pinned');
    expect(plan).not.toContain('engrams_status');
  });

  describe('kept in memory between engram writes (SessionStart asks the same lists on every session)', () => {
    const seeded = (): Store => {
      const store = tempStore();
      store.write(() => {
        for (let i = 0; i < 40; i++) {
          const at = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
          store.engrams.insert({
            kind: 'discovery', title: null, text: `lesson number ${i}`, content: null, category: 'general', tags: [], prerequisites: null, source: 'manual',
            source_sessions: [], session_id: null, tool_name: null, occurrence_count: 1, times_matched: i % 5, last_matched_at: null,
            pinned: i % 10 === 0, auto_pinned: false, deprecated: false, deprecated_reason: null,
            project: i % 2 === 0 ? 'shop' : null, scope: i % 2 === 0 ? 'project' : 'personal', topic_key: null, revision_count: 0, duplicate_count: 0,
            created_at: at, updated_at: at, last_seen_at: at, deleted_at: null, status: 'active',
          });
        }
      });
      return store;
    };
    const ids = (store: Store, filter: { pinned?: boolean; project?: string }): number[] => store.engrams.mostUseful(filter, 16).map((e) => e.id);
    const fresh = (store: Store, filter: { pinned?: boolean; project?: string }): number[] =>
      (store.db
        .prepare(
          `SELECT id FROM engrams WHERE deleted_at IS NULL AND status = 'active' ${filter.pinned === undefined ? '' : `AND pinned = ${filter.pinned ? 1 : 0}`} ` +
            `${filter.project === undefined ? '' : 'AND project = ?'} ORDER BY times_matched DESC, coalesce(last_matched_at, '') DESC, updated_at DESC, id DESC LIMIT 16`,
        )
        .pluck()
        .all(...(filter.project === undefined ? [] : [filter.project])) as number[]);

    it('is served from memory: with the connection\'s write counter removed, its own write is not seen', () => {
      const store = seeded();
      const before = ids(store, { project: 'shop', pinned: false });
      store.db.exec('DROP TRIGGER temp.engram_row_cache_update');
      const last = before.at(-1) as number;
      store.write(() => store.engrams.update(last, { times_matched: 99 }));
      expect(ids(store, { project: 'shop', pinned: false })).toEqual(before);
    });

    it('sees every write of this connection: an update, a pin, an insert, a delete', () => {
      const store = seeded();
      const filters = [{ pinned: true }, { project: 'shop', pinned: false }, {}];
      const check = (): void => {
        for (const filter of filters) expect(ids(store, filter), JSON.stringify(filter)).toEqual(fresh(store, filter));
      };
      check();
      const last = ids(store, { project: 'shop', pinned: false }).at(-1) as number;
      store.write(() => store.engrams.update(last, { times_matched: 99 }));
      check();
      expect(ids(store, { project: 'shop', pinned: false })[0]).toBe(last);
      store.write(() => store.engrams.update(last, { pinned: true }));
      check();
      expect(ids(store, { pinned: true })).toContain(last);
      store.db.prepare('UPDATE engrams SET times_matched = 1000 WHERE id = 3').run();
      check();
      expect(ids(store, {})[0]).toBe(3);
      store.db.prepare('DELETE FROM engrams WHERE id = 3').run();
      check();
      expect(ids(store, {})).not.toContain(3);
      // Whole engrams as the store holds them now, new objects on every call.
      const first = store.engrams.mostUseful({}, 16);
      const again = store.engrams.mostUseful({}, 16);
      expect(again).toEqual(first);
      expect(again[0]).not.toBe(first[0]);
      for (const engram of again) expect(engram).toEqual(store.engrams.get(engram.id));
    });

    it('sees a commit of another connection (another process, a worker)', () => {
      const store = seeded();
      const before = ids(store, { project: 'shop', pinned: false });
      const other = openStore({ path: store.path });
      try {
        const last = before.at(-1) as number;
        other.write(() => other.engrams.update(last, { times_matched: 99 }));
        expect(ids(store, { project: 'shop', pinned: false })[0]).toBe(last);
        expect(ids(store, { project: 'shop', pinned: false })).toEqual(fresh(store, { project: 'shop', pinned: false }));
      } finally {
        other.close();
      }
    });

    it('keeps nothing read inside a transaction that is then rolled back', () => {
      const store = seeded();
      const before = ids(store, { project: 'shop', pinned: false });
      const last = before.at(-1) as number;
      expect(() =>
        store.write(() => {
          store.engrams.update(last, { times_matched: 99 });
          expect(ids(store, { project: 'shop', pinned: false })[0]).toBe(last);
          throw new Error('roll back');
        }),
      ).toThrow('roll back');
      expect(ids(store, { project: 'shop', pinned: false })).toEqual(before);
    });

    it('reads the live engrams\' recall fields ahead, page by page, newest first, and again after a write', () => {
      const store = seeded();
      store.db.prepare('UPDATE engrams SET deleted_at = created_at WHERE id = 40').run();
      // 39 live engrams in pages of 16: two pages that leave more to read, then the last one.
      expect(store.engrams.keepRecallFields({ page: 16 })).toBe(true);
      expect(store.engrams.keepRecallFields({ page: 16 })).toBe(true);
      expect(store.engrams.keepRecallFields({ page: 16 })).toBe(false);
      expect(store.engrams.keepRecallFields({ page: 16 })).toBe(false);
      // Served from what was read ahead: with the connection's write counter removed, its own write is not seen
      // (no search had asked for these rows before).
      const before = store.engrams.recallFields([1, 20, 39]);
      store.db.exec('DROP TRIGGER temp.engram_row_cache_update');
      store.db.prepare("UPDATE engrams SET status = 'deprecated' WHERE id IN (1, 20, 39)").run();
      expect(store.engrams.recallFields([1, 20, 39])).toEqual(before);
      expect(before.map((row) => row.status)).toEqual(['active', 'active', 'active']);
    });

    it('reads ahead no more than its limit, nothing inside a transaction, and starts again once the table moved', () => {
      const store = seeded();
      expect(store.engrams.keepRecallFields({ page: 8, limit: 12 })).toBe(true);
      expect(store.engrams.keepRecallFields({ page: 8, limit: 12 })).toBe(false);
      // The 12 newest were read ahead (their old tags are served once this connection's writes go uncounted); the
      // 13th newest is read when asked for.
      store.db.exec('DROP TRIGGER temp.engram_row_cache_update');
      store.db.prepare('UPDATE engrams SET tags = \'["unseen"]\'').run();
      expect(store.engrams.recallFields([29, 40]).map((row) => row.tags)).toEqual([[], []]);
      expect(store.engrams.recallFields([28])[0]?.tags).toEqual(['unseen']);
      store.write(() => expect(store.engrams.keepRecallFields()).toBe(false));
      // Another connection's commit empties the kept rows: reading ahead starts again, and reads the new values.
      const other = openStore({ path: store.path });
      try {
        other.write(() => other.engrams.update(40, { tags: ['moved'] }));
      } finally {
        other.close();
      }
      expect(store.engrams.keepRecallFields({ page: 64 })).toBe(false);
      store.db.prepare('UPDATE engrams SET tags = \'["unseen again"]\' WHERE id = 40').run();
      expect(store.engrams.recallFields([40])[0]?.tags).toEqual(['moved']);
    });

    it('reads candidates and results (recallFields, getMany) as the table is now, after writes of any connection', () => {
      const store = seeded();
      const wanted = [5, 3, 9, 3, 77];
      const asRead = (): unknown => ({
        fields: [...store.engrams.recallFields(wanted)].sort((a, b) => a.id - b.id),
        rows: [...store.engrams.getMany(wanted)].sort((a, b) => a.id - b.id),
      });
      const direct = (present = [3, 5, 9]): unknown => ({
        fields: present.map((id) => {
          const e = store.engrams.get(id) as Engram;
          return {
            id, category: e.category, tags: e.tags, prerequisites: e.prerequisites, pinned: e.pinned, deprecated: e.deprecated, project: e.project,
            last_seen_at: e.last_seen_at, deleted_at: e.deleted_at, kind: e.kind, status: e.status, learned_by: e.learned_by, liveness: e.liveness,
            confirmed_at: e.confirmed_at, last_matched_at: e.last_matched_at, created_at: e.created_at,
          };
        }),
        rows: present.map((id) => store.engrams.get(id)),
      });
      expect(asRead()).toEqual(direct());
      // Kept: the second read gives equal rows in new objects.
      expect(asRead()).toEqual(direct());
      expect(store.engrams.getMany([5])[0]).not.toBe(store.engrams.getMany([5])[0]);
      store.write(() => store.engrams.update(5, { text: 'an edited lesson', tags: ['edited'], status: 'deprecated' }));
      expect(asRead()).toEqual(direct());
      expect(store.engrams.getMany([5])[0]?.text).toBe('an edited lesson');
      expect(store.engrams.recallFields([5])[0]?.status).toBe('deprecated');
      const other = openStore({ path: store.path });
      try {
        other.write(() => other.engrams.update(9, { text: 'edited elsewhere', pinned: true }));
        expect(store.engrams.getMany([9])[0]?.text).toBe('edited elsewhere');
        expect(store.engrams.recallFields([9])[0]?.pinned).toBe(true);
        other.db.prepare('DELETE FROM engrams WHERE id = 3').run();
        expect(store.engrams.getMany([3])).toEqual([]);
        expect(store.engrams.recallFields([3])).toEqual([]);
        expect(asRead()).toEqual(direct([5, 9]));
      } finally {
        other.close();
      }
    });
  });
});

describe('engrams.sessionNeighbours', () => {
  it("returns the live engrams next to one in its session, in id order, with their distance; none without a session", () => {
    const store = tempStore();
    const ids: number[] = [];
    store.write(() => {
      // Two sessions interleaved, and one engram without a session.
      ['a', 'b', 'a', 'a', 'b', 'a', null, 'a'].forEach((session, i) => {
        const at = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
        ids.push(
          store.engrams.insert({
            kind: 'discovery', title: null, text: `turn ${i}`, content: null, category: 'chat', tags: [], prerequisites: null, source: 'manual',
            source_sessions: [], session_id: session, tool_name: null, occurrence_count: 1, times_matched: 0, last_matched_at: null,
            pinned: false, auto_pinned: false, deprecated: false, deprecated_reason: null,
            project: null, scope: 'personal', topic_key: null, revision_count: 0, duplicate_count: 0,
            created_at: at, updated_at: at, last_seen_at: at, deleted_at: null, status: 'active',
          }).id,
        );
      });
    });
    const [a0, , a2, a3, , a5, none, a7] = ids as [number, number, number, number, number, number, number, number];
    expect(store.engrams.sessionNeighbours(a3, 2)).toEqual({
      session: 'a',
      neighbours: [{ id: a2, distance: 1 }, { id: a0, distance: 2 }, { id: a5, distance: 1 }, { id: a7, distance: 2 }],
    });
    store.engrams.update(a5, { deleted_at: new Date().toISOString() });
    expect(store.engrams.sessionNeighbours(a3, 1).neighbours).toEqual([{ id: a2, distance: 1 }, { id: a7, distance: 1 }]);
    expect(store.engrams.sessionNeighbours(none, 2)).toEqual({ session: null, neighbours: [] });
    expect(store.engrams.sessionNeighbours(a3, 0).neighbours).toEqual([]);
  });
});
