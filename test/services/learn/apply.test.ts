import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/core/index.js';
import { addEngram, deleteEngram, getEngram, pinEngram } from '../../../src/services/index.js';
import { applyJudgement, recordFeedback, type Judgement } from '../../../src/services/learn/index.js';
import { learnedRelevance } from '../../../src/services/recall/index.js';
import { tempStore, thrown } from '../../_helpers.js';

const AT = '2026-11-01T10:00:00.000Z';

function engramIn(store: Store, extra: Omit<Parameters<typeof addEngram>[1], 'text'> = {}): number {
  return addEngram(store, { ...extra, text: 'Run migrations with --dry-run first.' }).engram.id;
}

/** Applies `times` identical judgements, one minute apart; returns the last result. */
function judge(store: Store, judgement: Omit<Judgement, 'at' | 'source'> & { source?: Judgement['source'] }, times = 1) {
  let result;
  for (let i = 0; i < times; i++) {
    const at = new Date(Date.parse(AT) + i * 60_000).toISOString();
    result = applyJudgement(store, { source: 'evaluation', at, ...judgement });
  }
  return result!;
}

describe('applyJudgement: statistics', () => {
  it('counts a positive score as a match: global, per repo, per tag set, and one positive evaluation per tag', () => {
    const store = tempStore();
    const id = engramIn(store);
    const result = applyJudgement(store, { engramId: id, score: 3, tags: ['typescript', 'React'], repo: 'shop', source: 'evaluation', at: AT });
    expect(result).toEqual({
      engram_id: id,
      tags: ['react', 'typescript'],
      repo: 'shop',
      weight: 1,
      matched: true,
      relevance: [
        { tag: 'react', before: null, after: 0.3 },
        { tag: 'typescript', before: null, after: 0.3 },
      ],
      pin: null,
    });
    expect(getEngram(store, id)).toMatchObject({ times_matched: 1, last_matched_at: AT, pinned: false });
    expect(store.stats.get(id)).toEqual({
      repos: [{ repo: 'shop', times_matched: 1, last_matched_at: AT }],
      tag_sets: [{ tag_set: ['react', 'typescript'], times_matched: 1, last_matched_at: AT }],
      tag_relevance: [
        { tag: 'react', score: 0.3, positive_evals: 1, negative_evals: 0, last_evaluated_at: AT },
        { tag: 'typescript', score: 0.3, positive_evals: 1, negative_evals: 0, last_evaluated_at: AT },
      ],
    });
    const second = judge(store, { engramId: id, score: 3, tags: ['react', 'typescript'], repo: 'shop' });
    expect(second.relevance).toEqual([
      { tag: 'react', before: 0.3, after: 0.51 },
      { tag: 'typescript', before: 0.3, after: 0.51 },
    ]);
    expect(store.stats.get(id).tag_sets[0]?.times_matched).toBe(2);
    expect(getEngram(store, id).times_matched).toBe(2);
  });

  it('does not count a negative score as a match, but as one negative evaluation per tag', () => {
    const store = tempStore();
    const id = engramIn(store);
    const result = judge(store, { engramId: id, score: -2, tags: ['react'], repo: 'shop' });
    expect(result).toMatchObject({ matched: false, relevance: [{ tag: 'react', before: null, after: -0.2 }], pin: null });
    expect(getEngram(store, id)).toMatchObject({ times_matched: 0, last_matched_at: null });
    expect(store.stats.get(id)).toMatchObject({
      repos: [],
      tag_sets: [],
      tag_relevance: [{ tag: 'react', score: -0.2, positive_evals: 0, negative_evals: 1 }],
    });
  });

  it('treats a score of 0 as no evidence: nothing changes', () => {
    const store = tempStore();
    const id = engramIn(store);
    judge(store, { engramId: id, score: 3, tags: ['react'] });
    const before = store.stats.get(id);
    expect(judge(store, { engramId: id, score: 0, tags: ['react'], repo: 'shop' })).toMatchObject({ matched: false, relevance: [] });
    expect(store.stats.get(id)).toEqual(before);
  });

  it('counts matches without tags or repo globally only', () => {
    const store = tempStore();
    const id = engramIn(store);
    expect(judge(store, { engramId: id, score: 1, tags: [] })).toMatchObject({ matched: true, relevance: [], repo: null });
    expect(getEngram(store, id).times_matched).toBe(1);
    expect(store.stats.get(id)).toEqual({ repos: [], tag_sets: [], tag_relevance: [] });
  });

  it('keeps the later last_matched_at when judgements arrive out of order', () => {
    const store = tempStore();
    const id = engramIn(store);
    applyJudgement(store, { engramId: id, score: 3, tags: ['x'], repo: 'shop', source: 'evaluation', at: '2026-11-05T00:00:00Z' });
    applyJudgement(store, { engramId: id, score: 3, tags: ['x'], repo: 'shop', source: 'evaluation', at: '2026-11-01T00:00:00Z' });
    expect(getEngram(store, id).last_matched_at).toBe('2026-11-05T00:00:00.000Z');
    expect(store.stats.get(id).repos[0]?.last_matched_at).toBe('2026-11-05T00:00:00.000Z');
    expect(store.stats.get(id).tag_sets[0]?.last_matched_at).toBe('2026-11-05T00:00:00.000Z');
  });

  it('is deterministic: the same judgements on two stores give the same state', () => {
    const states = [tempStore(), tempStore()].map((store) => {
      const id = engramIn(store);
      judge(store, { engramId: id, score: 2, tags: ['a', 'b'], repo: 'r' }, 3);
      judge(store, { engramId: id, score: -3, tags: ['b', 'c'] }, 2);
      const { times_matched, last_matched_at, pinned, auto_pinned, prerequisites } = getEngram(store, id);
      return { stats: store.stats.get(id), engram: { times_matched, last_matched_at, pinned, auto_pinned, prerequisites } };
    });
    expect(states[0]).toEqual(states[1]);
  });

  it('feeds search: learnedRelevance reads what was learned', () => {
    const store = tempStore();
    const id = engramIn(store);
    judge(store, { engramId: id, score: -3, tags: ['react'] }, 3);
    expect(learnedRelevance(store, [id], ['react'])).toEqual(new Map([[id, { average: -0.657, evals: 3, unwanted: true }]]));
  });

  it('refuses bad input: score out of range, unknown or deleted engram, bad date', () => {
    const store = tempStore();
    const id = engramIn(store);
    expect(thrown(() => judge(store, { engramId: id, score: 4, tags: [] }))?.code).toBe('INVALID_INPUT');
    expect(thrown(() => applyJudgement(store, { engramId: id, score: 1, tags: [], source: 'evaluation', at: 'yesterday' }))?.code).toBe('INVALID_INPUT');
    expect(thrown(() => judge(store, { engramId: 999, score: 1, tags: [] }))?.code).toBe('NOT_FOUND');
    deleteEngram(store, id);
    expect(thrown(() => judge(store, { engramId: id, score: 1, tags: [] }))?.code).toBe('NOT_FOUND');
  });
});

describe('recordFeedback', () => {
  it('counts double in the EMA, once in the evidence and the matches', () => {
    const store = tempStore();
    const id = engramIn(store);
    const useful = recordFeedback(store, id, true, { tags: ['react'], repo: 'shop', reason: 'saved a rollback', now: () => new Date(AT) });
    expect(useful).toMatchObject({
      engram_id: id,
      useful: true,
      reason: 'saved a rollback',
      weight: 2,
      matched: true,
      relevance: [{ tag: 'react', before: null, after: 0.6 }],
    });
    expect(store.stats.get(id).tag_relevance).toEqual([{ tag: 'react', score: 0.6, positive_evals: 1, negative_evals: 0, last_evaluated_at: AT }]);
    expect(getEngram(store, id).times_matched).toBe(1);
    const notUseful = recordFeedback(store, id, false, { tags: ['react'] });
    expect(notUseful).toMatchObject({ useful: false, reason: null, matched: false, relevance: [{ tag: 'react', before: 0.6, after: -0.18 }] });
    expect(store.stats.get(id).tag_relevance[0]).toMatchObject({ positive_evals: 1, negative_evals: 1 });
  });

  it('finds the engram by uid and redacts the reason it echoes', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'By uid.' });
    const result = recordFeedback(store, engram.uid, true, { reason: 'token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123' });
    expect(result).toMatchObject({ engram_id: engram.id, reason: 'token [REDACTED:anthropic-key]', tags: [] });
  });
});

describe('auto-pin and auto-unpin through judgements', () => {
  it('reproduces the seed’s worked example: the 15th match across three environments pins with tags ["frontend"]', () => {
    const store = tempStore();
    const id = engramIn(store, { prerequisites: { os: ['linux'], repos: ['shop', 'site'], tags: ['old'] } });
    // Score +1 keeps relevance near 0.33, far from a relevance pin: only the tag subset can pin.
    const sets = [
      { tags: ['frontend', 'acme', 'typescript'], times: 6 },
      { tags: ['frontend', 'acme', 'react'], times: 5 },
      { tags: ['frontend', 'personal', 'typescript'], times: 4 },
    ];
    const pins = [];
    for (const set of sets) {
      for (let i = 0; i < set.times; i++) pins.push(judge(store, { engramId: id, score: 1, tags: set.tags, repo: 'shop' }).pin);
    }
    expect(pins.slice(0, 14).every((pin) => pin === null)).toBe(true);
    expect(pins[14]).toMatchObject({ action: 'pinned', reason: 'tag-subset', subset: { tags: ['frontend'], matches: 15 } });
    expect(store.stats.get(id).tag_sets.map((row) => [row.tag_set, row.times_matched])).toEqual([
      [['acme', 'frontend', 'react'], 5],
      [['acme', 'frontend', 'typescript'], 6],
      [['frontend', 'personal', 'typescript'], 4],
    ]);
    expect(getEngram(store, id)).toMatchObject({
      pinned: true,
      auto_pinned: true,
      times_matched: 15,
      // Structural prerequisites kept; tags set to the subset.
      prerequisites: { os: ['linux'], repos: ['shop', 'site'], tags: ['frontend'] },
    });
    // A 16th match changes nothing more.
    expect(judge(store, { engramId: id, score: 1, tags: ['frontend'] }).pin).toBeNull();
  });

  it('pins by relevance at the 5th agreeing evaluation, unpins when it turns bad, and never the other way for manual pins', () => {
    const store = tempStore();
    const id = engramIn(store);
    const tags = ['react', 'typescript'];
    const pins = [1, 2, 3, 4, 5].map(() => judge(store, { engramId: id, score: 3, tags }).pin);
    expect(pins.slice(0, 4)).toEqual([null, null, null, null]);
    // 0.3 → 0.51 → 0.657 → 0.7599 → 0.83193 after 5 evaluations, all positive.
    expect(pins[4]).toMatchObject({ action: 'pinned', reason: 'relevance', evidence: { average: 0.83193, evaluations: 5, positive_share: 1 } });
    expect(getEngram(store, id)).toMatchObject({ pinned: true, auto_pinned: true, prerequisites: null });

    // 0.83193 → 0.282351 (hold) → −0.102354: below 0.2, and the system pinned it, so it unpins.
    expect(judge(store, { engramId: id, score: -3, tags }).pin).toBeNull();
    expect(judge(store, { engramId: id, score: -3, tags }).pin).toMatchObject({ action: 'unpinned', reason: 'relevance', evidence: { average: -0.102354, evaluations: 7 } });
    expect(getEngram(store, id)).toMatchObject({ pinned: false, auto_pinned: false });
  });

  it('never unpins a manual pin, and a person’s unpin is not undone by evidence that already held', () => {
    const store = tempStore();
    const manual = engramIn(store);
    pinEngram(store, manual, true);
    for (let i = 0; i < 6; i++) expect(judge(store, { engramId: manual, score: -3, tags: ['react'] }).pin).toBeNull();
    expect(getEngram(store, manual)).toMatchObject({ pinned: true, auto_pinned: false });

    const auto = addEngram(store, { text: 'Another lesson.' }).engram.id;
    judge(store, { engramId: auto, score: 3, tags: ['react'] }, 5);
    expect(getEngram(store, auto)).toMatchObject({ pinned: true, auto_pinned: true });
    pinEngram(store, auto, false);
    expect(judge(store, { engramId: auto, score: 3, tags: ['react'] }, 3).pin).toBeNull();
    expect(getEngram(store, auto).pinned).toBe(false);
  });

  it('bumps updated_at only when the pin changes', () => {
    const store = tempStore();
    const id = engramIn(store);
    const created = getEngram(store, id).updated_at;
    judge(store, { engramId: id, score: 3, tags: ['react'] }, 4);
    expect(getEngram(store, id).updated_at).toBe(created);
    const pinned = applyJudgement(store, { engramId: id, score: 3, tags: ['react'], source: 'evaluation', at: '2030-01-01T00:00:00Z' });
    expect(pinned.pin?.action).toBe('pinned');
    expect(getEngram(store, id).updated_at).toBe('2030-01-01T00:00:00.000Z');
  });
});
