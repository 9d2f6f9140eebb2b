import { describe, expect, it } from 'vitest';
import {
  addEngram,
  deleteEngram,
  deprecateEngram,
  getEngram,
  listEngrams,
  pinEngram,
  updateEngram,
} from '../../../src/services/index.js';
import { steppingClock, tempStore, thrown } from '../../_helpers.js';

describe('updateEngram', () => {
  it('changes only the given fields, bumps revision_count and updated_at, and reports what changed', () => {
    const store = tempStore();
    const now = steppingClock();
    const { engram } = addEngram(store, { text: 'Old text.', tags: ['a', 'b'], category: 'x' }, { now });
    const result = updateEngram(store, engram.id, { text: 'New text.', add_tags: 'c', remove_tags: ['a'] }, { now });
    expect(result.status).toBe('updated');
    expect(result.changed.sort()).toEqual(['tags', 'text']);
    expect(result.engram).toMatchObject({ text: 'New text.', tags: ['b', 'c'], category: 'x', revision_count: 1 });
    expect(result.engram.content_hash).not.toBe(engram.content_hash);
    expect(result.engram.updated_at > engram.updated_at).toBe(true);
    expect(result.engram.created_at).toBe(engram.created_at);
  });

  it('reports unchanged, and writes nothing, when the values are already those', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'Same.', category: 'dev' });
    const result = updateEngram(store, engram.id, { text: 'Same.', category: 'DEV' });
    expect(result).toMatchObject({ status: 'unchanged', changed: [] });
    expect(getEngram(store, engram.id)).toEqual(engram);
  });

  it('moves scope with the project unless a scope is given', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'Scoped.' });
    expect(updateEngram(store, engram.id, { project: 'shop' }).engram).toMatchObject({ project: 'shop', scope: 'project' });
    expect(updateEngram(store, engram.id, { project: null }).engram).toMatchObject({ project: null, scope: 'personal' });
  });

  it('redacts secrets in new text', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'Plain.' });
    const result = updateEngram(store, engram.id, { text: 'Now with sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123' });
    expect(result.engram.text).toBe('Now with [REDACTED:anthropic-key]');
    expect(result.redacted).toEqual(['anthropic-key']);
  });

  it('rejects an empty patch, unknown ids and deleted engrams', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'Here.' });
    expect(thrown(() => updateEngram(store, engram.id, {}))?.code).toBe('INVALID_INPUT');
    expect(thrown(() => updateEngram(store, 999, { text: 'x' }))?.code).toBe('NOT_FOUND');
    deleteEngram(store, engram.id);
    expect(thrown(() => updateEngram(store, engram.id, { text: 'x' }))?.code).toBe('NOT_FOUND');
  });
});

describe('deprecateEngram', () => {
  it('hides the engram from the default list, keeps it findable, and taking it back sends it to review', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'Use make.' });
    const result = deprecateEngram(store, engram.id, { reason: 'make is gone' });
    expect(result.engram).toMatchObject({ deprecated: true, deprecated_reason: 'make is gone' });
    expect(listEngrams(store).total).toBe(0);
    expect(listEngrams(store, { deprecated: 'only' }).engrams.map((e) => e.id)).toEqual([engram.id]);
    expect(deprecateEngram(store, engram.id, { reason: 'make is gone' }).status).toBe('unchanged');
    // Making it active again is a person's decision (services/gate): from here it goes back to the review queue.
    expect(deprecateEngram(store, engram.id, { undo: true }).engram).toMatchObject({ deprecated: false, deprecated_reason: null, status: 'pending' });
    expect(listEngrams(store).total).toBe(0);
    expect(listEngrams(store, { statuses: ['pending'] }).total).toBe(1);
  });
});

describe('pinEngram', () => {
  it('pins manually (never marked auto-pinned) and unpins', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'Pin me.' });
    store.engrams.update(engram.id, { auto_pinned: true, pinned: true });
    expect(pinEngram(store, engram.id, true).engram).toMatchObject({ pinned: true, auto_pinned: false });
    expect(pinEngram(store, engram.id, false).engram).toMatchObject({ pinned: false, auto_pinned: false });
  });
});

describe('deleteEngram', () => {
  it('soft-deletes by default: hidden everywhere, found only on request, idempotent', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'Delete me.' });
    expect(deleteEngram(store, engram.id)).toEqual({ id: engram.id, uid: engram.uid, mode: 'soft', changed: true, undo_token: expect.stringMatching(/^u-/) });
    expect(thrown(() => getEngram(store, engram.id))?.code).toBe('NOT_FOUND');
    expect(getEngram(store, engram.id, { includeDeleted: true }).deleted_at).not.toBeNull();
    expect(listEngrams(store).total).toBe(0);
    expect(deleteEngram(store, engram.id)).toMatchObject({ changed: false, undo_token: null });
  });

  it('hard-deletes the row and its learning state', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'Gone for good.' });
    store.stats.replace(engram.id, {
      repos: [{ repo: 'shop', times_matched: 2, last_matched_at: null }],
      tag_sets: [{ tag_set: ['a'], times_matched: 2, last_matched_at: null }],
      tag_relevance: [{ tag: 'a', score: 0.5, positive_evals: 1, negative_evals: 0, last_evaluated_at: null }],
    });
    expect(deleteEngram(store, engram.uid, { hard: true }).mode).toBe('hard');
    expect(store.engrams.get(engram.id)).toBeUndefined();
    for (const table of ['engram_repo_stats', 'engram_tag_stats', 'engram_tag_relevance']) {
      expect(store.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get()).toBe(0);
    }
  });
});

describe('listEngrams', () => {
  it('filters by hierarchical category, all-of tags, project, scope and pinned', () => {
    const store = tempStore();
    addEngram(store, { text: 'one', category: 'development', tags: ['a'] });
    addEngram(store, { text: 'two', category: 'development/frontend', tags: ['a', 'b'], project: 'shop' });
    addEngram(store, { text: 'three', category: 'developments', tags: ['b'], pinned: true });
    addEngram(store, { text: 'four', category: 'dev_ops/x', tags: ['a', 'b'] });
    // '_' is a LIKE wildcard: an unescaped prefix match on dev_ops/ would also return this one.
    addEngram(store, { text: 'five', category: 'devxops/y' });
    const texts = (options: Parameters<typeof listEngrams>[1]) => listEngrams(store, options).engrams.map((e) => e.text);
    expect(texts({ category: 'development' })).toEqual(['one', 'two']);
    expect(texts({ category: 'Development/Frontend' })).toEqual(['two']);
    expect(texts({ category: 'dev_ops' })).toEqual(['four']);
    expect(texts({ category: 'dev-ops' })).toEqual([]);
    expect(texts({ tags: 'a,b' })).toEqual(['two', 'four']);
    expect(texts({ project: 'shop' })).toEqual(['two']);
    expect(texts({ project: null })).toEqual(['one', 'three', 'four', 'five']);
    expect(texts({ scope: 'project' })).toEqual(['two']);
    expect(texts({ pinned: true })).toEqual(['three']);
  });

  it('pages with limit and offset and reports the total', () => {
    const store = tempStore();
    for (let i = 0; i < 5; i++) addEngram(store, { text: `lesson ${i}` });
    const page = listEngrams(store, { limit: 2, offset: 2 });
    expect(page.engrams.map((e) => e.text)).toEqual(['lesson 2', 'lesson 3']);
    expect(page).toMatchObject({ total: 5, limit: 2, offset: 2 });
    expect(thrown(() => listEngrams(store, { limit: 0 }))?.code).toBe('INVALID_INPUT');
  });
});
