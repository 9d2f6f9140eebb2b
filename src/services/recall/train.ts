import { createHash } from 'node:crypto';
import { CANDIDATE_FEATURES, candidateFeatures, HIT_FEATURES, hitFeatures, QUERY_FEATURES, queryFeatures, type CandidateSignals, type QuerySignals } from './features.js';
import { fusionLists, reciprocalRankFusion } from './fusion.js';
import { fitLogistic, type LogisticRow } from './logistic.js';
import { probability, type Logistic, type ModeModels, type RankerMode, type RankerWeights } from './ranker.js';
import { TUNING } from './tuning.js';

/**
 * Fitting ranker-weights.json from labelled searches (bench/train-ranker.mjs collects them from the dev splits with
 * the real engine). Everything here is deterministic: the same searches give the same weights.
 */

/** One labelled search: its signals and, per candidate, the share of the query's answers it holds. */
export interface TrainingQuery {
  /** Which set and embedder it came from: every (set, embedder) cell weighs the same in the fit. */
  cell: string;
  set: string;
  mode: RankerMode;
  q: string;
  /** Answers the query has (0: unanswerable). */
  answers: number;
  query: QuerySignals;
  candidates: Array<CandidateSignals & { gain: number }>;
}

/** What training decided and measured. */
export interface TrainingReport {
  weights: RankerWeights;
  /** Per mode and cell: recall@10 and MRR of the mode's ordering, in-sample and cross-validated on dev. */
  retrieval: Array<{ mode: RankerMode; cell: string; n: number; fit: { recall: number; mrr: number }; cv: { recall: number; mrr: number } }>;
  /** Per mode: the cross-validated trade-off of the abstain threshold (worst and mean cell). */
  curves: Record<RankerMode, Array<{ threshold: number; silence: { worst: number; mean: number }; kept: { worst: number; mean: number } }>>;
  /** Per mode: the abstain threshold a learned classifier would need (measured, not shipped: docs/SEARCH.md). */
  thresholds: Record<RankerMode, number>;
  /** Per mode and cell at that threshold (cross-validated). */
  abstain: Array<{ mode: RankerMode; cell: string; silence: number; kept: number }>;
  /** Per mode: how well the hit model separates right from wrong results among the first three (cross-validated
   * area under the ROC curve, in-sample alongside). */
  hits: Record<RankerMode, { auc: { fit: number; cv: number }; results: number }>;
}

export interface TrainingOptions {
  /** L2 penalty of both models. @default 1 */
  l2?: number;
  /** Share of answerable recall@3 the abstain threshold must keep in every cell (cross-validated). @default 0.9 */
  keep?: number;
  /** Cross-validation folds (by the SHA-256 of the query text). @default 5 */
  folds?: number;
}

const K = 10;
const MODES: RankerMode[] = ['hybrid', 'bm25', 'vector'];
const round = (value: number, digits = 4): number => Math.round(value * 10 ** digits) / 10 ** digits;

/** The fold of a query: from its text, so it never moves (the dev/test split uses another byte of the same hash). */
export const foldOf = (q: string, folds: number): number => (createHash('sha256').update(q).digest()[1] as number) % folds;

/** The order a mode returns, as the engine fuses (fusion.ts): hybrid's three lists by reciprocal rank fusion with
 * the tuned weights, a single-signal mode its own list. Indices into `candidates`. */
export function orderFor(mode: RankerMode, candidates: ReadonlyArray<CandidateSignals>): number[] {
  const index = new Map(candidates.map((c, i) => [c.id, i]));
  const by = (pick: (c: CandidateSignals) => number | null, descending = false): number[] =>
    candidates
      .filter((c) => pick(c) !== null)
      .sort((a, b) => (descending ? (pick(b) as number) - (pick(a) as number) : (pick(a) as number) - (pick(b) as number)) || a.id - b.id)
      .map((c) => c.id);
  const ids = { bm25: by((c) => c.bm25Rank), vector: by((c) => c.vectorRank), anchor: by((c) => c.anchor, true) };
  const weights = { bm25: TUNING.weights.bm25, vector: TUNING.weights.vector, anchor: TUNING.anchor.weight };
  return reciprocalRankFusion(fusionLists(mode, ids, weights), TUNING.rrfK, TUNING.pool).map((fused) => index.get(fused.id) as number);
}

/** recall@k (share of the query's answers among the first k) and reciprocal rank of the first answer. */
function judge(query: TrainingQuery, order: readonly number[], k: number): { recall: number; rr: number } {
  let recall = 0;
  let rr = 0;
  order.slice(0, k).forEach((i, position) => {
    const gain = query.candidates[i]!.gain;
    recall += gain;
    if (gain > 0 && rr === 0) rr = 1 / (position + 1);
  });
  return { recall: Math.min(1, recall), rr };
}

/** Each cell weighs the same in total; inside a cell each query the same. */
function cellWeights(queries: readonly TrainingQuery[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const q of queries) counts.set(q.cell, (counts.get(q.cell) ?? 0) + 1);
  return new Map([...counts].map(([cell, n]) => [cell, 100 / n]));
}

function candidateRows(queries: readonly TrainingQuery[]): LogisticRow[] {
  const weight = cellWeights(queries);
  return queries
    .filter((q) => q.answers > 0 && q.candidates.length > 0)
    .flatMap((q) => {
      const features = candidateFeatures(q.candidates);
      const w = (weight.get(q.cell) as number) / q.candidates.length;
      return q.candidates.map((c, i) => ({ x: features[i] as number[], y: c.gain > 0 ? (1 as const) : (0 as const), w }));
    });
}

/** Results of one search the hit model learns from: the first three. */
const HITS = 3;

/** A query's ranking, the abstain classifier's features and label for it, and its first results' hit features. */
function rankQuery(
  mode: RankerMode,
  q: TrainingQuery,
  candidate: Logistic,
): { order: number[]; features: number[]; recall3: number; hits: Array<{ x: number[]; y: 0 | 1 }> } {
  const features = candidateFeatures(q.candidates);
  const probabilities = features.map((x) => probability(candidate, x));
  const order = orderFor(mode, q.candidates);
  const top = order.slice(0, 3).map((i) => ({ probability: probabilities[i] as number, coverage: q.candidates[i]!.coverage }));
  const query = queryFeatures(q.query, top);
  const hits = order.slice(0, HITS).map((i, position) => ({
    x: hitFeatures(features[i] as number[], query, position + 1),
    y: q.candidates[i]!.gain > 0 ? (1 as const) : (0 as const),
  }));
  return { order, features: query, recall3: judge(q, order, 3).recall, hits };
}

/** Area under the ROC curve: the chance a random right result scores above a random wrong one. */
function auc(scored: ReadonlyArray<{ p: number; y: 0 | 1 }>): number {
  const sorted = [...scored].sort((a, b) => a.p - b.p);
  let rankSum = 0;
  let positives = 0;
  let i = 0;
  while (i < sorted.length) {
    let j = i;
    while (j < sorted.length && sorted[j]!.p === sorted[i]!.p) j++;
    const midRank = (i + j + 1) / 2;
    for (let k = i; k < j; k++) if (sorted[k]!.y === 1) {
      rankSum += midRank;
      positives++;
    }
    i = j;
  }
  const negatives = sorted.length - positives;
  return positives === 0 || negatives === 0 ? 0.5 : (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}


/**
 * Fits, per mode, the candidate model (which candidate is an answer) and the hit model (is a returned result right),
 * cross-validated on the same queries. It also measures a learned abstain classifier (do the first three hold an
 * answer) at the highest threshold whose cross-validated kept recall@3 is at least `keep` in every cell; it is
 * reported, not shipped (it did not beat the weak-match rule on test: docs/SEARCH.md).
 */
export function trainRanker(all: readonly TrainingQuery[], options: TrainingOptions = {}): TrainingReport {
  const l2 = options.l2 ?? 1;
  const keep = options.keep ?? 0.9;
  const folds = options.folds ?? 5;
  const modes = {} as Record<RankerMode, ModeModels>;
  const report: TrainingReport = {
    weights: undefined as unknown as RankerWeights,
    retrieval: [],
    curves: { hybrid: [], bm25: [], vector: [] },
    thresholds: { hybrid: 0, bm25: 0, vector: 0 },
    abstain: [],
    hits: { hybrid: { auc: { fit: 0, cv: 0 }, results: 0 }, bm25: { auc: { fit: 0, cv: 0 }, results: 0 }, vector: { auc: { fit: 0, cv: 0 }, results: 0 } },
  };
  const counts: Record<string, number> = {};

  for (const mode of MODES) {
    const queries = all.filter((q) => q.mode === mode);
    counts[mode] = queries.length;
    if (queries.length === 0) {
      modes[mode] = { candidate: { intercept: 0, weights: CANDIDATE_FEATURES.map(() => 0) }, hit: { intercept: 0, weights: HIT_FEATURES.map(() => 0) } };
      continue;
    }
    const weight = cellWeights(queries);
    const fit = (rows: LogisticRow[]): Logistic => {
      const { intercept, weights } = fitLogistic(rows, { l2 });
      return { intercept: round(intercept), weights: weights.map((w) => round(w)) };
    };

    // Cross-validation: each fold's queries ranked and judged by models fitted on the other folds.
    const cvOrder = new Map<TrainingQuery, number[]>();
    const cvProbability = new Map<TrainingQuery, number>();
    const recall3 = new Map<TrainingQuery, number>();
    const cvHits: Array<{ p: number; y: 0 | 1 }> = [];
    const hitRows = (qs: readonly TrainingQuery[], ranked: (q: TrainingQuery) => ReturnType<typeof rankQuery>): LogisticRow[] =>
      qs.flatMap((q) => ranked(q).hits.map((hit) => ({ ...hit, w: (weight.get(q.cell) as number) / HITS })));
    for (let fold = 0; fold < folds; fold++) {
      const train = queries.filter((q) => foldOf(q.q, folds) !== fold);
      const held = queries.filter((q) => foldOf(q.q, folds) === fold);
      const candidate = fit(candidateRows(train));
      const abstain = fit(
        train.map((q) => {
          const ranked = rankQuery(mode, q, candidate);
          return { x: ranked.features, y: ranked.recall3 > 0 ? 1 : 0, w: weight.get(q.cell) as number };
        }),
      );
      const trainRanked = new Map(train.map((q) => [q, rankQuery(mode, q, candidate)]));
      const hit = fit(hitRows(train, (q) => trainRanked.get(q)!));
      for (const q of held) {
        const ranked = rankQuery(mode, q, candidate);
        for (const row of ranked.hits) cvHits.push({ p: probability(hit, row.x), y: row.y });
        cvOrder.set(q, ranked.order);
        cvProbability.set(q, probability(abstain, ranked.features));
        recall3.set(q, ranked.recall3);
      }
    }

    // The models written to ranker-weights.json: fitted on every dev query.
    const candidate = fit(candidateRows(queries));
    const rankedAll = new Map(queries.map((q) => [q, rankQuery(mode, q, candidate)]));
    const hit = fit(hitRows(queries, (q) => rankedAll.get(q)!));
    const fitHits = queries.flatMap((q) => rankedAll.get(q)!.hits.map((row) => ({ p: probability(hit, row.x), y: row.y })));
    report.hits[mode] = { auc: { fit: round(auc(fitHits), 3), cv: round(auc(cvHits), 3) }, results: fitHits.length };

    const cells = [...weight.keys()].sort();
    for (const cell of cells) {
      const answerable = queries.filter((q) => q.cell === cell && q.answers > 0);
      const mean = (pick: (q: TrainingQuery) => number): number => round(answerable.reduce((sum, q) => sum + pick(q), 0) / Math.max(1, answerable.length));
      report.retrieval.push({
        mode,
        cell,
        n: answerable.length,
        fit: { recall: mean((q) => judge(q, rankedAll.get(q)!.order, K).recall), mrr: mean((q) => judge(q, rankedAll.get(q)!.order, K).rr) },
        cv: { recall: mean((q) => judge(q, cvOrder.get(q)!, K).recall), mrr: mean((q) => judge(q, cvOrder.get(q)!, K).rr) },
      });
    }

    // The abstain threshold: the highest whose cross-validated kept recall@3 holds `keep` in every cell.
    const at = (threshold: number) =>
      cells.map((cell) => {
        const inCell = queries.filter((q) => q.cell === cell);
        const none = inCell.filter((q) => q.answers === 0);
        const answerable = inCell.filter((q) => q.answers > 0);
        const total = answerable.reduce((sum, q) => sum + (recall3.get(q) as number), 0);
        const kept = answerable.filter((q) => (cvProbability.get(q) as number) >= threshold).reduce((sum, q) => sum + (recall3.get(q) as number), 0);
        return {
          cell,
          silence: none.length === 0 ? 1 : none.filter((q) => (cvProbability.get(q) as number) < threshold).length / none.length,
          kept: total === 0 ? 1 : kept / total,
        };
      });
    let threshold = 0;
    for (let step = 0; step <= 100; step++) {
      const t = step / 100;
      const points = at(t);
      const worst = (pick: (p: { silence: number; kept: number }) => number): number => round(Math.min(...points.map(pick)), 3);
      const mean = (pick: (p: { silence: number; kept: number }) => number): number => round(points.reduce((s, p) => s + pick(p), 0) / points.length, 3);
      report.curves[mode].push({ threshold: t, silence: { worst: worst((p) => p.silence), mean: mean((p) => p.silence) }, kept: { worst: worst((p) => p.kept), mean: mean((p) => p.kept) } });
      if (Math.min(...points.map((p) => p.kept)) >= keep) threshold = t;
    }
    for (const point of at(threshold)) report.abstain.push({ mode, cell: point.cell, silence: round(point.silence, 3), kept: round(point.kept, 3) });
    modes[mode] = { candidate, hit };
    report.thresholds[mode] = threshold;
  }

  report.weights = {
    format: 1,
    candidateFeatures: [...CANDIDATE_FEATURES],
    queryFeatures: [...QUERY_FEATURES],
    hitFeatures: [...HIT_FEATURES],
    trained: { split: 'dev', queries: counts, l2, keep, folds, cells: [...new Set(all.map((q) => q.cell))].sort() },
    modes,
  };
  return report;
}
