import type { Agent } from '../core/index.js';
import { hookOutput, HOOK_EVENTS, type HookCommon, type HookEventName } from './contract.js';
import { HANDLERS, type HookRuntime } from './events.js';

/** A hook call as the launcher hands it over (to the server through the socket, or in-process). */
export interface HookCall {
  event: HookEventName;
  /** The raw stdin text ('' when it was too large or never came). */
  stdin: string;
  /** Why stdin is unusable, when it is. */
  stdinProblem?: 'too-large' | 'timeout' | undefined;
  /** `--agent` from the hook command line, if given. */
  agentFlag?: string | undefined;
  /** Hints from the hook's environment: Codex sets PLUGIN_ROOT / CODEX_HOME, Claude Code CLAUDE_PROJECT_DIR. */
  envHints: { codex: boolean; claude: boolean };
}

/** What was answered. */
export interface HookAnswer {
  stdout: string;
  agent: Agent;
  outcome: 'answered' | 'silent' | 'ignored' | 'failed';
  injected: number[];
  /** The failure, when the handler threw. */
  error?: unknown;
}

export const isHookEvent = (value: unknown): value is HookEventName => HOOK_EVENTS.includes(value as HookEventName);

/**
 * Which agent is calling. hooks.json and codex-hooks.json pass `--agent` explicitly; without it, Codex is known by
 * its environment or its `turn_id`, Claude Code by `CLAUDE_PROJECT_DIR` or a transcript under `.claude/`.
 */
export function detectAgent(call: Pick<HookCall, 'agentFlag' | 'envHints'>, input: Partial<HookCommon>): Agent {
  if (call.agentFlag === 'claude' || call.agentFlag === 'codex') return call.agentFlag;
  if (call.envHints.codex || typeof input.turn_id === 'string') return 'codex';
  if (call.envHints.claude || (input.transcript_path ?? '').includes('/.claude/')) return 'claude';
  return 'unknown';
}

/**
 * Runs one hook call under the rule that hooks never hurt the agent: unusable stdin, wrong types, a missing or
 * locked store, a bug — each is logged as one line, nothing harmful is printed, and the caller exits 0.
 */
export async function handleHookCall(
  call: HookCall,
  runtime: HookRuntime,
  options: {
    /**
     * The warm server's: runs work once the answer is sent — recording what was shown, the log line — so the hook
     * is not kept waiting for writes; `delivered` is false when the answer came after its hook stopped waiting.
     * Without it everything runs before this returns.
     */
    defer?: (work: (delivered: boolean) => void) => void;
    /** `sh`: the call came from the shell front (hooks/run.sh), said in its log lines. */
    front?: 'sh';
  } = {},
): Promise<HookAnswer> {
  const started = performance.now();
  const { event } = call;
  const { log } = runtime;
  const path = runtime.inject.answeredBy;
  const fallback = {
    ...(options.front ? { front: options.front } : {}),
    ...(runtime.fallback ? { fallback: runtime.fallback, ...runtime.loaded } : {}),
  };
  const ignored = (message: string, fields: Record<string, unknown> = {}): HookAnswer => {
    log.warn(message, { event, path, ...fallback, ...fields });
    return { stdout: '', agent: 'unknown', outcome: 'ignored', injected: [] };
  };
  if (call.stdinProblem === 'too-large') return ignored('stdin larger than the limit; ignored');
  if (call.stdinProblem === 'timeout' && call.stdin === '') return ignored('no stdin before the timeout; ignored');
  let raw: unknown;
  try {
    raw = JSON.parse(call.stdin);
  } catch {
    return ignored('stdin is not JSON; ignored', { bytes: call.stdin.length });
  }
  const handler = HANDLERS[event];
  const parsed = handler.schema.safeParse(raw);
  if (!parsed.success) {
    return ignored('stdin does not match the event contract; ignored', {
      issues: parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.join('.')}: ${issue.message}`),
    });
  }
  const input = parsed.data;
  const agent = detectAgent(call, input);
  if (input.hook_event_name !== event) return ignored('hook_event_name does not match this hook; ignored', { got: input.hook_event_name });
  try {
    const result = await handler.run({
      input,
      agent,
      runtime,
      defer: options.defer,
      session: {
        sessionId: input.session_id,
        agent,
        cwd: input.cwd,
        transcriptPath: input.transcript_path ?? null,
        model: input.model ?? null,
      },
    });
    const stdout = hookOutput(event, result?.text ?? null);
    const ms = Math.round((performance.now() - started) * 10) / 10;
    const done = (delivered = true): void =>
      log.info('hook done', {
        event,
        agent,
        path,
        ...fallback,
        ms,
        injected: result?.ids ?? [],
        ...(result?.dropped.length ? { dropped: result.dropped } : {}),
        // Its hook had stopped waiting: the agent got the hook's own in-process answer, or none.
        ...(delivered ? {} : { delivered: false }),
      });
    if (options.defer) options.defer(done);
    else done();
    return { stdout, agent, outcome: stdout ? 'answered' : 'silent', injected: result?.ids ?? [] };
  } catch (error) {
    log.error('hook failed', { event, agent, path, ...fallback, error, ms: Math.round(performance.now() - started) });
    return { stdout: '', agent, outcome: 'failed', injected: [], error };
  }
}
