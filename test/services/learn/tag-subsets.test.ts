import { describe, expect, it } from 'vitest';
import { autoPinSubset, minimalTagSubsets } from '../../../src/services/learn/index.js';
import { subsetMatches } from '../../../src/services/learn/tag-subsets.js';

/** The seed's "Example Execution" (Auto-Pin Algorithm). */
const SEED_EXAMPLE = [
  { tags: ['acme', 'frontend', 'typescript'], matches: 6 },
  { tags: ['acme', 'frontend', 'react'], matches: 5 },
  { tags: ['frontend', 'personal', 'typescript'], matches: 4 },
];

describe('tag-subset auto-pin search', () => {
  it('reproduces the seed’s worked example: {frontend} 6 + 5 + 4 = 15 → ["frontend"]', () => {
    expect(subsetMatches(['frontend'], SEED_EXAMPLE)).toBe(15);
    expect(subsetMatches(['acme'], SEED_EXAMPLE)).toBe(11);
    expect(subsetMatches(['typescript'], SEED_EXAMPLE)).toBe(10);
    expect(subsetMatches(['react'], SEED_EXAMPLE)).toBe(5);
    expect(subsetMatches(['personal'], SEED_EXAMPLE)).toBe(4);
    expect(subsetMatches(['acme', 'frontend'], SEED_EXAMPLE)).toBe(11);
    expect(minimalTagSubsets(SEED_EXAMPLE)).toEqual([{ tags: ['frontend'], matches: 15 }]);
    expect(autoPinSubset(SEED_EXAMPLE)).toEqual({ tags: ['frontend'], matches: 15 });
  });

  it('finds nothing below the threshold (one match short)', () => {
    const short = SEED_EXAMPLE.map((set, i) => (i === 2 ? { ...set, matches: 3 } : set));
    expect(autoPinSubset(short)).toBeNull();
    expect(autoPinSubset(SEED_EXAMPLE, { threshold: 16 })).toBeNull();
  });

  it('keeps only minimal subsets: every tag of one busy environment qualifies alone, no pair does', () => {
    const one = [{ tags: ['acme', 'frontend', 'react'], matches: 15 }];
    expect(minimalTagSubsets(one)).toEqual([
      { tags: ['acme'], matches: 15 },
      { tags: ['frontend'], matches: 15 },
      { tags: ['react'], matches: 15 },
    ]);
    // Ties go to the alphabetically first; more matches win before that.
    expect(autoPinSubset(one)?.tags).toEqual(['acme']);
    expect(autoPinSubset([...one, { tags: ['react'], matches: 1 }])?.tags).toEqual(['react']);
  });

  it('never answers with more than one tag, whatever the tag sets (a subset sums no more than its tags)', () => {
    let seed = 7;
    const random = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const tags = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (let round = 0; round < 200; round++) {
      const sets = Array.from({ length: 1 + random(5) }, () => ({
        tags: tags.filter(() => random(2) === 1),
        matches: random(12),
      }));
      for (const subset of minimalTagSubsets(sets)) expect(subset.tags).toHaveLength(1);
    }
  });

  it('ignores empty tag sets and sets without matches, and respects maxSize', () => {
    expect(autoPinSubset([{ tags: [], matches: 40 }])).toBeNull();
    expect(autoPinSubset([{ tags: ['x'], matches: 0 }], { threshold: 0 })).toBeNull();
    expect(minimalTagSubsets(SEED_EXAMPLE, { maxSize: 0 })).toEqual([]);
  });
});
