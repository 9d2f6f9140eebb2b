import type { Engram, Store } from '../../core/index.js';
import { learnedRelevance, passesGates, type SearchEnvironment } from '../recall/index.js';
import { INJECT } from './tuning.js';

/** Why an engram is in the SessionStart block. */
export interface SessionStartPick {
  engram: Engram;
  why: 'pinned' | 'project';
}

/** Usefulness order: matched often, matched recently, then newest (an import stamps a batch alike: higher id). */
const byUsefulness = (a: Engram, b: Engram): number =>
  b.times_matched - a.times_matched ||
  (b.last_matched_at ?? '').localeCompare(a.last_matched_at ?? '') ||
  b.updated_at.localeCompare(a.updated_at) ||
  b.id - a.id;

/**
 * What a session starts with: pinned engrams (proved useful everywhere) whose structural prerequisites hold here and
 * whose learned relevance in this environment's tags is not clearly negative, then the project's most useful
 * engrams. Both lists pass the same gates as search; personal engrams of other projects never appear.
 */
export function sessionStartPicks(store: Store, env: SearchEnvironment): SessionStartPick[] {
  const scope = { project: env.repo ?? '', includePersonal: true };
  const visible = (engram: Engram): boolean => passesGates(engram, { scope }, env);
  const pinned = store.engrams
    .list({ pinned: true, limit: 200 })
    .engrams.filter(visible)
    .sort(byUsefulness);
  const project = env.repo
    ? store.engrams
        .list({ project: env.repo, pinned: false, limit: 500 })
        .engrams.filter(visible)
        .sort(byUsefulness)
        .slice(0, INJECT.sessionProjectMax)
    : [];
  const candidates = [...pinned, ...project];
  const learned = learnedRelevance(store, candidates.map((engram) => engram.id), env.tags ?? []);
  return candidates
    .filter((engram) => !learned.get(engram.id)?.unwanted)
    .map((engram) => ({ engram, why: engram.pinned ? 'pinned' : 'project' }));
}
