import { normalizePrerequisites, type Engram, type EngramStats, type Prerequisites } from '../../core/index.js';
import { LEARNING } from './constants.js';
import type { TagRelevance } from './ema.js';
import { autoPinSubset, type TagSetMatches, type TagSubset } from './tag-subsets.js';

/** What an engram's tag-relevance rows say about it as a whole. */
export interface RelevanceEvidence {
  /**
   * Mean score weighted by each tag's evaluations (rounded to 6 decimals): a tag judged once in a new environment
   * weighs one evaluation, not as much as a tag judged twenty times.
   */
  average: number;
  /**
   * Evaluations: the most any one tag has seen. One judgement adds one to each tag of its environment, so a sum
   * over tags would count it once per tag (engrammar's overcounted pin evidence, peers.md §1.10); the maximum never
   * overcounts, and equals the number of judgements when some tag was present in all of them.
   */
  evaluations: number;
  /** Positive share of all evaluations, pooled over tags (a ratio, so the per-tag repetition cancels out). */
  positive_share: number;
}

/** `pin`: useful wherever it was judged; `unpin`: not useful; `hold`: neither, or too little evidence. */
export type RelevanceVerdict = 'pin' | 'unpin' | 'hold';

/** A pin change the learning statistics caused. */
export interface PinChange {
  action: 'pinned' | 'unpinned';
  /** `tag-subset`: enough matches across environments sharing a tag; `relevance`: the tag-relevance evidence. */
  reason: 'tag-subset' | 'relevance';
  /** The same in a sentence, with the numbers. */
  detail: string;
  /** A tag-subset pin's new prerequisites: the old ones with `tags` set to the subset. */
  prerequisites?: Prerequisites | null;
  subset?: TagSubset;
  evidence?: RelevanceEvidence;
}

const round = (value: number): number => {
  const factor = 10 ** LEARNING.ema.decimals;
  return Math.round(value * factor) / factor || 0;
};

/** Aggregates an engram's tag-relevance rows; null when no tag has been evaluated. */
export function relevanceEvidence(rows: readonly TagRelevance[]): RelevanceEvidence | null {
  let weighted = 0;
  let evaluations = 0;
  let positive = 0;
  let total = 0;
  for (const row of rows) {
    const evals = row.positive_evals + row.negative_evals;
    weighted += row.score * evals;
    evaluations = Math.max(evaluations, evals);
    positive += row.positive_evals;
    total += evals;
  }
  if (total === 0) return null;
  return { average: round(weighted / total), evaluations, positive_share: round(positive / total) };
}

/** Applies the relevance thresholds (LEARNING.relevance). */
export function relevanceVerdict(evidence: RelevanceEvidence | null): RelevanceVerdict {
  const { pinAbove, minEvaluations, minPositiveShare, unpinBelow } = LEARNING.relevance;
  if (!evidence || evidence.evaluations < minEvaluations) return 'hold';
  if (evidence.average > pinAbove && evidence.positive_share >= minPositiveShare) return 'pin';
  if (evidence.average < unpinBelow) return 'unpin';
  return 'hold';
}

/** Sets `tags` to the subset and keeps every other prerequisite (os, repos, paths, mcp_servers). */
export function withTagPrerequisite(prerequisites: Prerequisites | null, tags: readonly string[]): Prerequisites | null {
  return normalizePrerequisites({ ...(prerequisites ?? {}), tags: [...tags] });
}

const tagSetMatches = (stats: EngramStats): TagSetMatches[] =>
  stats.tag_sets.map((row) => ({ tags: row.tag_set, matches: row.times_matched }));

const describe = (evidence: RelevanceEvidence): string =>
  `average relevance ${evidence.average.toFixed(2)} over ${evidence.evaluations} evaluations, ` +
  `${Math.round(evidence.positive_share * 100)} % positive`;

/**
 * Whether one judgement changes the pin, from the engram and its statistics before and after the judgement.
 *
 * - A manual pin (`pinned` without `auto_pinned`) is never touched.
 * - An automatic pin is removed when the relevance verdict is `unpin`.
 * - An unpinned engram is pinned when this judgement makes a condition true that was false before it: a tag subset
 *   reaches the threshold for the first time (its prerequisite tags set to the subset), or the relevance verdict
 *   becomes `pin`. Conditions that already held do not pin again, so a person's unpin sticks and an automatic unpin
 *   is not undone by the match counts that are still above the threshold.
 * - Nothing is auto-pinned while the relevance verdict is `unpin`, nor when the engram is deprecated.
 */
export function decidePin(
  engram: Pick<Engram, 'pinned' | 'auto_pinned' | 'deprecated' | 'prerequisites'>,
  before: EngramStats,
  after: EngramStats,
): PinChange | null {
  const evidence = relevanceEvidence(after.tag_relevance);
  const verdict = relevanceVerdict(evidence);
  if (engram.pinned) {
    if (!engram.auto_pinned || verdict !== 'unpin' || !evidence) return null;
    return {
      action: 'unpinned',
      reason: 'relevance',
      detail: `${describe(evidence)}: below ${LEARNING.relevance.unpinBelow}`,
      evidence,
    };
  }
  if (engram.deprecated || verdict === 'unpin') return null;

  const subset = autoPinSubset(tagSetMatches(after));
  if (subset && !autoPinSubset(tagSetMatches(before))) {
    return {
      action: 'pinned',
      reason: 'tag-subset',
      detail:
        `matched ${subset.matches} times in environments tagged ${subset.tags.join(', ')} ` +
        `(threshold ${LEARNING.tagSubset.threshold})`,
      prerequisites: withTagPrerequisite(engram.prerequisites, subset.tags),
      subset,
    };
  }
  if (verdict === 'pin' && evidence && relevanceVerdict(relevanceEvidence(before.tag_relevance)) !== 'pin') {
    return {
      action: 'pinned',
      reason: 'relevance',
      detail: `${describe(evidence)}: above ${LEARNING.relevance.pinAbove}`,
      evidence,
    };
  }
  return null;
}
