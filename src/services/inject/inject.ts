import type { Agent, Store } from '../../core/index.js';
import { ensureSession } from '../capture/activity.js';
import type { SessionContext } from '../capture/sessions.js';
import { freshness, governancePolicy, type GovernancePolicy } from '../governance/index.js';
import type { SearchEnvironment, SearchMode, SearchRequest, SearchResponse } from '../recall/index.js';
import { chooseHits, withoutGenericWords } from './choose.js';
import { renderBlock } from './render.js';
import { sessionStartPicks } from './session-start.js';
import { INJECT } from './tuning.js';

/** Character budgets (config.json `hooks`). */
export interface InjectLimits {
  sessionStartChars: number;
  promptChars: number;
  toolChars: number;
  /** Everything injected into one session's context (until a compaction empties it). */
  sessionChars: number;
}

/** What injection needs from whoever runs it: the warm server or a hook process on its own. */
export interface InjectDeps {
  store(): Store;
  search(request: SearchRequest): Promise<SearchResponse>;
  /** The embedder kind behind the vector list (`transformers`, `use-lite`, …), or null for BM25 only. */
  embedderKind(): string | null;
  mode: SearchMode;
  /** `server` or `in-process`, recorded with what was shown. */
  answeredBy: string;
  limits: InjectLimits;
  now(): Date;
  /** config.json `governance`: each kind's decay, for leaving stale engrams out. @default the built-in policy */
  governance?: GovernancePolicy;
}

/** The environment a hook runs in, as injection needs it. */
export interface HookEnvironment extends SearchEnvironment {
  tags: readonly string[];
  repo?: string;
  agent: Agent;
}

/** What a hook injects, and why. */
export interface Injection {
  text: string;
  ids: number[];
  query: string | null;
  /** Ids left out because the character budget was spent. */
  dropped: number[];
}

/** Records what was shown (and the session's environment) in one transaction. */
function recordInjection(
  deps: InjectDeps,
  session: SessionContext,
  env: HookEnvironment,
  event: string,
  query: string | null,
  items: ReadonlyArray<{ id: number; chars: number; score: number | null }>,
): void {
  const store = deps.store();
  const at = deps.now().toISOString();
  store.write(() => {
    ensureSession(store, session, at);
    store.activity.audit({ session_id: session.sessionId, env_tags: env.tags, repo: env.repo ?? null, transcript_path: session.transcriptPath, at });
    store.activity.recordShown(
      items.map((item, index) => ({
        session_id: session.sessionId,
        engram_id: item.id,
        event,
        query,
        score: item.score,
        rank: index + 1,
        chars: item.chars,
        answered_by: deps.answeredBy,
        at,
      })),
    );
  });
}

/** The budget left in this session's context for one more block. */
function budgetLeft(store: Store, sessionId: string, limits: InjectLimits, eventBudget: number): number {
  return Math.min(eventBudget, limits.sessionChars - store.activity.injectedChars(sessionId));
}

/**
 * SessionStart: pinned engrams that hold here plus the project's most useful ones, in one block. After a compaction
 * the agent's context is empty again, so a new context epoch starts and everything may be shown again.
 */
export function injectAtSessionStart(deps: InjectDeps, session: SessionContext, env: HookEnvironment, source: string | null): Injection | null {
  const store = deps.store();
  if (source === 'compact' || source === 'clear') {
    const at = deps.now().toISOString();
    store.write(() => {
      ensureSession(store, session, at);
      store.activity.nextContextEpoch(session.sessionId);
    });
  }
  const picks = sessionStartPicks(store, env, freshness(deps.governance ?? governancePolicy(), deps.now()));
  const shown = store.activity.shownInContext(session.sessionId);
  const fresh = picks.filter((pick) => !shown.has(pick.engram.id));
  if (fresh.length === 0) return null;
  const where = env.repo ? ` and for ${env.repo}` : '';
  const block = renderBlock(
    fresh.map((pick) => pick.engram),
    { heading: `Memories from earlier sessions: pinned${where}`, budget: budgetLeft(store, session.sessionId, deps.limits, deps.limits.sessionStartChars) },
  );
  if (!block) return null;
  recordInjection(deps, session, env, 'SessionStart', null, block.items.map((item) => ({ ...item, score: null })));
  return { text: block.text, ids: block.items.map((item) => item.id), query: null, dropped: block.dropped };
}

/**
 * Searches with `query` and injects at most `max` relevant engrams not yet shown in this context. Abstains (null)
 * when the query has no topic, nothing is good enough, or the session's budget is spent.
 */
export async function injectForQuery(
  deps: InjectDeps,
  session: SessionContext,
  env: HookEnvironment,
  request: {
    event: string;
    query: string;
    max: number;
    budget: number;
    heading: string;
    mode?: SearchMode;
    /** Search without tool and file-type words (tool calls: paths and commands). */
    dropGenericWords?: boolean;
  },
): Promise<Injection | null> {
  if (request.query.trim() === '') return null;
  const store = deps.store();
  const budget = budgetLeft(store, session.sessionId, deps.limits, request.budget);
  if (budget < 200) return null;
  const searched = request.dropGenericWords ? withoutGenericWords(request.query) : request.query;
  if (searched.trim() === '') return null;
  const response = await deps.search({
    query: searched,
    mode: request.mode ?? deps.mode,
    topK: INJECT.candidates,
    environment: env,
    scope: { project: env.repo ?? '', includePersonal: true },
    // Only what may be injected: active, fresh or pinned, code not gone (services/governance `injectable`).
    statuses: ['active'],
    injection: freshness(deps.governance ?? governancePolicy(), deps.now()),
  });
  if (response.abstained || response.results.length === 0) return null;
  const chosen = chooseHits(response.results, request.query, {
    max: request.max,
    alreadyShown: store.activity.shownInContext(session.sessionId),
    embedderKind: response.model ? deps.embedderKind() : null,
  });
  if (chosen.length === 0) return null;
  const block = renderBlock(
    chosen.map((choice) => choice.hit.engram),
    { heading: request.heading, budget },
  );
  if (!block) return null;
  const scores = new Map(chosen.map((choice) => [choice.hit.id, choice.hit.score]));
  recordInjection(deps, session, env, request.event, request.query, block.items.map((item) => ({ ...item, score: scores.get(item.id) ?? null })));
  return { text: block.text, ids: block.items.map((item) => item.id), query: request.query, dropped: block.dropped };
}
