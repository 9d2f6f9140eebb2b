/** The review queue and an engram's history, on a real store: what a person needs to decide, in the order to decide it. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/core/index.js';
import { addEngram, contentWords, engramHistory, importEngrams, listConflicts, reviewQueue, updateEngram } from '../../../src/services/index.js';
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
