import type { EngramStats, RelevanceCause, Store } from '../../core/index.js';
import { freshness, staleAfter, type GovernancePolicy } from '../governance/index.js';
import { conflictsOf, type ConflictView, type HistoryStep } from '../review/index.js';
import { whyEngram, type WhyReport } from './why.js';

/** One move of a tag's relevance, with the judgement that caused it (when it is still stored). */
export interface RelevancePoint {
  at: string;
  score: number;
  score_before: number | null;
  cause: RelevanceCause;
  /** The judgement's own score (−3…3) and its session. */
  judgement_score: number | null;
  session_id: string | null;
  /** The judgement's quote or reason, and who judged (a model, `person`, `agent`). */
  evidence: string | null;
  judged_by: string | null;
}

/** A tag's relevance over time: its current value and its moves, oldest first. */
export interface RelevanceSeries {
  tag: string;
  current: number | null;
  points: RelevancePoint[];
}

/** One pin or unpin of an engram: by whom (a person, the agent, or Engram itself: `system`), when and why. */
export interface PinStep {
  at: string;
  pinned: boolean;
  /** Pinned by the system (auto-pin), not by a person. */
  auto: boolean;
  actor: string;
  via: string;
  op: string;
  reason: string | null;
  token: string;
  undone_by: string | null;
}

/** Everything known about one engram: its provenance and history (`engram why`), learning state, conflicts, freshness. */
export interface EngramDetail extends WhyReport {
  /** Matches per repository and tag set, and learned relevance per tag (the `engram show` statistics). */
  stats: EngramStats | null;
  /** Learned relevance per tag over time (schema 14's history), for the viewer's charts. */
  relevance_history: RelevanceSeries[];
  /** Every change of its pin, oldest first, from the audit log. */
  pin_history: PinStep[];
  conflicts: ConflictView[];
  /** When it turns (or turned) stale under the policy; null when its kind never does or it is gone. */
  stale_after: string | null;
  stale: boolean;
}

/** Moves of each tag kept for a chart: a small chart shows no more than this many steps. */
export const RELEVANCE_POINTS_PER_TAG = 200;

/** The pin changes among an engram's history steps. */
export function pinHistory(steps: readonly HistoryStep[]): PinStep[] {
  return steps.flatMap((step): PinStep[] => {
    const pinned = step.fields.pinned;
    if (!pinned) return [];
    const auto = step.fields.auto_pinned?.after ?? (step.op === 'auto-pin');
    return [{ at: step.at, pinned: Boolean(pinned.after), auto: Boolean(auto) && Boolean(pinned.after), actor: step.actor, via: step.via, op: step.op, reason: step.reason, token: step.token, undone_by: step.undone_by }];
  });
}

/** An engram's relevance per tag over time, with each move's judgement. */
export function relevanceHistory(store: Store, engramId: number, stats: EngramStats | null): RelevanceSeries[] {
  return store.read(() => {
    const rows = store.stats.relevanceHistory(engramId, RELEVANCE_POINTS_PER_TAG);
    const ids = [...new Set(rows.map((row) => row.judgement_id).filter((id): id is number => id !== null))];
    const judgements = new Map(
      (ids.length
        ? (store.db.prepare('SELECT id, evidence, judged_by FROM engram_judgements WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids)) as Array<{ id: number; evidence: string | null; judged_by: string }>)
        : []
      ).map((row) => [row.id, row]),
    );
    const series = new Map<string, RelevanceSeries>();
    for (const row of stats?.tag_relevance ?? []) series.set(row.tag, { tag: row.tag, current: row.score, points: [] });
    for (const row of rows) {
      let entry = series.get(row.tag);
      if (!entry) series.set(row.tag, (entry = { tag: row.tag, current: null, points: [] }));
      const judgement = row.judgement_id === null ? undefined : judgements.get(row.judgement_id);
      entry.points.push({
        at: row.at,
        score: row.score,
        score_before: row.score_before,
        cause: row.cause,
        judgement_score: row.judgement_score,
        session_id: row.session_id,
        evidence: judgement?.evidence ?? null,
        judged_by: judgement?.judged_by ?? null,
      });
    }
    return [...series.values()].sort((a, b) => a.tag.localeCompare(b.tag));
  });
}

/** One engram for a person to inspect (the viewer's detail pane; `engram why` plus `engram show --stats`). */
export function engramDetail(store: Store, id: number, options: { home: string; policy: GovernancePolicy; now: Date }): EngramDetail {
  const why = whyEngram(store, id, { home: options.home });
  const engram = why.engram;
  const after = engram ? staleAfter(engram, freshness(options.policy, options.now)) : null;
  const stats = engram ? store.read(() => store.stats.get(engram.id)) : null;
  return {
    ...why,
    stats,
    relevance_history: engram ? relevanceHistory(store, engram.id, stats) : [],
    pin_history: pinHistory(why.history),
    conflicts: conflictsOf(store, why.id),
    stale_after: after ? after.toISOString() : null,
    stale: after !== null && after.getTime() <= options.now.getTime(),
  };
}
