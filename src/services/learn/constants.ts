/**
 * Every number the learning statistics use, with the reason for its value. The formulas live in `ema.ts`
 * (relevance), `tag-subsets.ts` (tag-subset auto-pin) and `pin.ts` (when to pin and unpin); docs/LEARNING.md explains
 * them with worked examples. Search reads the same table with its own thresholds (recall/tuning.ts `tagRelevance`).
 */
export const LEARNING = {
  /** A judgement's score runs from −3 (clearly harmful here) to +3 (clearly useful here), as the evaluator and
   * engrammar's prompt use it; raw = score / 3 puts it in [−1, 1]. */
  scoreMax: 3,
  /** Tag relevance is an exponential moving average: new = old × (1 − alpha) + raw × alpha × weight. */
  ema: {
    /** 0.3: the newest judgement moves a score by 30 % of the way, so about three agreeing judgements say more than
     * any one (0 → 0.3 → 0.51 → 0.657 at +3) and an engram that stops helping fades within a handful of sessions. */
    alpha: 0.3,
    /** Scores stay in [−3, 3] (the column's CHECK). With weights ≤ 2 and raw ∈ [−1, 1] a score settles at ±weight at
     * most, so the clamp only guards against a future weight above 3. */
    clamp: 3,
    /** Scores are stored to 6 decimals: smaller differences mean nothing, and exported values stay readable. */
    decimals: 6,
  },
  /** How much one judgement moves the EMA, by where it came from. */
  weights: {
    /** The session evaluator reads a transcript and guesses: the baseline. */
    evaluation: 1,
    /** A person (or the agent, through engram_feedback over MCP) said so explicitly: counts double. It is still one
     * piece of evidence (one positive or negative evaluation) and at most one match. */
    feedback: 2,
  },
  /** Explicit feedback has no graded score: useful is the top of the scale, not useful the bottom. */
  feedbackScore: 3,
  /** Tag-subset auto-pin (the seed's "Auto-Pin Algorithm"). */
  tagSubset: {
    /** Matches summed over every environment whose tags contain the subset. 15 is the seed's value: enough sessions
     * across projects that the engram is no fluke, few enough to be reached within weeks of ordinary use. */
    threshold: 15,
    /** Subsets of up to 4 tags are searched (the seed's bound against combinatorial growth). Because a subset's sum
     * can never exceed that of any of its tags, the minimal subset always has one tag in practice (docs/LEARNING.md). */
    maxSize: 4,
  },
  /** Relevance auto-pin and auto-unpin, over all of an engram's tag-relevance rows. */
  relevance: {
    /** Pin when the evidence-weighted average is above 0.6: useful in most places it was judged (one +3 judgement
     * gives 0.3, so this takes several agreeing ones). */
    pinAbove: 0.6,
    /** …after at least 5 evaluations (the most any one tag has seen; never one judgement × its tag count) … */
    minEvaluations: 5,
    /** …of which at least 80 % were positive: a high average built on a few loud judgements over many poor ones is
     * not "useful everywhere". */
    minPositiveShare: 0.8,
    /** Unpin an engram the system pinned when its average falls below 0.2 (with the same evidence floor): the gap
     * to 0.6 is hysteresis, so an engram near one threshold does not flip on every session. */
    unpinBelow: 0.2,
  },
} as const;

/** Where a judgement came from; it decides the EMA weight. */
export type JudgementSource = keyof typeof LEARNING.weights;
