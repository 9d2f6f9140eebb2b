/**
 * The engram repository's SessionStart query (`mostUseful`): live, active engrams of the filter, most matched first,
 * then most recently matched, then most recently updated, then newest — the same rows in the same order whichever
 * index SQLite uses to find them.
 */
import { describe, expect, it } from 'vitest';
import type { Engram } from '../../../src/core/index.js';
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
});
