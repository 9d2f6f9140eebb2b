import type { Agent, Store } from '../../core/index.js';
import { ensureSession } from '../capture/activity.js';
import type { SessionContext } from '../capture/sessions.js';
import { freshness, governancePolicy, type GovernancePolicy } from '../governance/index.js';
import type { SearchEnvironment, SearchMode, SearchRequest, SearchResponse } from '../recall/index.js';
// The single module, not the knowledge barrel: hooks load the knowledge docs' reader only where a repository has them.
import { briefingForSession } from '../knowledge/session-start.js';
import { chooseHits, withoutGenericWords } from './choose.js';
import { BLOCK_CLOSE, BLOCK_OPEN, renderBlock } from './render.js';
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
  /**
   * Runs what was shown's recording after the answer is sent (the warm server: the hook is not kept waiting for the
   * write), told whether the answer reached the hook (`delivered` false: its hook had stopped waiting, so nothing was
   * shown); without it the recording runs before returning (a hook answering in-process).
   */
  defer?(work: (delivered: boolean) => void): void;
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

/**
 * What was chosen for a session but not written yet (the warm server records after answering): two hooks of one
 * session answered together — parallel tool calls — must not both inject the same engram, nor both spend the same
 * budget. Ids and characters leave here when their recording has run (or failed).
 */
const unrecorded = new Map<string, Map<number, number>>();

/** Engrams shown in this session's context, counting those chosen but not recorded yet. */
function shownSoFar(store: Store, sessionId: string): Set<number> {
  const shown = store.activity.shownInContext(sessionId);
  for (const id of unrecorded.get(sessionId)?.keys() ?? []) shown.add(id);
  return shown;
}

/** Records what was shown (and the session's environment) in one transaction. */
function recordInjection(
  deps: InjectDeps,
  session: SessionContext,
  env: HookEnvironment,
  event: string,
  query: string | null,
  items: ReadonlyArray<{ id: number; chars: number; score: number | null; ranks?: { bm25: number | null; vector: number | null } }>,
): void {
  const store = deps.store();
  const at = deps.now().toISOString();
  const write = (): void => store.write(() => {
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
        bm25_rank: item.ranks?.bm25 ?? null,
        vector_rank: item.ranks?.vector ?? null,
      })),
    );
  });
  if (!deps.defer) return write();
  const pending = unrecorded.get(session.sessionId) ?? new Map<number, number>();
  unrecorded.set(session.sessionId, pending);
  for (const item of items) pending.set(item.id, (pending.get(item.id) ?? 0) + item.chars);
  deps.defer((delivered) => {
    try {
      // An answer its hook never printed showed the agent nothing (the hook answers in-process instead, and records that).
      if (delivered) write();
    } finally {
      for (const item of items) {
        const left = (pending.get(item.id) ?? 0) - item.chars;
        if (left > 0) pending.set(item.id, left);
        else pending.delete(item.id);
      }
      if (pending.size === 0 && unrecorded.get(session.sessionId) === pending) unrecorded.delete(session.sessionId);
    }
  });
}

/** The budget left in this session's context for one more block. */
function budgetLeft(store: Store, sessionId: string, limits: InjectLimits, eventBudget: number): number {
  let pendingChars = 0;
  for (const chars of unrecorded.get(sessionId)?.values() ?? []) pendingChars += chars;
  return Math.min(eventBudget, limits.sessionChars - store.activity.injectedChars(sessionId) - pendingChars);
}

/**
 * The repository's L0 knowledge briefing as a block of at most `budget` characters, cut at whole lines, or null
 * (no briefing, or the agent already loads the file it is in — services/knowledge).
 */
async function briefingBlock(env: HookEnvironment, budget: number): Promise<string | null> {
  const briefing = env.cwd ? await briefingForSession(env.cwd, env.agent) : null;
  if (!briefing) return null;
  const head = `${BLOCK_OPEN} Project knowledge briefing (from ${briefing.file}; full entries: engram docs show <id>)`;
  const lines = briefing.text.replace(/\[\/?ENGRAM\]/gi, '').split('\n');
  const kept: string[] = [];
  let used = head.length + BLOCK_CLOSE.length + 2 + 80;
  for (const line of lines) {
    if (used + line.length + 1 > budget) break;
    kept.push(line);
    used += line.length + 1;
  }
  if (kept.length === 0) return null;
  if (kept.length < lines.length) kept.push(`(${lines.length - kept.length} more lines of the briefing in ${briefing.file})`);
  return [head, ...kept, BLOCK_CLOSE].join('\n');
}

/**
 * SessionStart: the repository's knowledge briefing (when it has one the agent does not load by itself), then pinned
 * engrams that hold here plus the project's most useful ones, all within the SessionStart budget: the briefing takes
 * at most half of it. After a compaction the agent's context is empty again, so a new context epoch starts and
 * everything may be shown again.
 */
export async function injectAtSessionStart(deps: InjectDeps, session: SessionContext, env: HookEnvironment, source: string | null): Promise<Injection | null> {
  const store = deps.store();
  if (source === 'compact' || source === 'clear') {
    const at = deps.now().toISOString();
    store.write(() => {
      ensureSession(store, session, at);
      store.activity.nextContextEpoch(session.sessionId);
    });
  }
  const budget = budgetLeft(store, session.sessionId, deps.limits, deps.limits.sessionStartChars);
  // A resumed session still has the briefing it started with; a new, cleared or compacted context does not.
  const briefing = source === 'resume' ? null : await briefingBlock(env, Math.floor(budget / 2));
  const picks = sessionStartPicks(store, env, freshness(deps.governance ?? governancePolicy(), deps.now()));
  const shown = shownSoFar(store, session.sessionId);
  const fresh = picks.filter((pick) => !shown.has(pick.engram.id));
  const where = env.repo ? ` and for ${env.repo}` : '';
  const block =
    fresh.length === 0
      ? null
      : renderBlock(
          fresh.map((pick) => pick.engram),
          { heading: `Memories from earlier sessions: pinned${where}`, budget: budget - (briefing ? briefing.length + 1 : 0) },
        );
  if (!block) return briefing ? { text: briefing, ids: [], query: null, dropped: [] } : null;
  recordInjection(deps, session, env, 'SessionStart', null, block.items.map((item) => ({ ...item, score: null })));
  return { text: briefing ? `${briefing}\n${block.text}` : block.text, ids: block.items.map((item) => item.id), query: null, dropped: block.dropped };
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
    alreadyShown: shownSoFar(store, session.sessionId),
    embedderKind: response.model ? deps.embedderKind() : null,
    keywordMargin: request.event !== 'UserPromptSubmit' && response.mode === 'bm25',
    promptWinner: request.event === 'UserPromptSubmit',
    hybrid: response.mode === 'hybrid',
  });
  if (chosen.length === 0) return null;
  const block = renderBlock(
    chosen.map((choice) => choice.hit.engram),
    { heading: request.heading, budget },
  );
  if (!block) return null;
  const hits = new Map(chosen.map((choice) => [choice.hit.id, choice.hit]));
  recordInjection(
    deps,
    session,
    env,
    request.event,
    request.query,
    block.items.map((item) => {
      const hit = hits.get(item.id);
      return { ...item, score: hit?.score ?? null, ...(hit ? { ranks: { bm25: hit.ranks.bm25, vector: hit.ranks.vector } } : {}) };
    }),
  );
  return { text: block.text, ids: block.items.map((item) => item.id), query: request.query, dropped: block.dropped };
}
