/**
 * A person's decisions through the gate on a real store: approve, reject, forget; contradictions settled explicitly;
 * stale and code-gone engrams confirmed or kept; unknown ids change nothing; only a person may decide.
 */
import { describe, expect, it } from 'vitest';
import { addEngram, listAudit, listConflicts, reviewQueue } from '../../../src/services/index.js';
import { approveEngrams, forgetEngrams, rejectEngrams } from '../../../src/services/gate/index.js';
import { steppingClock, tempStore, thrown } from '../../_helpers.js';
import { snapshot } from './_state.js';

const agent = { by: 'agent', via: 'mcp' } as const;
const harvest = { by: 'harvest', via: 'job' } as const;

describe('approve', () => {
  it('makes pending engrams active, confirmed now, in one audited operation', () => {
    const store = tempStore();
    const now = steppingClock();
    const a = addEngram(store, { text: 'The worker pool size defaults to 8 on CI machines.' }, { now, actor: harvest }).engram;
    const b = addEngram(store, { text: 'Run vitest with --pool=forks when native modules crash.', kind: 'gotcha' }, { now, actor: agent }).engram;
    expect([a.status, b.status]).toEqual(['pending', 'pending']);
    const result = approveEngrams(store, [a.id, b.uid], { now });
    expect(result.decisions.map((d) => [d.id, d.action, d.from, d.to])).toEqual([
      [a.id, 'promoted', 'pending', 'active'],
      [b.id, 'promoted', 'pending', 'active'],
    ]);
    expect(store.engrams.get(a.id)).toMatchObject({ status: 'active', status_reason: null, confirmed_at: '2026-11-01T10:00:02.000Z' });
    expect(listAudit(store, { limit: 1 })[0]).toMatchObject({ op: 'approve', actor: 'user', via: 'cli', token: result.undo_token, engram_ids: [a.id, b.id] });
  });

  it('refuses an engram that contradicts an active one unless told how to settle it, naming both sides', () => {
    const store = tempStore();
    const now = steppingClock();
    const old = addEngram(store, { text: 'Use pnpm to install dependencies in this repository.', project: 'shop' }, { now }).engram;
    const newer = addEngram(store, { text: 'Never use pnpm here; install dependencies with npm.', project: 'shop' }, { now, actor: harvest }).engram;
    expect(listConflicts(store)).toEqual([expect.objectContaining({ engram_id: newer.id, other_id: old.id, status: 'open', signal: 'polarity' })]);
    const before = snapshot(store);
    const refused = thrown(() => approveEngrams(store, [newer.id], { now }));
    expect(refused?.code).toBe('INVALID_INPUT');
    expect(refused?.message).toContain(`#${newer.id} contradicts active #${old.id}`);
    expect(refused?.message).toContain('--supersede');
    expect(snapshot(store)).toEqual(before);

    const kept = approveEngrams(store, [newer.id], { now, keepBoth: true });
    expect(kept.decisions[0]).toMatchObject({ action: 'promoted', superseded: [] });
    expect(listConflicts(store, { all: true })[0]).toMatchObject({ status: 'resolved', resolution: 'kept-both' });
  });

  it('two pending engrams that contradict each other cannot both be approved at once', () => {
    const store = tempStore();
    const now = steppingClock();
    const a = addEngram(store, { text: 'Use single quotes for strings in TypeScript files.' }, { now, actor: harvest }).engram;
    const b = addEngram(store, { text: 'Use double quotes for strings in TypeScript files.' }, { now, actor: harvest }).engram;
    const before = snapshot(store);
    expect(thrown(() => approveEngrams(store, [a.id, b.id], { now }))?.message).toContain(`#${b.id} contradicts active #${a.id}`);
    expect(snapshot(store)).toEqual(before);
    expect(approveEngrams(store, [a.id, b.id], { now, supersede: true }).decisions.map((d) => [d.id, d.superseded])).toEqual([
      [a.id, []],
      [b.id, [a.id]],
    ]);
  });

  it('--supersede retires the active engram it contradicts', () => {
    const store = tempStore();
    const now = steppingClock();
    const old = addEngram(store, { text: 'The API client timeout is 30s.' }, { now }).engram;
    const newer = addEngram(store, { text: 'The API client timeout is 60 seconds.' }, { now, actor: agent }).engram;
    expect(newer.status_reason).toContain(`contradicts active engram #${old.id}`);
    const result = approveEngrams(store, [newer.id], { now, supersede: true });
    expect(result.decisions[0]).toMatchObject({ action: 'promoted', superseded: [old.id] });
    expect(store.engrams.get(old.id)).toMatchObject({ status: 'deprecated', deprecated: true, status_reason: `superseded by #${newer.id}` });
    expect(listConflicts(store)).toEqual([]);
  });

  it('confirms a stale active engram and keeps one whose code is gone; a fresh one is unchanged', () => {
    const store = tempStore();
    const old = addEngram(store, { text: 'Deploy previews live on Vercel.' }, { now: () => new Date('2025-01-01T00:00:00.000Z') }).engram;
    const gone = addEngram(store, { text: 'computeTotals in src/cart.ts rounds each line before summing.' }, { now: () => new Date('2026-10-01T00:00:00.000Z') }).engram;
    store.engrams.update(gone.id, { liveness: 'gone', liveness_at: '2026-10-30T00:00:00.000Z' });
    const fresh = addEngram(store, { text: 'Feature flags are read at startup.' }, { now: () => new Date('2026-10-01T00:00:00.000Z') }).engram;
    const now = () => new Date('2026-11-01T00:00:00.000Z');
    expect(reviewQueue(store, { now: now() }).items.map((item) => [item.engram.id, item.reasons])).toEqual([
      [gone.id, ['code-gone']],
      [old.id, ['stale']],
    ]);
    const result = approveEngrams(store, [old.id, gone.id, fresh.id], { now });
    expect(result.decisions.map((d) => d.action)).toEqual(['confirmed', 'kept', 'unchanged']);
    expect(store.engrams.get(old.id)?.confirmed_at).toBe('2026-11-01T00:00:00.000Z');
    expect(store.engrams.get(gone.id)?.liveness).toBe('kept');
    expect(reviewQueue(store, { now: now() }).total).toBe(0);
  });
});

describe('reject and forget', () => {
  it('reject refuses a pending engram (kept, so it is not learned again) and retires an active one', () => {
    const store = tempStore();
    const now = steppingClock();
    const pending = addEngram(store, { text: 'Always run the full e2e suite before pushing a branch.' }, { now, actor: harvest }).engram;
    const active = addEngram(store, { text: 'Staging deploys on every push to main.' }, { now }).engram;
    const result = rejectEngrams(store, [pending.id, active.id], { now, reason: 'not how we work' });
    expect(result.decisions.map((d) => [d.action, d.to])).toEqual([
      ['rejected', 'rejected'],
      ['retired', 'deprecated'],
    ]);
    expect(store.engrams.get(pending.id)).toMatchObject({ status: 'rejected', status_reason: 'not how we work' });
    // Harvested again, the same lesson stays rejected.
    const again = addEngram(store, { text: 'Always run the full e2e suite before pushing a branch.' }, { now, actor: harvest });
    expect(again).toMatchObject({ status: 'duplicate', engram: { id: pending.id, status: 'rejected' } });
    expect(rejectEngrams(store, [pending.id], { now })).toMatchObject({ decisions: [{ action: 'unchanged' }], undo_token: null });
  });

  it('forget removes the engram with its learning state', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'The Redis pool allows 50 connections.' });
    store.stats.replace(engram.id, { repos: [{ repo: 'shop', times_matched: 1, last_matched_at: null }], tag_sets: [], tag_relevance: [] });
    const result = forgetEngrams(store, [engram.id]);
    expect(result.decisions).toEqual([expect.objectContaining({ id: engram.id, action: 'forgotten' })]);
    expect(store.engrams.get(engram.id)).toBeUndefined();
    expect(store.stats.get(engram.id).repos).toEqual([]);
  });

  it('an unknown id anywhere in the list changes nothing; only a person decides', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'Pin GitHub Actions to a commit SHA.' }, { actor: harvest });
    const before = snapshot(store);
    for (const decide of [approveEngrams, rejectEngrams, forgetEngrams]) {
      expect(thrown(() => decide(store, [engram.id, 999]))).toMatchObject({ code: 'NOT_FOUND', message: 'engram 999 does not exist' });
      expect(thrown(() => decide(store, [engram.id], { actor: agent }))?.message).toContain("only a person can approve, reject, forget or undo; this was asked by 'agent' via mcp");
      expect(thrown(() => decide(store, []))?.code).toBe('INVALID_INPUT');
    }
    expect(snapshot(store)).toEqual(before);
    expect(listAudit(store, { ops: ['approve', 'reject', 'forget'] })).toEqual([]);
  });
});
