import { createHash } from 'node:crypto';
import type { KnowledgeConfig } from './config.js';
import type { DocSet } from './docset.js';
import { checkPointers, type ConceptLiveness } from './pointers.js';
import type { BufferItem, KnowledgeState, NewItem, ServerState } from './state.js';
import { trackStatuses } from './state.js';

/**
 * Drift (seed 002, "Scheduling Priority"): orphaned concepts (a `Code:` pointer the repository no longer has),
 * contested claims left unresolved, unverified claims gone stale, and requests people keep repeating across sessions
 * (a workflow waiting to be written down). Drift becomes buffer items that go first into the next chunk; a count over
 * its threshold triggers a dispatch on its own.
 */

/** What a drift scan found. */
export interface DriftReport {
  orphans: ConceptLiveness[];
  contested: Array<{ id: string; name: string; since: string; days: number }>;
  stale: Array<{ id: string; name: string; since: string; days: number }>;
  workflows: Array<{ key: string; example: string; sessions: number }>;
  /** Which thresholds are crossed (`orphans`, `contested`, `stale`, `workflows`). */
  triggered: string[];
}

const DAY = 86_400_000;
const STOP = new Set('the and for you are this that with have from not but can all any was were will would should could into your our out please just then than them they what when where which who how its it\'s also use using make sure let run'.split(' '));

/** The words of a request that say what it asks (lower case, 3+ letters, no filler). */
const words = (text: string): Set<string> => new Set((text.toLowerCase().match(/[a-z][a-z0-9_-]{2,}/g) ?? []).filter((word) => !STOP.has(word)));

function jaccard(a: Set<string>, b: Set<string>): number {
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return shared / (a.size + b.size - shared || 1);
}

/**
 * Requests repeated in more than `threshold` distinct sessions (seed: "Workflow repetitions detected > 3
 * instances"): prompts with at least four content words, grouped greedily when their word sets overlap by half.
 */
export function repeatedRequests(items: readonly BufferItem[], threshold: number): DriftReport['workflows'] {
  const clusters: Array<{ words: Set<string>; example: string; sessions: Set<string> }> = [];
  let seen = 0;
  for (const item of items) {
    if (item.source !== 'session' || !Array.isArray(item.detail.prompts)) continue;
    for (const prompt of item.detail.prompts as string[]) {
      if (++seen > 5_000) break;
      const set = words(prompt);
      if (set.size < 4) continue;
      const home = clusters.find((cluster) => jaccard(cluster.words, set) >= 0.5);
      if (home) home.sessions.add(item.path ?? item.ref);
      else clusters.push({ words: set, example: prompt.slice(0, 200), sessions: new Set([item.path ?? item.ref]) });
    }
  }
  return clusters
    .filter((cluster) => cluster.sessions.size > threshold)
    .map((cluster) => ({
      key: createHash('sha256').update([...cluster.words].sort().join(' ')).digest('hex').slice(0, 16),
      example: cluster.example,
      sessions: cluster.sessions.size,
    }));
}

/** Scans the docs and the recent sessions for drift. Updates the claims' status history as a side effect. */
export function scanDrift(
  root: string,
  config: KnowledgeConfig,
  set: DocSet,
  state: KnowledgeState,
  recentSessions: readonly BufferItem[],
  now: Date,
): DriftReport {
  const orphans = set.docs.concepts ? checkPointers(root, config, set.docs.concepts).filter((concept) => concept.orphan) : [];
  const claims = (set.docs.epistemic?.entries ?? []).filter((entry) => entry.correction === null);
  const history = trackStatuses(state, new Map(claims.map((entry) => [entry.id, entry.statusKey])), now);
  const aged = (status: string, days: number) =>
    claims
      .filter((entry) => entry.statusKey === status)
      .map((entry) => {
        const since = history.get(entry.id)?.since ?? now.toISOString();
        return { id: entry.id, name: entry.name, since, days: Math.floor((now.getTime() - Date.parse(since)) / DAY) };
      })
      .filter((claim) => claim.days > days);
  const contested = aged('CONTESTED', config.thresholds.contested_review_days);
  const stale = aged('UNVERIFIED', config.thresholds.stale_unverified_days);
  const workflows = repeatedRequests(recentSessions, config.thresholds.workflow_repetition);
  const triggered: string[] = [];
  if (orphans.length > config.thresholds.orphan_triage) triggered.push('orphans');
  if (contested.length > config.thresholds.contested_count) triggered.push('contested');
  if (stale.length > config.thresholds.stale_count) triggered.push('stale');
  if (workflows.length > 0) triggered.push('workflows');
  return { orphans, contested, stale, workflows, triggered };
}

/** Drift as buffer items (recomputed on every scan; the chunk shows them first). */
export function driftItems(report: DriftReport, now: Date): NewItem[] {
  const date = now.toISOString();
  return [
    ...report.orphans.map((concept) => {
      const missing = concept.pointers.filter((pointer) => !pointer.found).map((pointer) => `\`${pointer.text}\``);
      const text = missing.length
        ? `${concept.id} ${concept.name}: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not in the repository any more. Update the pointer if the code moved (EVOLVED keeps the id), or mark it DEAD and move it to the graveyard.`
        : `${concept.id} ${concept.name} has no Code: pointer a reader can follow.`;
      return { source: 'drift' as const, ref: `orphan:${concept.id}`, path: null, kind: 'orphan', chars: text.length + 60, date, drift_type: 'orphan' as const, detail: { summary: `orphaned concept ${concept.id}`, text } };
    }),
    ...report.contested.map((claim) => {
      const text = `${claim.id} ${claim.name} has been contested for ${claim.days} days (since ${claim.since.slice(0, 10)}). Resolve it from the evidence (believed or refuted), or say what evidence is missing.`;
      return { source: 'drift' as const, ref: `contested:${claim.id}`, path: null, kind: 'contested', chars: text.length + 60, date, drift_type: 'contested' as const, detail: { summary: `contested claim ${claim.id}`, text } };
    }),
    ...report.stale.map((claim) => {
      const text = `${claim.id} ${claim.name} has been unverified for ${claim.days} days. Look for evidence in the items of this chunk; if there is none, say so in its Evidence chain.`;
      return { source: 'drift' as const, ref: `stale:${claim.id}`, path: null, kind: 'stale', chars: text.length + 60, date, drift_type: 'stale' as const, detail: { summary: `stale claim ${claim.id}`, text } };
    }),
    ...report.workflows.map((workflow) => {
      const text = `People asked for this in ${workflow.sessions} different sessions, e.g. "${workflow.example}". If it is how the team works, write it down as a workflow (a reserved W id), or update the workflow that covers it.`;
      return { source: 'drift' as const, ref: `workflow:${workflow.key}`, path: null, kind: 'workflow', chars: text.length + 60, date, drift_type: 'workflow' as const, detail: { summary: 'repeated request', text } };
    }),
  ];
}

/** Why (or why not) to dispatch now. */
export interface Decision {
  dispatch: boolean;
  reason: 'forced' | 'drift' | 'full' | 'settled' | 'empty' | 'waiting' | 'backoff' | 'held';
  detail?: string;
}

/**
 * The dispatch rule (seed: "buffer full OR drift threshold hit"), plus a settle time so a quiet repository still gets
 * its latest commits folded: dispatch when a drift threshold is crossed, when the new knowledge fills the chunk
 * budget, or when nothing new has arrived for `dispatch.settle_seconds`. Nothing while a chunk waits for a person or
 * while backing off after the agent failed.
 */
export function decide(
  pending: readonly BufferItem[],
  drift: Pick<DriftReport, 'triggered'>,
  server: ServerState,
  options: { budget: number; settleSeconds: number; now: Date; force?: boolean; held?: number | null },
): Decision {
  if (options.held) return { dispatch: false, reason: 'held', detail: `chunk ${options.held} waits for engram docs accept|reject` };
  if (!options.force && server.backoff_until && Date.parse(server.backoff_until) > options.now.getTime()) {
    return { dispatch: false, reason: 'backoff', detail: `the fold agent failed; next try after ${server.backoff_until}` };
  }
  const knowledge = pending.filter((item) => item.source !== 'drift' && item.chars > 0);
  if (options.force && pending.some((item) => item.chars > 0)) return { dispatch: true, reason: 'forced' };
  if (drift.triggered.length > 0) return { dispatch: true, reason: 'drift', detail: drift.triggered.join(', ') };
  if (knowledge.length === 0) return { dispatch: false, reason: 'empty' };
  const chars = knowledge.reduce((sum, item) => sum + item.chars, 0);
  if (chars >= options.budget) return { dispatch: true, reason: 'full', detail: `${chars} characters buffered` };
  const newest = Math.max(...knowledge.map((item) => Date.parse(item.added_at)));
  if (options.now.getTime() - newest >= options.settleSeconds * 1000) return { dispatch: true, reason: 'settled' };
  return { dispatch: false, reason: 'waiting', detail: `${chars} characters buffered; settles ${Math.ceil(options.settleSeconds - (options.now.getTime() - newest) / 1000)} s after the last change` };
}
