import type { EngramStats, Store } from '../../core/index.js';
import { freshness, staleAfter, type GovernancePolicy } from '../governance/index.js';
import { conflictsOf, type ConflictView } from '../review/index.js';
import { whyEngram, type WhyReport } from './why.js';

/** Everything known about one engram: its provenance and history (`engram why`), learning state, conflicts, freshness. */
export interface EngramDetail extends WhyReport {
  /** Matches per repository and tag set, and learned relevance per tag (the `engram show` statistics). */
  stats: EngramStats | null;
  conflicts: ConflictView[];
  /** When it turns (or turned) stale under the policy; null when its kind never does or it is gone. */
  stale_after: string | null;
  stale: boolean;
}

/** One engram for a person to inspect (the viewer's detail pane; `engram why` plus `engram show --stats`). */
export function engramDetail(store: Store, id: number, options: { home: string; policy: GovernancePolicy; now: Date }): EngramDetail {
  const why = whyEngram(store, id, { home: options.home });
  const engram = why.engram;
  const after = engram ? staleAfter(engram, freshness(options.policy, options.now)) : null;
  return {
    ...why,
    stats: engram ? store.read(() => store.stats.get(engram.id)) : null,
    conflicts: conflictsOf(store, why.id),
    stale_after: after ? after.toISOString() : null,
    stale: after !== null && after.getTime() <= options.now.getTime(),
  };
}
