import type { Engram, Store } from '../../core/index.js';
import { freshness, governancePolicy, type Freshness } from '../governance/index.js';
import { learnedRelevance, passesGates, type SearchEnvironment } from '../recall/index.js';
import { INJECT } from './tuning.js';

/** Why an engram is in the SessionStart block. */
export interface SessionStartPick {
  engram: Engram;
  why: 'pinned' | 'project';
}

/**
 * What a session starts with: pinned engrams (proved useful everywhere) whose structural prerequisites hold here and
 * whose learned relevance in this environment's tags is not clearly negative, then the project's most useful
 * engrams. Both lists pass the same gates as search; personal engrams of other projects never appear.
 */
export function sessionStartPicks(store: Store, env: SearchEnvironment, fresh: Freshness = freshness(governancePolicy(), new Date())): SessionStartPick[] {
  const scope = { project: env.repo ?? '', includePersonal: true };
  // Active only, and injectable: stale engrams only when pinned, never one whose code is gone.
  const visible = (engram: Engram): boolean => passesGates(engram, { scope, statuses: ['active'], injection: fresh }, env);
  // Read a few more than are shown: gates drop some (another OS, a missing MCP server).
  // A pin the system made for a tag subset (services/learn) holds where those tags are: its tags are a condition.
  const tagsHold = (engram: Engram): boolean =>
    !engram.auto_pinned || !env.tags || (engram.prerequisites?.tags ?? []).every((tag) => env.tags?.includes(tag));
  const pinned = store.engrams.mostUseful({ pinned: true }, 200).filter((engram) => visible(engram) && tagsHold(engram));
  const project = env.repo
    ? store.engrams.mostUseful({ project: env.repo, pinned: false }, INJECT.sessionProjectMax * 4).filter(visible).slice(0, INJECT.sessionProjectMax)
    : [];
  const candidates = [...pinned, ...project];
  const learned = learnedRelevance(store, candidates.map((engram) => engram.id), env.tags ?? []);
  return candidates
    .filter((engram) => !learned.get(engram.id)?.unwanted)
    .map((engram) => ({ engram, why: engram.pinned ? 'pinned' : 'project' }));
}
