import type { z } from 'zod';
import type { Agent, Logger, Settings, Store } from '../core/index.js';
import {
  governancePolicy,
  failureQuery,
  injectAtSessionStart,
  injectForQuery,
  INJECT,
  promptQuery,
  queueSessionEndWork,
  recordPrompt,
  recordSessionEnd,
  recordSessionStart,
  recordToolEvent,
  recordTurnEnd,
  toolQuery,
  type HookEnvironment,
  type InjectDeps,
  type Injection,
  type SessionContext,
} from '../services/index.js';
import {
  PostToolUseFailureInputSchema,
  PostToolUseInputSchema,
  PreToolUseInputSchema,
  SessionEndInputSchema,
  SessionStartInputSchema,
  StopInputSchema,
  UserPromptSubmitInputSchema,
  type HookCommon,
  type HookEventName,
} from './contract.js';

/** What a handler can use; the warm server and the in-process fallback each provide one. */
export interface HookRuntime {
  settings: Settings;
  log: Logger;
  now(): Date;
  store(): Store;
  /** Search, mode and model for injection (hybrid in the server, BM25 in-process). */
  inject: Pick<InjectDeps, 'search' | 'embedderKind' | 'mode' | 'answeredBy'>;
  /** Where the agent works: os, repo, MCP servers, tags (cached per folder). */
  environment(cwd: string, agent: Agent): HookEnvironment;
  /** Asks for background work (queued jobs) to run soon; resolves once the request is made (a hook exits after). */
  wake(): void | Promise<void>;
  /**
   * In-process only: why this hook answered itself — `server-off`, `stdin-problem`, or why the server did not answer
   * (`no-server`, `refused`, `lost`: it died mid-query, `timeout`, `bad-reply`, `declined`). In the hook log line.
   */
  fallback?: string;
  /** In-process only: how the fast path loaded this code (`load_ms`, `code_cache`), for the hook log line. */
  loaded?: { load_ms: number; code_cache: string };
}

/** One handler's view of a call. */
export interface HandlerCall<I> {
  input: I;
  agent: Agent;
  runtime: HookRuntime;
  session: SessionContext;
  /**
   * Work to run once the answer is sent (the warm server), told whether it reached the hook; absent: run it before
   * answering.
   */
  defer?: ((work: (delivered: boolean) => void) => void) | undefined;
}

/** What a handler decided: context to inject (or null) and what it showed. */
export type HandlerResult = Injection | null;

interface Handler<S extends z.ZodType<HookCommon>> {
  schema: S;
  run(call: HandlerCall<z.infer<S>>): Promise<HandlerResult> | HandlerResult;
}

const define = <S extends z.ZodType<HookCommon>>(schema: S, run: Handler<S>['run']): Handler<S> => ({ schema, run });

const injectDeps = (runtime: HookRuntime, defer: HandlerCall<unknown>['defer']): InjectDeps => {
  const hooks = runtime.settings.config.hooks;
  return {
    ...runtime.inject,
    ...(defer ? { defer } : {}),
    store: runtime.store,
    now: runtime.now,
    limits: {
      sessionStartChars: hooks.session_start_chars,
      promptChars: hooks.prompt_chars,
      toolChars: hooks.tool_chars,
      sessionChars: hooks.session_chars,
    },
    governance: governancePolicy(runtime.settings.config),
  };
};

/** The row PostToolUse / PostToolUseFailure record: what the tool worked on, not its content. */
function toolEvent(
  input: { tool_name: string; tool_input?: unknown; tool_use_id?: string | null; cwd: string; duration_ms?: number | null },
  runtime: HookRuntime,
  error: string | null,
) {
  return {
    tool_use_id: input.tool_use_id ?? `${input.tool_name}@${runtime.now().toISOString()}`,
    tool_name: input.tool_name,
    target: toolQuery(input.tool_name, input.tool_input, input.cwd).slice(input.tool_name.length + 1) || null,
    ok: error === null,
    error: error || null,
    duration_ms: typeof input.duration_ms === 'number' ? Math.round(input.duration_ms) : null,
  };
}

/** Every event Engram handles: validate, do the job, say what to inject. */
export const HANDLERS: { [E in HookEventName]: Handler<z.ZodType<HookCommon>> } = {
  SessionStart: define(SessionStartInputSchema, async ({ input, agent, runtime, session, defer }) => {
    const source = input.source ?? null;
    // On the warm server the session's row is written after the answer (0.3 ms of the handler), queued ahead of the
    // record of what was shown: the selection reads nothing it writes (a new session has shown nothing; compact and
    // clear make their row and new epoch themselves), and the upsert fills the same fields into either row.
    const record = (): void => void recordSessionStart(runtime.store(), session, source, { now: runtime.now });
    if (defer) defer(record);
    else record();
    return injectAtSessionStart(injectDeps(runtime, defer), session, runtime.environment(input.cwd, agent), source);
  }),

  UserPromptSubmit: define(UserPromptSubmitInputSchema, async ({ input, agent, runtime, session, defer }) => {
    // The prompt's row (redaction, then a write transaction: ~0.4 ms) is not read by the injection below, so the warm
    // server writes it after answering, queued ahead of the record of what was shown; the in-process path writes it first.
    const record = (): void =>
      void recordPrompt(
        runtime.store(),
        session,
        { text: input.prompt, key: input.prompt_id ?? input.turn_id ?? null },
        { now: runtime.now, capture: runtime.settings.config.capture.prompts },
      );
    if (defer) defer(record);
    else record();
    return injectForQuery(injectDeps(runtime, defer), session, runtime.environment(input.cwd, agent), {
      event: 'UserPromptSubmit',
      query: promptQuery(input.prompt),
      max: INJECT.promptMax,
      budget: runtime.settings.config.hooks.prompt_chars,
      heading: 'Memories from earlier sessions that may apply to this request',
    });
  }),

  PreToolUse: define(PreToolUseInputSchema, ({ input, agent, runtime, session, defer }) =>
    injectForQuery(injectDeps(runtime, defer), session, runtime.environment(input.cwd, agent), {
      event: 'PreToolUse',
      mode: INJECT.toolMode,
      dropGenericWords: true,
      query: toolQuery(input.tool_name, input.tool_input, input.cwd),
      max: INJECT.toolMax,
      budget: runtime.settings.config.hooks.tool_chars,
      heading: `Memories from earlier sessions about this ${input.tool_name} call`,
    }),
  ),

  PostToolUse: define(PostToolUseInputSchema, ({ input, runtime, session }) => {
    recordToolEvent(runtime.store(), session, toolEvent(input, runtime, null), { now: runtime.now });
    return null;
  }),

  PostToolUseFailure: define(PostToolUseFailureInputSchema, ({ input, agent, runtime, session, defer }) => {
    const error = input.error ?? '';
    recordToolEvent(runtime.store(), session, toolEvent(input, runtime, error), { now: runtime.now });
    if (input.is_interrupt) return null;
    return injectForQuery(injectDeps(runtime, defer), session, runtime.environment(input.cwd, agent), {
      event: 'PostToolUseFailure',
      dropGenericWords: true,
      query: failureQuery(input.tool_name, input.tool_input, error, input.cwd),
      max: INJECT.toolMax,
      budget: runtime.settings.config.hooks.tool_chars,
      heading: `Memories from earlier sessions about this ${input.tool_name} failure`,
    });
  }),

  Stop: define(StopInputSchema, ({ input, runtime, session }) => {
    recordTurnEnd(runtime.store(), session, { now: runtime.now, turnKey: input.prompt_id ?? input.turn_id ?? null });
    return null;
  }),

  SessionEnd: define(SessionEndInputSchema, async ({ input, runtime, session }) => {
    recordSessionEnd(runtime.store(), session, input.reason ?? null, { now: runtime.now });
    queueSessionEndWork(runtime.store(), session, { now: runtime.now });
    await runtime.wake();
    return null;
  }),
};
