import { describe, expect, it } from 'vitest';
import type { EngramStats } from '../../../src/core/index.js';
import { decidePin, relevanceEvidence, relevanceVerdict } from '../../../src/services/learn/index.js';

const row = (score: number, positive: number, negative: number, tag = 'react') => ({
  tag,
  score,
  positive_evals: positive,
  negative_evals: negative,
  last_evaluated_at: null,
});
const verdict = (...rows: ReturnType<typeof row>[]) => relevanceVerdict(relevanceEvidence(rows));
const stats = (parts: Partial<EngramStats> = {}): EngramStats => ({ repos: [], tag_sets: [], tag_relevance: [], ...parts });
const unpinned = { pinned: false, auto_pinned: false, deprecated: false, prerequisites: null };

describe('relevance auto-pin thresholds', () => {
  it('needs 5 evaluations: 4 holds, 5 pins', () => {
    expect(verdict(row(0.9, 4, 0))).toBe('hold');
    expect(verdict(row(0.9, 5, 0))).toBe('pin');
  });

  it('needs 80 % positive: 79 % holds, 80 % pins', () => {
    expect(verdict(row(0.9, 79, 21))).toBe('hold');
    expect(verdict(row(0.9, 80, 20))).toBe('pin');
    expect(verdict(row(0.9, 4, 1))).toBe('pin');
  });

  it('needs an average above 0.6: exactly 0.6 holds', () => {
    expect(verdict(row(0.6, 5, 0))).toBe('hold');
    expect(verdict(row(0.600001, 5, 0))).toBe('pin');
    expect(verdict(row(0.6, 3, 0, 'a'), row(0.6, 5, 0, 'b'))).toBe('hold');
  });

  it('unpins below 0.2 with the same evidence floor: 0.2 holds, 4 evaluations hold', () => {
    expect(verdict(row(0.2, 3, 2))).toBe('hold');
    expect(verdict(row(0.199999, 3, 2))).toBe('unpin');
    expect(verdict(row(-1, 0, 4))).toBe('hold');
    expect(verdict()).toBe('hold');
  });

  it('counts one judgement once however many tags its environment had (no overcounted evidence)', () => {
    // One +3 judgement in an environment with five tags: engrammar summed this to 5 evaluations.
    const tags = ['a', 'b', 'c', 'd', 'e'].map((tag) => row(0.9, 1, 0, tag));
    expect(relevanceEvidence(tags)).toEqual({ average: 0.9, evaluations: 1, positive_share: 1 });
    expect(verdict(...tags)).toBe('hold');
  });

  it('weighs each tag by its evaluations, so one judgement in a new tag-rich place does not outvote the history', () => {
    const history = row(1, 10, 0, 'frontend');
    const newPlace = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].map((tag) => row(-0.3, 0, 1, tag));
    // A plain mean over tags would be (1 − 3) / 11 ≈ −0.18: unpin.
    expect(relevanceEvidence([history, ...newPlace])).toEqual({ average: 0.35, evaluations: 10, positive_share: 0.5 });
    expect(verdict(history, ...newPlace)).toBe('hold');
  });
});

describe('decidePin', () => {
  const good = stats({ tag_relevance: [row(0.9, 5, 0)] });
  const bad = stats({ tag_relevance: [row(-0.5, 1, 4)] });

  it('pins by relevance when this judgement makes the verdict "pin", not when it already was', () => {
    const before = stats({ tag_relevance: [row(0.9, 4, 0)] });
    expect(decidePin(unpinned, before, good)).toMatchObject({ action: 'pinned', reason: 'relevance', evidence: { evaluations: 5 } });
    expect(decidePin(unpinned, before, good)?.prerequisites).toBeUndefined();
    // Already "pin" before (a person unpinned it since): left alone.
    expect(decidePin(unpinned, good, stats({ tag_relevance: [row(0.95, 6, 0)] }))).toBeNull();
  });

  it('pins by tag subset when the threshold is first reached, keeping the structural prerequisites', () => {
    const before = stats({
      tag_sets: [
        { tag_set: ['acme', 'frontend', 'typescript'], times_matched: 6, last_matched_at: null },
        { tag_set: ['acme', 'frontend', 'react'], times_matched: 5, last_matched_at: null },
        { tag_set: ['frontend', 'personal', 'typescript'], times_matched: 3, last_matched_at: null },
      ],
    });
    const after = stats({
      tag_sets: before.tag_sets.map((set, i) => (i === 2 ? { ...set, times_matched: 4 } : set)),
    });
    const engram = { ...unpinned, prerequisites: { os: ['linux'], repos: ['shop'], paths: ['/work'], mcp_servers: ['linear'], tags: ['old'] } };
    expect(decidePin(engram, before, after)).toMatchObject({
      action: 'pinned',
      reason: 'tag-subset',
      subset: { tags: ['frontend'], matches: 15 },
      prerequisites: { os: ['linux'], repos: ['shop'], paths: ['/work'], mcp_servers: ['linear'], tags: ['frontend'] },
    });
    expect(decidePin(unpinned, before, after)?.prerequisites).toEqual({ tags: ['frontend'] });
    expect(decidePin(unpinned, after, after)).toBeNull();
  });

  it('never touches a manual pin, unpins only what the system pinned', () => {
    expect(decidePin({ ...unpinned, pinned: true }, good, bad)).toBeNull();
    expect(decidePin({ ...unpinned, pinned: true, auto_pinned: true }, good, bad)).toMatchObject({ action: 'unpinned', reason: 'relevance' });
    expect(decidePin({ ...unpinned, pinned: true, auto_pinned: true }, good, good)).toBeNull();
  });

  it('does not auto-pin a deprecated engram, nor one the evidence calls not useful', () => {
    const before = stats({ tag_relevance: [row(0.9, 4, 0)] });
    expect(decidePin({ ...unpinned, deprecated: true }, before, good)).toBeNull();
    const subset = stats({ ...bad, tag_sets: [{ tag_set: ['frontend'], times_matched: 15, last_matched_at: null }] });
    expect(decidePin(unpinned, bad, subset)).toBeNull();
  });
});
