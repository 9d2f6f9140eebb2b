import { describe, expect, it } from 'vitest';
import { abstainReason, TUNING, weakMatch } from '../../../src/services/index.js';

describe('abstainReason', () => {
  it.each([
    'yes',
    'ok do it',
    'OK, do it.',
    'thanks, go ahead',
    'sounds good',
    'lgtm',
    'yes please',
    'hmm wait',
    'Why?',
    'do that again',
    '[Request interrupted by user]',
    '[Request interrupted by user for tool use]',
    '<system-reminder>The user opened file x.ts</system-reminder>',
  ])('abstains on content-free %j', (query) => {
    expect(abstainReason(query)).toBe('no-content');
  });

  it.each(['', '   ', '\n\t'])('abstains on empty %j', (query) => {
    expect(abstainReason(query)).toBe('empty');
  });

  it.each([
    'run the tests',
    'why does the deploy fail?',
    'ok, now fix the flaky login test',
    'docker',
    'npm ci',
    'stop the container',
    'retry logic for the webhook',
    'do not push to main',
    '[Request interrupted by user] use pnpm instead',
  ])('searches %j', (query) => {
    expect(abstainReason(query)).toBeNull();
  });
});

describe('weakMatch', () => {
  const idf = (weights: Record<string, number>) => (term: string) => weights[term] ?? 5;
  const candidate = (id: number, terms: string[], agreed = false, similarity: number | null = null) => ({ id, terms: new Set(terms), agreed, similarity });

  it('answers when a top result covers enough of the query weight, rare terms weighing more', () => {
    const weights = idf({ docker: 1, build: 1, buildkit: 4 });
    // "buildkit" alone is 4 / 6 of the weight: enough.
    expect(weakMatch(['docker', 'build', 'buildkit'], weights, [candidate(1, ['buildkit'])]).weak).toBeNull();
    // One common word is 1 / 6 of the weight: not enough.
    expect(weakMatch(['docker', 'build', 'buildkit'], weights, [candidate(1, ['docker'])]).weak).toMatch(/covers 17 %/);
  });

  it('accepts less coverage when the keyword and vector lists agree on the result', () => {
    const weights = idf({ a: 1, b: 4 });
    const terms = ['a', 'b'];
    expect(weakMatch(terms, weights, [candidate(1, ['a'])]).weak).not.toBeNull();
    expect(weakMatch(terms, weights, [candidate(1, ['a'], true)]).weak).toBeNull();
  });

  it('answers a paraphrase that shares no word when the vector similarity alone is high enough', () => {
    const weights = idf({ a: 1, b: 1 });
    expect(weakMatch(['a', 'b'], weights, [candidate(1, [], false, 0.9)], 0.7).weak).toBeNull();
    expect(weakMatch(['a', 'b'], weights, [candidate(1, [], false, 0.6)], 0.7).weak).toMatch(/or a vector similarity of 0.7/);
    expect(weakMatch(['a', 'b'], weights, [candidate(1, [], false, 0.9)]).weak).not.toBeNull();
  });

  it('stays silent when words no memory holds carry most of the query, however well a result covers the rest', () => {
    // 5.9 is the store's weight for a word no memory holds (the IDF of the unseen term).
    const weights = (known: Record<string, number>) => (term: string) => known[term] ?? 5.9;
    const verdict = weakMatch(['terraform', 'plan'], weights({ plan: 3.9 }), [candidate(1, ['plan'])]);
    expect(verdict.unknown).toEqual({ terms: ['terraform'], share: 0.602 });
    expect(verdict.best).toMatchObject({ coverage: 1 });
    expect(verdict.weak).toMatch(/60 % of the query's weight is in words no memory holds \(terraform\)/);
    expect(TUNING.abstain.maxUnknownShare).toBeLessThan(0.602);
    // …unless the vectors are sure, or both lists agree on a result holding enough of the whole query.
    expect(weakMatch(['terraform', 'plan'], weights({ plan: 3.9 }), [candidate(1, ['plan'], false, 0.9)], 0.7).weak).toBeNull();
    expect(weakMatch(['terraform', 'plan'], weights({ plan: 3.9 }), [candidate(1, ['plan'], true)]).weak).toBeNull();
    expect(weakMatch(['terraform', 'plan', 'cloud'], weights({ plan: 0.5, cloud: 5 }), [candidate(1, ['plan'], true)]).weak).not.toBeNull();
  });

  it('measures coverage over the weight of the words the store holds', () => {
    const weights = (term: string) => ({ a: 3, b: 3 })[term] ?? 5;
    // `zzz` is unknown (5 of 11, under the share allowed); `a` is half of the known weight: an answer. Counted over
    // the whole query (3 of 11) it would not be.
    expect(TUNING.abstain.maxUnknownShare).toBeGreaterThan(5 / 11);
    expect(TUNING.abstain.coverage).toBeGreaterThan(3 / 11);
    const verdict = weakMatch(['a', 'b', 'zzz'], weights, [candidate(1, ['a'])]);
    expect(verdict.best).toMatchObject({ id: 1, coverage: 0.5 });
    expect(verdict.weak).toBeNull();
    expect(weakMatch(['a', 'b', 'zzz'], weights, [candidate(1, [])]).weak).toMatch(/covers 0 % of the query's weight in words the store holds/);
  });

  it('reports the best candidate and the rule for --explain, and is silent with no candidates', () => {
    const verdict = weakMatch(['x', 'y'], idf({ x: 2, y: 2 }), [candidate(7, ['x']), candidate(8, [])]);
    expect(verdict.best).toEqual({ id: 7, coverage: 0.5, matched: ['x'], agreed: false });
    expect(verdict.rule).toContain(String(TUNING.abstain.coverage));
    expect(weakMatch(['x'], idf({}), []).weak).toBe('nothing matched');
  });
});
