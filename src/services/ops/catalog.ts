/**
 * The operations a caller outside the process may ask for (the MCP server today, the HTTP API later): each a name,
 * a zod schema for its parameters and one service call. The server runs them with its warm store and search engine
 * (`{op:"call"}` on its socket); a surface whose server cannot start runs them itself with the same code. Every write
 * is audited as `OpContext.actor` — set by the process that runs the operation, never by the request — and an agent's
 * new engram gets the status its tier and the review policy give it (pending by default). Nothing here promotes or
 * approves anything: the agent's surfaces import this catalog, and the human gate (services/gate) is unreachable
 * from it (test/services/gate/boundary.test.ts).
 * @module
 */
import * as z from 'zod';
import {
  EngramError,
  formatIssues,
  normalizeCategory,
  normalizeTags,
  type Engram,
  type Settings,
  type Store,
} from '../../core/index.js';
import { recallContextText } from '../context/index.js';
import { governancePolicy, textIndexReady, type Actor } from '../governance/index.js';
import { storeStatus } from '../health/index.js';
import type { HookEnvironment } from '../inject/index.js';
import { recordFeedback } from '../learn/index.js';
import { readDocEntry } from '../knowledge/index.js';
import { addEngram, deprecateEngram, learnedByOf, listEngrams, pinEngram, updateEngram } from '../memory/index.js';
import {
  capturePassive,
  ContextSchema,
  DeleteObservationSchema,
  deleteObservation,
  endSession,
  EndSessionSchema,
  formatContext,
  getObservation,
  mergeProjects,
  MergeProjectsSchema,
  migrateProject,
  MigrateProjectSchema,
  observationStats,
  PassiveCaptureSchema,
  recentObservations,
  RecentObservationsSchema,
  recentPrompts,
  recentSessions,
  savePrompt,
  SavePromptSchema,
  saveObservation,
  SaveObservationSchema,
  saveSessionSummary,
  SessionSummarySchema,
  searchObservations,
  SearchObservationsSchema,
  searchPrompts,
  startSession,
  StartSessionSchema,
  suggestTopicKey,
  timeline,
  TimelineSchema,
  updateObservation,
  UpdateObservationSchema,
  visibleTo,
  type WriteContext,
} from '../observations/index.js';
import { exportGoData, GoExportInSchema, importGoData } from '../goengram/index.js';
import { whyEngram } from '../provenance/index.js';
import type { SearchMode, SearchRequest, SearchResponse } from '../recall/index.js';
import { explainInFolder } from '../tape/index.js';
import type { Caller } from './caller.js';

/** What an operation runs with: the warm server's parts, or a surface's own when it answers in-process. */
export interface OpContext {
  store: Store;
  settings: Settings;
  caller: Caller;
  /**
   * Who the operation acts for: every write is audited as this actor and a new engram is learned by it. Fixed by the
   * process that runs the operation from how the request reached it — the warm server's socket and the MCP process's
   * own fallback: the agent through MCP (`MCP_AGENT`) — never read from the request.
   */
  actor: Actor;
  /** The search engine of this process. */
  search(request: SearchRequest): Promise<SearchResponse>;
  /** `hybrid` in the server once its model is loaded, `bm25` before that and in-process. */
  searchMode: SearchMode;
  /** The embedding model searches use, or null. */
  model: string | null;
  /** Where the caller works: OS, repository, MCP servers, tags (cached per folder). */
  environment(cwd: string, agent: Caller['agent']): HookEnvironment;
  now(): Date;
}

/** One operation. `local`: always run in the caller's process (explain reads tape files, not the warm index). */
export interface Operation<I = unknown, O = unknown> {
  input: z.ZodType<I>;
  /** Writes to the store: a call whose answer was lost may have been applied, so it is never retried elsewhere. */
  writes: boolean;
  local?: boolean;
  run(context: OpContext, input: I): O | Promise<O>;
}

const op = <I, O>(definition: Operation<I, O>): Operation<I, O> => definition;

const writeContext = (context: OpContext): WriteContext => ({
  actor: context.actor,
  policy: governancePolicy(context.settings.config),
  defaultProject: context.caller.project,
  directory: context.caller.cwd || null,
  now: () => context.now(),
});

/** The actor, review policy and clock of services/memory's audited writes. */
const changeOptions = (context: OpContext) => ({
  actor: context.actor,
  policy: governancePolicy(context.settings.config),
  now: () => context.now(),
});

/** What the caller's reads show: active engrams, and the pending ones it learned itself (the agent's own saves). */
const visible = (context: OpContext) => visibleTo(learnedByOf(context.actor));

/** An engram as search and list results show it: what an agent needs to read and cite it, and its review status. */
function brief(engram: Engram) {
  return {
    id: engram.id,
    text: engram.text,
    title: engram.title,
    kind: engram.kind,
    category: engram.category,
    tags: engram.tags,
    project: engram.project,
    scope: engram.scope,
    pinned: engram.pinned,
    deprecated: engram.deprecated,
    /** `pending`: waits for a person's review — found by the agent's own searches, never injected by hooks. */
    status: engram.status,
    ...(engram.status !== 'active' && engram.status_reason ? { status_reason: engram.status_reason } : {}),
    ...(engram.content ? { has_content: true } : {}),
  };
}

const Id = z.number().int().positive();
const Tags = z.union([z.array(z.string()), z.string()]);

const EngramSearchSchema = z.strictObject({
  query: z.string(),
  tags: Tags.optional(),
  category: z.string().optional(),
  limit: z.number().int().min(1).max(50).optional(),
  project: z.string().optional(),
  all_projects: z.boolean().optional(),
});

const EngramAddSchema = z.strictObject({
  text: z.string(),
  title: z.string().optional(),
  content: z.string().optional(),
  kind: z.string().optional(),
  category: z.string().optional(),
  tags: Tags.optional(),
  prerequisites: z.unknown().optional(),
  project: z.string().optional(),
  scope: z.enum(['project', 'personal']).optional(),
  topic_key: z.string().optional(),
});

const EngramUpdateSchema = z.strictObject({
  id: Id,
  text: z.string().optional(),
  title: z.string().nullable().optional(),
  content: z.string().nullable().optional(),
  category: z.string().optional(),
  tags: Tags.optional(),
  add_tags: Tags.optional(),
  remove_tags: Tags.optional(),
  prerequisites: z.unknown().optional(),
  project: z.string().nullable().optional(),
  scope: z.enum(['project', 'personal']).optional(),
  topic_key: z.string().nullable().optional(),
});

/** The catalog: operation name → definition. */
export const OPERATIONS = {
  'engram.search': op({
    input: EngramSearchSchema,
    writes: false,
    async run(context, input) {
      const env = context.environment(context.caller.cwd, context.caller.agent);
      const project = input.project?.trim() || env.repo || context.caller.project || undefined;
      const response = await context.search({
        query: input.query,
        mode: context.searchMode,
        topK: input.limit ?? 5,
        ...(input.category !== undefined ? { category: normalizeCategory(input.category) } : {}),
        ...(input.tags !== undefined ? { tags: normalizeTags(input.tags) } : {}),
        environment: env,
        statuses: visible(context).statuses,
        pendingLearnedBy: visible(context).pendingLearnedBy ?? [],
        ...(!input.all_projects && project ? { scope: { project, includePersonal: true } } : {}),
      });
      return {
        query: response.query,
        mode: response.mode,
        model: response.model,
        abstained: response.abstained,
        degraded: response.degraded,
        results: response.results.map((hit) => ({ ...brief(hit.engram), score: hit.score, ranks: hit.ranks, signals: hit.signals })),
      };
    },
  }),
  'engram.add': op({
    input: EngramAddSchema,
    writes: true,
    run(context, input) {
      const result = addEngram(context.store, { ...input, source: 'manual' }, changeOptions(context));
      return {
        status: result.status,
        id: result.engram.id,
        engram: brief(result.engram),
        redacted: result.redacted,
        conflicts: result.conflicts,
        undo_token: result.undo_token,
      };
    },
  }),
  'engram.update': op({
    input: EngramUpdateSchema,
    writes: true,
    run(context, { id, ...patch }) {
      const result = updateEngram(context.store, id, patch, changeOptions(context));
      return {
        status: result.status,
        id,
        changed: result.changed,
        engram: brief(result.engram),
        redacted: result.redacted,
        conflicts: result.conflicts,
        undo_token: result.undo_token,
      };
    },
  }),
  'engram.deprecate': op({
    input: z.strictObject({ id: Id, reason: z.string().optional(), undo: z.boolean().optional() }),
    writes: true,
    run(context, input) {
      const result = deprecateEngram(context.store, input.id, {
        ...(input.reason !== undefined ? { reason: input.reason } : {}),
        ...(input.undo !== undefined ? { undo: input.undo } : {}),
        ...changeOptions(context),
      });
      return {
        status: result.status,
        id: input.id,
        deprecated: result.engram.deprecated,
        reason: result.engram.deprecated_reason,
        // Taking a deprecation back sends the engram to review, not straight to active.
        review_status: result.engram.status,
        undo_token: result.undo_token,
      };
    },
  }),
  'engram.feedback': op({
    input: z.strictObject({ id: Id, applicable: z.boolean(), reason: z.string().optional() }),
    writes: true,
    run(context, input) {
      const { store, caller } = context;
      const env = context.environment(caller.cwd, caller.agent);
      const at = context.now().toISOString();
      return store.write(() => {
        const sessionId = caller.session_id ?? null;
        if (sessionId !== null) {
          store.sessions.ensure(sessionId, { agent: caller.agent, project: caller.project, cwd: caller.cwd, at });
          // Once per engram per session: the evaluator's rule, so an agent repeating itself does not count twice.
          const earlier = store.activity.judgements(sessionId).find((j) => j.engram_id === input.id && j.source === 'feedback');
          if (earlier) {
            return { status: 'already_recorded' as const, engram_id: input.id, session_id: sessionId, useful: (earlier.score ?? 0) > 0 };
          }
        }
        const result = recordFeedback(store, input.id, input.applicable, {
          ...(input.reason !== undefined ? { reason: input.reason } : {}),
          tags: env.tags,
          repo: env.repo ?? caller.project,
          sessionId,
          by: context.actor.by,
          now: () => context.now(),
        });
        return { status: 'recorded' as const, session_id: sessionId, ...result };
      });
    },
  }),
  'engram.pin': op({
    input: z.strictObject({ id: Id }),
    writes: true,
    run(context, input) {
      const result = pinEngram(context.store, input.id, true, changeOptions(context));
      return { status: result.status, id: input.id, pinned: result.engram.pinned, undo_token: result.undo_token };
    },
  }),
  'engram.unpin': op({
    input: z.strictObject({ id: Id }),
    writes: true,
    run(context, input) {
      const result = pinEngram(context.store, input.id, false, changeOptions(context));
      return { status: result.status, id: input.id, pinned: result.engram.pinned, undo_token: result.undo_token };
    },
  }),
  'engram.list': op({
    input: z.strictObject({
      category: z.string().optional(),
      tags: Tags.optional(),
      project: z.string().optional(),
      include_deprecated: z.boolean().optional(),
      limit: z.number().int().min(1).max(200).optional(),
      offset: z.number().int().min(0).optional(),
    }),
    writes: false,
    run(context, input) {
      const page = listEngrams(context.store, {
        ...(input.category !== undefined ? { category: input.category } : {}),
        ...(input.tags !== undefined ? { tags: input.tags } : {}),
        ...(input.project !== undefined ? { project: input.project } : {}),
        statuses: input.include_deprecated ? ['active', 'deprecated'] : ['active'],
        pendingLearnedBy: visible(context).pendingLearnedBy ?? [],
        limit: input.limit ?? 20,
        offset: input.offset ?? 0,
      });
      return { total: page.total, limit: page.limit, offset: page.offset, engrams: page.engrams.map(brief) };
    },
  }),
  'engram.status': op({
    input: z.strictObject({}),
    writes: false,
    run(context) {
      const status = storeStatus(context.store, context.settings);
      const env = context.environment(context.caller.cwd, context.caller.agent);
      return {
        ...status,
        search: { mode: context.searchMode, model: context.model },
        environment: { project: env.repo ?? context.caller.project, tags: env.tags, os: env.os },
      };
    },
  }),
  'engram.explain': op({
    input: z.strictObject({
      file: z.string().min(1),
      start: z.number().int().min(1),
      end: z.number().int().min(1),
      before: z.number().int().min(0).max(200).optional(),
      after: z.number().int().min(0).max(200).optional(),
      brief: z.boolean().optional(),
      limit: z.number().int().min(1).max(100).optional(),
    }),
    writes: false,
    local: true,
    run(context, { file, start, end, ...options }) {
      if (end < start) throw new EngramError('INVALID_INPUT', `a span is start ≤ end, got ${start}-${end}`);
      const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
      return explainInFolder({ cwd: context.caller.cwd, home: context.settings.paths.home }, { file, start, end }, defined);
    },
  }),
  'engram.why': op({
    input: z.strictObject({ id: Id }),
    writes: false,
    run(context, input) {
      // Provenance of one engram (services/provenance): how and in which session it was learned, the moment of the
      // tape, the files touched then, whether its code still lives, and its audit history.
      const { engram, ...report } = whyEngram(context.store, input.id, { home: context.settings.paths.home });
      return { ...report, engram: engram ? { ...brief(engram), learned_by: engram.learned_by, liveness: engram.liveness } : null };
    },
  }),
  'context.recall': op({
    input: z.strictObject({}),
    writes: false,
    run(context) {
      // What a session in the caller's repository starts with (the text `engram context sync` writes, `memory://recall`).
      return recallContextText(context.store, { project: context.caller.project, policy: governancePolicy(context.settings.config), now: context.now() });
    },
  }),
  'docs.entry': op({
    input: z.strictObject({ id: z.string().min(1).max(16) }),
    writes: false,
    local: true,
    // A knowledge doc entry (C###, E###, W###) of the caller's repository, read from its files.
    run: (context, input) => readDocEntry({ cwd: context.caller.cwd }, input.id),
  }),

  // The Go engram's operations (observations are engrams).
  'obs.save': op({ input: SaveObservationSchema, writes: true, run: (context, input) => saveObservation(context.store, input, writeContext(context)) }),
  'obs.update': op({ input: UpdateObservationSchema, writes: true, run: (context, input) => updateObservation(context.store, input, writeContext(context)) }),
  'obs.delete': op({ input: DeleteObservationSchema, writes: true, run: (context, input) => deleteObservation(context.store, input, writeContext(context)) }),
  'obs.get': op({ input: z.strictObject({ id: Id }), writes: false, run: (context, input) => getObservation(context.store, input.id) }),
  'obs.search': op({
    input: SearchObservationsSchema,
    writes: false,
    run: (context, input) =>
      searchObservations(context.store, { search: (request) => context.search(request) }, input, { mode: context.searchMode, visible: visible(context) }),
  }),
  'obs.recent': op({ input: RecentObservationsSchema, writes: false, run: (context, input) => recentObservations(context.store, input, { visible: visible(context) }) }),
  'obs.timeline': op({ input: TimelineSchema, writes: false, run: (context, input) => timeline(context.store, input, { visible: visible(context) }) }),
  'obs.context': op({
    input: ContextSchema,
    writes: false,
    run: (context, input) => ({ context: formatContext(context.store, input, { visible: visible(context) }), stats: observationStats(context.store) }),
  }),
  'obs.stats': op({ input: z.strictObject({}), writes: false, run: (context) => observationStats(context.store) }),
  'obs.suggest_topic_key': op({
    input: z.strictObject({ type: z.string().optional(), title: z.string().optional(), content: z.string().optional() }),
    writes: false,
    local: true,
    run(_context, input) {
      if (!input.title?.trim() && !input.content?.trim()) throw new EngramError('INVALID_INPUT', 'provide title or content to suggest a topic_key');
      return { topic_key: suggestTopicKey(input.type, input.title, input.content) };
    },
  }),
  'obs.passive': op({ input: PassiveCaptureSchema, writes: true, run: (context, input) => capturePassive(context.store, input, writeContext(context)) }),
  'projects.merge': op({
    input: MergeProjectsSchema,
    writes: true,
    run: (context, input) => mergeProjects(context.store, input, { preferred: context.caller.project, actor: context.actor, now: () => context.now() }),
  }),
  'projects.migrate': op({
    input: MigrateProjectSchema,
    writes: true,
    run: (context, input) => migrateProject(context.store, input, { actor: context.actor, now: () => context.now() }),
  }),
  'session.start': op({ input: StartSessionSchema, writes: true, run: (context, input) => startSession(context.store, input, writeContext(context)) }),
  'session.end': op({ input: EndSessionSchema, writes: true, run: (context, input) => endSession(context.store, input, writeContext(context)) }),
  'session.summary': op({ input: SessionSummarySchema, writes: true, run: (context, input) => saveSessionSummary(context.store, input, writeContext(context)) }),
  'session.recent': op({
    input: z.strictObject({ project: z.string().optional(), limit: z.number().int().optional() }),
    writes: false,
    run: (context, input) => recentSessions(context.store, input),
  }),
  'prompt.save': op({ input: SavePromptSchema, writes: true, run: (context, input) => savePrompt(context.store, input, writeContext(context)) }),
  'prompt.recent': op({
    input: z.strictObject({ project: z.string().optional(), limit: z.number().int().optional() }),
    writes: false,
    run: (context, input) => recentPrompts(context.store, input),
  }),
  // Moving in from the Go engram (`GET /export`, `POST /import`): its export shape out and in.
  'go.export': op({
    input: z.strictObject({ project: z.string().optional() }),
    writes: false,
    run: (context, input) => exportGoData(context.store, { ...(input.project ? { project: input.project } : {}), now: () => context.now() }),
  }),
  'go.import': op({
    input: z.strictObject({ data: z.unknown() }),
    writes: true,
    run(context, input) {
      const parsed = GoExportInSchema.safeParse(input.data);
      if (!parsed.success) throw new EngramError('INVALID_INPUT', `not a Go engram export: ${formatIssues(parsed.error)}`);
      // What an import brings is learned by `import`, a person's decision (active at once): an agent may not use it
      // to skip review.
      if (context.actor.by !== 'user') throw new EngramError('INVALID_INPUT', `only a person imports; this was asked by '${context.actor.by}' via ${context.actor.via}`);
      return importGoData(context.store, parsed.data, { actor: 'import', via: context.actor.via, now: () => context.now() });
    },
  }),
  'prompt.search': op({
    input: z.strictObject({ q: z.string(), project: z.string().optional(), limit: z.number().int().optional() }),
    writes: false,
    run: (context, input) => searchPrompts(context.store, input),
  }),
};

export type OperationName = keyof typeof OPERATIONS;
export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[];

/** The definition of a named operation, or an INVALID_INPUT error naming it. */
export function operation(name: string): Operation {
  const found = Object.hasOwn(OPERATIONS, name) ? (OPERATIONS as unknown as Record<string, Operation>)[name] : undefined;
  if (!found) throw new EngramError('INVALID_INPUT', `unknown operation '${name}'`);
  return found;
}

/** Validates the parameters of a named operation and runs it. Errors are EngramErrors with a specific message. */
export async function runOperation(name: string, params: unknown, context: OpContext): Promise<unknown> {
  const definition = operation(name);
  const parsed = definition.input.safeParse(params ?? {});
  if (!parsed.success) throw new EngramError('INVALID_INPUT', formatIssues(parsed.error), { details: { operation: name } });
  // A write checks conflicts through the text index: while the warm server is still building it (its first seconds
  // at 100k engrams), wait for that rather than build it again on the event loop that answers hooks.
  if (definition.writes) await textIndexReady(context.store);
  return definition.run(context, parsed.data);
}
