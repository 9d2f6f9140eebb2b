import { EngramError, type EngramStats } from '../../core/index.js';
import { LEARNING } from './constants.js';

/** One engram's learned relevance in one tag, as stored. */
export type TagRelevance = EngramStats['tag_relevance'][number];

/** A judgement's score (−3..3) as the EMA reads it: −1..1. */
export function rawScore(score: number): number {
  return score / LEARNING.scoreMax;
}

/** Refuses a score outside −3..3 (or not a number): the caller computed something wrong. */
export function checkScore(score: number): number {
  if (!Number.isFinite(score) || Math.abs(score) > LEARNING.scoreMax) {
    const range = `-${LEARNING.scoreMax} to ${LEARNING.scoreMax}`;
    throw new EngramError('INVALID_INPUT', `a judgement score runs from ${range}, got ${score}`);
  }
  return score;
}

const round = (value: number): number => {
  const factor = 10 ** LEARNING.ema.decimals;
  return Math.round(value * factor) / factor || 0; // `|| 0` turns -0 into 0
};

/**
 * The next relevance score: old × (1 − α) + raw × α × weight, clamped to ±3 and rounded to 6 decimals. A tag without
 * a row starts from 0, which gives the same value as engrammar's new-row formula (raw × α × weight) — and no seeding:
 * a score is built only from judgements.
 */
export function nextScore(old: number, score: number, weight: number): number {
  const { alpha, clamp } = LEARNING.ema;
  const next = old * (1 - alpha) + rawScore(checkScore(score)) * alpha * weight;
  return round(Math.max(-clamp, Math.min(clamp, next)));
}

/**
 * A tag's row after one judgement: the EMA moves and the evidence grows by one (positive for a score above 0,
 * negative below). A score of 0 ("cannot tell") is no evidence and changes nothing: callers skip it.
 */
export function nextRelevance(
  row: TagRelevance | undefined,
  tag: string,
  score: number,
  weight: number,
  at: string,
): TagRelevance {
  return {
    tag,
    score: nextScore(row?.score ?? 0, score, weight),
    positive_evals: (row?.positive_evals ?? 0) + (score > 0 ? 1 : 0),
    negative_evals: (row?.negative_evals ?? 0) + (score < 0 ? 1 : 0),
    // The later instant: judgements applied out of order must not move the date back.
    last_evaluated_at: row?.last_evaluated_at && row.last_evaluated_at > at ? row.last_evaluated_at : at,
  };
}
