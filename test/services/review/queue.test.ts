/** The review queue and an engram's history, on a real store: what a person needs to decide, in the order to decide it. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/core/index.js';
import { addEngram, contentWords, engramHistory, freshness, governancePolicy, importEngrams, isStale, listConflicts, reviewQueue, updateEngram } from '../../../src/services/index.js';
import { approveEngrams, forgetEngrams, undoOperation } from '../../../src/services/gate/index.js';
import { contentTerms } from '../../../src/services/governance/index.js';
import { DEDUP } from '../../../src/services/learn/index.js';
import { ROOT, steppingClock, tempStore, thrown } from '../../_helpers.js';

const harvest = { by: 'harvest', via: 'job' } as const;
const source = { session_id: 'session-7', tape_id: 'ab'.repeat(32), cwd: '/w/shop', event_from: 3, event_to: 9, quote: 'no, we use npm here', files: [], spans: [] };

describe('review queue', () => {
  it('lists pending engrams with their evidence, conflicts (both sides) and near-duplicates, contradictions first', () => {
    const store = tempStore();
    const now = steppingClock();
    const active = addEngram(store, { text: 'Use pnpm to install dependencies in this repository.', project: 'shop' }, { now }).engram;
    const plain = addEngram(store, { text: 'The integration tests need Postgres running in docker compose.', project: 'shop' }, { now, actor: harvest }).engram;
    const conflicting = addEngram(store, { text: 'Never use pnpm here; install dependencies with npm.', project: 'shop' }, { now, actor: harvest, sources: [source] }).engram;
    addEngram(store, { text: 'Integration tests need Postgres running in docker compose first.', project: 'shop' }, { now });
    const queue = reviewQueue(store, { now: now() });
    expect(queue.total).toBe(2);
    expect(queue.counts).toEqual({ pending: 2, conflict: 1, stale: 0, 'code-gone': 0 });
    const [first, second] = queue.items;
    expect(first).toMatchObject({ reasons: ['pending', 'conflict'], engram: { id: conflicting.id, learned_by: 'harvest', tier: 3 } });
    expect(first?.evidence).toEqual([expect.objectContaining({ session_id: 'session-7', quote: 'no, we use npm here', event_from: 3, event_to: 9 })]);
    expect(first?.conflicts).toEqual([expect.objectContaining({ other_id: active.id, other_text: active.text, other_status: 'active', status: 'open', method: 'rules' })]);
    expect(second).toMatchObject({ reasons: ['pending'], engram: { id: plain.id } });
    expect(second?.near_duplicates).toEqual([expect.objectContaining({ id: 4, status: 'active', similarity: 1 })]);
    // The active side sees the same conflict from its end.
    expect(listConflicts(store)).toEqual([expect.objectContaining({ engram_id: conflicting.id, engram_status: 'pending', other_id: active.id, other_status: 'active' })]);
    expect(reviewQueue(store, { reasons: ['conflict'] }).items.map((item) => item.engram.id)).toEqual([conflicting.id]);
    expect(thrown(() => reviewQueue(store, { limit: 0 }))?.code).toBe('INVALID_INPUT');
  });
});

/** Near-duplicates by brute force: every live (pending or active) engram in scope, its words compared with the item's. */
const wordsOfText = new Map<string, Set<string>>();
const wordsOf = (text: string): Set<string> => {
  let words = wordsOfText.get(text);
  if (!words) wordsOfText.set(text, (words = contentWords(text)));
  return words;
};
function bruteNearDuplicates(store: Store, engram: { id: number; text: string; project: string | null }) {
  const mine = wordsOf(engram.text);
  if (mine.size < DEDUP.minWords) return [];
  const rows = store.db
    .prepare("SELECT id, text, status, project FROM engrams WHERE deleted_at IS NULL AND status IN ('pending', 'active') AND id <> ? ORDER BY id")
    .all(engram.id) as Array<{ id: number; text: string; status: string; project: string | null }>;
  return rows
    .filter((row) => row.project === null || engram.project === null || row.project === engram.project)
    .map((row) => {
      const theirs = wordsOf(row.text);
      const shared = [...mine].filter((word) => theirs.has(word)).length;
      return { id: row.id, text: row.text, status: row.status, size: theirs.size, similarity: Math.round((shared / Math.min(mine.size, theirs.size)) * 100) / 100 };
    })
    .filter((row) => row.size >= DEDUP.minWords && row.similarity >= 0.5)
    .sort((a, b) => b.similarity - a.similarity || a.id - b.id)
    .slice(0, 5)
    .map(({ id, text, status, similarity }) => ({ id, text, status, similarity }));
}

describe('review near-duplicates', () => {
  const lessons = ['eval', 'eval-lessons'].flatMap((set) =>
    readFileSync(join(ROOT, 'fixtures', set, 'memories.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { text: string }).text),
  );

  it('reads content words as services/learn does', () => {
    for (const text of lessons) expect(contentTerms(text)).toEqual([...contentWords(text)]);
  });

  it('are the closest five, lowest id first among ties, where every text is drawn from a few words', () => {
    const store = tempStore();
    let seed = 9;
    const random = (): number => {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
      return ((seed >>> 0) % 1_000_000) / 1_000_000;
    };
    // bench/ui.mjs's texts: a 25-word vocabulary, so short texts are often contained in longer ones (similarity 1 ties),
    // plus copies of each with a number added.
    const words = 'build deploy cache test lint migrate schema index query route handler worker queue token config docker node python rust react api auth log metric trace'.split(' ');
    const sentence = (i: number): string => `${Array.from({ length: 3 + Math.floor(random() * 20) }, () => words[Math.floor(random() * words.length)]).join(' ')} (item ${i} w${Math.floor(random() * 1e9).toString(36)})`;
    const insert = store.db.prepare(
      `INSERT INTO engrams (uid, kind, text, category, tags, source, content_hash, project, created_at, updated_at, last_seen_at, status)
       VALUES (lower(hex(randomblob(16))), 'lesson', ?, 'general', '[]', 'manual', lower(hex(randomblob(32))), ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', ?)`,
    );
    store.db.transaction(() => {
      const bases = Array.from({ length: 600 }, (_, i) => sentence(i));
      for (let i = 0; i < 3_000; i++) insert.run(i < 600 ? bases[i] : `${bases[i % 600]} #${i}`, ['shop', 'blog', null][i % 3] ?? null, random() < 0.3 ? 'pending' : 'active');
    })();
    let compared = 0;
    for (let offset = 0; offset < 400; offset += 100) {
      for (const item of reviewQueue(store, { limit: 100, offset }).items) {
        expect(item.near_duplicates, `#${item.engram.id}`).toEqual(bruteNearDuplicates(store, item.engram));
        compared++;
      }
    }
    expect(compared).toBe(400);
  });

  it('are every live engram in scope that says nearly the same, the closest five, as the store changes', () => {
    const store = tempStore();
    const now = steppingClock();
    let seed = 5;
    const random = (): number => {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
      return ((seed >>> 0) % 1_000_000) / 1_000_000;
    };
    // Lessons and variants of them with words dropped, in three projects, half of them waiting for review.
    const projects = ['shop', 'blog', null];
    const lines = lessons.flatMap((text, i) =>
      [text, text.split(' ').filter(() => random() > 0.3).join(' '), text.split(' ').filter(() => random() > 0.5).join(' ')].map((variant, j) =>
        JSON.stringify({ text: variant, ...(projects[(i + j) % 3] ? { project: projects[(i + j) % 3] } : {}) }),
      ),
    );
    importEngrams(store, lines);
    store.db.exec("UPDATE engrams SET status = 'pending' WHERE id % 2 = 0");
    const compare = (label: string): number => {
      let found = 0;
      for (let offset = 0; ; offset += 200) {
        const page = reviewQueue(store, { now: now(), limit: 200, offset });
        for (const item of page.items) {
          const expected = bruteNearDuplicates(store, item.engram);
          expect(item.near_duplicates, `${label}: #${item.engram.id}`).toEqual(expected);
          found += expected.length;
        }
        if (offset + 200 >= page.total) break;
      }
      return found;
    };
    expect(compare('imported')).toBeGreaterThan(100);
    // Edits, status changes and deletions reach the index through the change log.
    const ids = store.db.prepare('SELECT id FROM engrams ORDER BY id').pluck().all() as number[];
    for (const [k, id] of ids.entries()) {
      if (k % 7 === 0) updateEngram(store, id, { text: lessons[(k * 13) % lessons.length] as string }, { now });
      else if (k % 7 === 1) store.db.prepare("UPDATE engrams SET status = 'rejected' WHERE id = ?").run(id);
      else if (k % 7 === 2) store.db.prepare('UPDATE engrams SET deleted_at = ? WHERE id = ?').run(now().toISOString(), id);
      else if (k % 7 === 3) store.db.prepare("UPDATE engrams SET project = 'blog' WHERE id = ?").run(id);
    }
    compare('changed');
  });
});

describe('review queue: stale engrams', () => {
  it('lists exactly the active engrams isStale calls stale, whatever their kind, offsets and matches', () => {
    const store = tempStore();
    const now = new Date('2026-11-20T12:00:00.000Z');
    const policy = governancePolicy({ governance: { decay: { default: '1y', gotcha: '180d', convention: 'never', decision: '8w' } } } as never);
    const fresh = freshness(policy, now);
    const day = 86_400_000;
    // Times around each kind's cut-off: hours and a day either side, in UTC and with far offsets.
    const around = (decayDays: number): string[] =>
      [-30, -1.5, -1, -0.6, -0.25, 0, 0.25, 0.6, 1, 1.5, 30].flatMap((shift) => {
        const at = new Date(now.getTime() - decayDays * day + shift * day);
        const utc = at.toISOString();
        const plus = new Date(at.getTime() + 14 * 3_600_000).toISOString().replace('Z', '+14:00');
        const minus = new Date(at.getTime() - 12 * 3_600_000).toISOString().replace('Z', '-12:00');
        return [utc, plus, minus];
      });
    const insert = store.db.prepare(
      `INSERT INTO engrams (uid, kind, text, category, tags, source, content_hash, created_at, updated_at, last_seen_at, confirmed_at, last_matched_at, status)
       VALUES (lower(hex(randomblob(16))), ?, ?, 'general', '[]', 'manual', lower(hex(randomblob(32))), ?, ?, ?, ?, ?, 'active')`,
    );
    let n = 0;
    for (const [kind, days] of [['lesson', 365], ['gotcha', 180], ['convention', 400], ['decision', 56], ['discovery', 365]] as const) {
      for (const at of around(days)) {
        insert.run(kind, `text ${n++}`, at, at, at, null, null);
        insert.run(kind, `text ${n++}`, '2020-01-01T00:00:00.000Z', at, at, at, null);
        insert.run(kind, `text ${n++}`, '2020-01-01T00:00:00.000Z', at, at, null, at);
        insert.run(kind, `text ${n++}`, at, at, at, '2020-01-01T00:00:00.000Z', '2020-02-01T00:00:00+05:30');
      }
    }
    const rows = store.db.prepare('SELECT id, kind, confirmed_at, last_matched_at, created_at FROM engrams').all() as Array<{ id: number; kind: string; confirmed_at: string | null; last_matched_at: string | null; created_at: string }>;
    const expected = rows.filter((row) => isStale(row, fresh)).map((row) => row.id);
    const queue = reviewQueue(store, { now, policy, limit: 1000 });
    expect(queue.items.map((item) => item.engram.id).sort((a, b) => a - b)).toEqual(expected);
    expect(queue.counts.stale).toBe(expected.length);
    expect(expected.length).toBeGreaterThan(50);
    expect(expected.length).toBeLessThan(rows.length - 50);
  });
});

/** The queue as it was computed before it was read run by run: every live row judged and sorted here. */
function referenceQueue(store: Store, options: { now: Date; policy: ReturnType<typeof governancePolicy>; reasons?: string[]; project?: string; limit: number; offset: number }) {
  const fresh = freshness(options.policy, options.now);
  const conflicted = new Set((store.db.prepare("SELECT engram_id, other_id FROM engram_conflicts WHERE status = 'open'").raw().all() as number[][]).flat());
  const rows = store.db
    .prepare("SELECT id, kind, status, liveness, confirmed_at, last_matched_at, created_at, project FROM engrams WHERE deleted_at IS NULL AND status IN ('pending', 'active') AND (? IS NULL OR project IS NULL OR project = ?)")
    .all(options.project ?? null, options.project ?? null) as Array<{ id: number; kind: string; status: string; liveness: string; confirmed_at: string | null; last_matched_at: string | null; created_at: string }>;
  const candidates = rows
    .map((row) => {
      const reasons: string[] = row.status === 'pending' ? ['pending', ...(conflicted.has(row.id) ? ['conflict'] : [])] : [...(row.liveness === 'gone' ? ['code-gone'] : []), ...(isStale(row, fresh) ? ['stale'] : [])];
      return { row, reasons, rank: reasons.includes('conflict') ? 0 : reasons.includes('pending') ? 1 : reasons.includes('code-gone') ? 2 : 3 };
    })
    .filter((item) => item.reasons.length && (!options.reasons || item.reasons.some((reason) => options.reasons?.includes(reason))))
    .sort((a, b) => a.rank - b.rank || (a.row.created_at < b.row.created_at ? -1 : a.row.created_at > b.row.created_at ? 1 : 0) || a.row.id - b.row.id);
  const counts: Record<string, number> = { pending: 0, conflict: 0, stale: 0, 'code-gone': 0 };
  for (const item of candidates) for (const reason of item.reasons) counts[reason] = (counts[reason] ?? 0) + 1;
  return { total: candidates.length, counts, items: candidates.slice(options.offset, options.offset + options.limit).map((item) => ({ id: item.row.id, reasons: item.reasons })) };
}

describe('review queue order', () => {
  it('is the order, counts and pages of judging every row, for long and short runs, filters and projects', () => {
    const store = tempStore();
    const now = new Date('2026-11-20T12:00:00.000Z');
    const policy = governancePolicy();
    let seed = 3;
    const random = (): number => {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
      return ((seed >>> 0) % 1_000_000) / 1_000_000;
    };
    const insert = store.db.prepare(
      `INSERT INTO engrams (uid, kind, text, category, tags, source, content_hash, project, created_at, updated_at, last_seen_at, confirmed_at, status, liveness, deleted_at)
       VALUES (lower(hex(randomblob(16))), ?, ?, 'general', '[]', 'manual', lower(hex(randomblob(32))), ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // 7,000 engrams: most pending (a long run, paged by SQL), created at few distinct times (ties ordered by id).
    store.db.transaction(() => {
      for (let i = 0; i < 7_000; i++) {
        const at = new Date(Date.UTC(2024, 0, 1) + Math.floor(random() * 40) * 20 * 86_400_000).toISOString();
        const status = random() < 0.85 ? 'pending' : random() < 0.8 ? 'active' : 'rejected';
        insert.run(random() < 0.5 ? 'gotcha' : 'lesson', `text ${i}`, [null, 'shop', 'blog'][i % 3] ?? null, at, at, at, random() < 0.5 ? at : null, status, random() < 0.05 ? 'gone' : 'unknown', random() < 0.03 ? at : null);
      }
      const conflict = store.db.prepare("INSERT OR IGNORE INTO engram_conflicts (engram_id, other_id, method, signal, reason, status, created_at) VALUES (?, ?, 'rules', 'polarity', 'x', ?, ?)");
      for (let i = 0; i < 400; i++) conflict.run(1 + Math.floor(random() * 7_000), 1 + Math.floor(random() * 7_000), random() < 0.8 ? 'open' : 'resolved', now.toISOString());
    })();
    const cases: Array<{ reasons?: string[]; project?: string; offset: number; limit: number }> = [];
    for (const reasons of [undefined, ['pending'], ['conflict'], ['stale'], ['code-gone'], ['stale', 'code-gone'], ['conflict', 'stale']]) {
      for (const project of [undefined, 'shop']) {
        for (const [offset, limit] of [[0, 50], [180, 100], [5_500, 60], [5_900, 1000], [6_990, 50]] as const) cases.push({ ...(reasons ? { reasons } : {}), ...(project ? { project } : {}), offset, limit });
      }
    }
    for (const options of cases) {
      const expected = referenceQueue(store, { now, policy, ...options });
      const queue = reviewQueue(store, { now, policy, ...(options as object) });
      const label = JSON.stringify(options);
      expect(queue.total, label).toBe(expected.total);
      expect(queue.counts, label).toEqual(expected.counts);
      expect(queue.items.map((item) => ({ id: item.engram.id, reasons: item.reasons })), label).toEqual(expected.items);
    }
  });
});

describe('review queue pages', () => {
  it('pages a queue longer than any one page in a stable order, without skipping or repeating', () => {
    const store = tempStore();
    const now = steppingClock();
    const ids = Array.from({ length: 230 }, (_, i) => addEngram(store, { text: `Lesson q${i}x about service s${i}y on port p${i}z.` }, { now, actor: harvest }).engram.id);
    const seen: number[] = [];
    for (let offset = 0; offset < 230; offset += 100) {
      const page = reviewQueue(store, { now: now(), limit: 100, offset });
      expect(page).toMatchObject({ total: 230, offset, limit: 100 });
      seen.push(...page.items.map((item) => item.engram.id));
    }
    expect(seen).toEqual(ids);
    expect(reviewQueue(store, { now: now(), limit: 100, offset: 300 }).items).toEqual([]);
    expect(thrown(() => reviewQueue(store, { offset: -1 }))?.code).toBe('INVALID_INPUT');
  });
});

describe('engram history', () => {
  it('tells an engram’s life from the audit trail — who, when, what changed — even after it is forgotten', () => {
    const store = tempStore();
    const now = steppingClock();
    const { engram } = addEngram(store, { text: 'The API client timeout is 30s.' }, { now, actor: harvest });
    approveEngrams(store, [engram.id], { now });
    const edit = updateEngram(store, engram.id, { text: 'The API client timeout is 45 seconds.' }, { now }).undo_token as string;
    undoOperation(store, edit, { now });
    forgetEngrams(store, [engram.id], { now, reason: 'obsolete' });
    const history = engramHistory(store, engram.id);
    expect(history.engram).toBeNull();
    expect(history.steps.map((step) => [step.op, step.actor, step.via])).toEqual([
      ['add', 'harvest', 'job'],
      ['approve', 'user', 'cli'],
      ['edit', 'user', 'api'],
      ['undo', 'user', 'cli'],
      ['forget', 'user', 'cli'],
    ]);
    expect(history.steps[1]?.fields.status).toEqual({ before: 'pending', after: 'active' });
    expect(history.steps[2]).toMatchObject({ undone_by: history.steps[3]?.token, fields: { text: { before: 'The API client timeout is 30s.', after: 'The API client timeout is 45 seconds.' } } });
    expect(history.steps[3]?.undoes).toBe(edit);
    expect(history.steps[4]).toMatchObject({ reason: 'obsolete', fields: { status: { before: 'active', after: null } } });
    expect(thrown(() => engramHistory(store, 999))?.code).toBe('NOT_FOUND');
  });
});
