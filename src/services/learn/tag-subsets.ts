import { LEARNING } from './constants.js';

/** How often an engram was matched in one environment (its sorted tag set). */
export interface TagSetMatches {
  tags: readonly string[];
  matches: number;
}

/** A tag subset and the matches summed over every tag set that contains it. */
export interface TagSubset {
  tags: string[];
  matches: number;
}

/** Options of the search; both default to LEARNING.tagSubset. */
export interface TagSubsetOptions {
  threshold?: number;
  maxSize?: number;
}

/** Matches summed over the tag sets that contain every tag of `subset`. */
export function subsetMatches(subset: readonly string[], tagSets: readonly TagSetMatches[]): number {
  let total = 0;
  for (const set of tagSets) if (subset.every((tag) => set.tags.includes(tag))) total += set.matches;
  return total;
}

/** Combinations of `size` items of `items`, in lexicographic order of positions (like Python's itertools). */
function* combinations<T>(items: readonly T[], size: number, start = 0, prefix: T[] = []): Generator<T[]> {
  if (prefix.length === size) {
    yield prefix;
    return;
  }
  for (let i = start; i <= items.length - (size - prefix.length); i++) {
    yield* combinations(items, size, i + 1, [...prefix, items[i] as T]);
  }
}

const containsAll = (set: readonly string[], subset: readonly string[]): boolean => subset.every((tag) => set.includes(tag));

/** Smallest first, then most matches (stronger evidence), then alphabetical — a total order, so results are stable. */
function bySizeThenMatches(a: TagSubset, b: TagSubset): number {
  if (a.tags.length !== b.tags.length) return a.tags.length - b.tags.length;
  if (a.matches !== b.matches) return b.matches - a.matches;
  const left = a.tags.join('\u0000');
  const right = b.tags.join('\u0000');
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * The seed's tag-subset search: every subset of the tags seen (up to `maxSize` tags) whose summed matches reach the
 * threshold, kept only when no proper subset of it also reaches it (minimal), in {@link bySizeThenMatches} order.
 *
 * A subset's sum never exceeds the sum of any one of its tags (fewer tag sets contain it), so only tags that reach
 * the threshold alone can appear, and every larger subset of them already contains a minimal one-tag subset: the
 * answer is always the qualifying single tags. The loop over sizes stays, as in the seed, and costs nothing once
 * pruned this way.
 */
export function minimalTagSubsets(tagSets: readonly TagSetMatches[], options: TagSubsetOptions = {}): TagSubset[] {
  const threshold = options.threshold ?? LEARNING.tagSubset.threshold;
  const maxSize = options.maxSize ?? LEARNING.tagSubset.maxSize;
  const sets = tagSets.filter((set) => set.matches > 0);
  const allTags = [...new Set(sets.flatMap((set) => set.tags))].sort();
  const candidates = allTags.filter((tag) => subsetMatches([tag], sets) >= threshold);
  const minimal: TagSubset[] = [];
  for (let size = 1; size <= Math.min(maxSize, candidates.length); size++) {
    for (const subset of combinations(candidates, size)) {
      if (minimal.some((found) => containsAll(subset, found.tags))) continue;
      const matches = subsetMatches(subset, sets);
      if (matches >= threshold) minimal.push({ tags: subset, matches });
    }
  }
  return minimal.sort(bySizeThenMatches);
}

/**
 * The tag prerequisite a tag-subset auto-pin sets: the smallest minimal subset (ties: more matches, then
 * alphabetical), or null when no subset reaches the threshold.
 */
export function autoPinSubset(tagSets: readonly TagSetMatches[], options: TagSubsetOptions = {}): TagSubset | null {
  return minimalTagSubsets(tagSets, options)[0] ?? null;
}
