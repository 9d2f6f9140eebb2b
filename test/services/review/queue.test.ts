/** The review queue and an engram's history, on a real store: what a person needs to decide, in the order to decide it. */
import { describe, expect, it } from 'vitest';
import { addEngram, engramHistory, listConflicts, reviewQueue, updateEngram } from '../../../src/services/index.js';
import { approveEngrams, forgetEngrams, undoOperation } from '../../../src/services/gate/index.js';
import { steppingClock, tempStore, thrown } from '../../_helpers.js';

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
