import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import {
  createLogger,
  isEngramError,
  loadSettingsLeniently,
  openStore,
  readEnv,
  type Agent,
  type EngramEnv,
  type Logger,
  type Settings,
  type Store,
} from '../core/index.js';
import { startBootstrap } from '../../scripts/install-state.mjs';
import type { HookCommon, HookEventName } from './contract.js';

/** Process handles a hook uses; tests pass their own. */
export interface HookIo {
  stdin: NodeJS.ReadableStream;
  stdout: { write(text: string): unknown };
  argv: readonly string[];
  env: Record<string, string | undefined>;
  now: () => Date;
  exit: (code: number) => void;
}

/** What a handler receives. */
export interface HookContext<I> {
  input: I;
  agent: Agent;
  settings: Settings;
  log: Logger;
  now: () => Date;
  /** Opens the store on first use (with the short hook busy timeout) and closes it when the hook ends. */
  store(): Store;
}

/** Upper bound on stdin: Claude Code's PostToolUse can carry whole files; beyond this we do not even try. */
const MAX_STDIN_BYTES = 16 * 1024 * 1024;
/** A caller that never closes stdin must not hang us. */
const STDIN_TIMEOUT_MS = 3_000;
/** The whole hook, whatever happens, exits by then (Claude's SessionEnd budget is 1.5 s, Codex's 3 s). */
const DEADLINE_MS = 8_000;

const processIo = (): HookIo => ({
  stdin: process.stdin,
  stdout: process.stdout,
  argv: process.argv.slice(2),
  env: process.env,
  now: () => new Date(),
  exit: (code) => process.exit(code),
});

/** Reads stdin to its end, up to a byte cap and a time limit. */
export function readStdin(
  stream: NodeJS.ReadableStream,
  options: { maxBytes?: number; timeoutMs?: number } = {},
): Promise<{ text: string; tooLarge: boolean; timedOut: boolean }> {
  const maxBytes = options.maxBytes ?? MAX_STDIN_BYTES;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    let done = false;
    const finish = (timedOut: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ text: tooLarge ? '' : Buffer.concat(chunks).toString('utf8'), tooLarge, timedOut });
    };
    const timer = setTimeout(() => finish(true), options.timeoutMs ?? STDIN_TIMEOUT_MS);
    timer.unref?.();
    stream.on('data', (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buffer.length;
      if (size > maxBytes) {
        tooLarge = true;
        chunks.length = 0;
      } else if (!tooLarge) {
        chunks.push(buffer);
      }
    });
    stream.on('end', () => finish(false));
    stream.on('error', () => finish(false));
  });
}

/**
 * Which agent is calling. hooks.json and codex-hooks.json pass `--agent` explicitly; without it, Codex is known by
 * its environment (`PLUGIN_ROOT`, `CODEX_HOME`) or its `turn_id`, Claude Code by `CLAUDE_PROJECT_DIR`.
 */
export function detectAgent(argv: readonly string[], input: Partial<HookCommon>, env: EngramEnv): Agent {
  const flag = argv.indexOf('--agent');
  const named = flag >= 0 ? argv[flag + 1] : undefined;
  if (named === 'claude' || named === 'codex') return named;
  if (env.codexHookEnv || typeof input.turn_id === 'string') return 'codex';
  if (env.claudeHookEnv || (input.transcript_path ?? '').includes('/.claude/')) return 'claude';
  return 'unknown';
}

/** The install folder of the running bundle (dist/hooks/<event>.mjs → two levels up). */
const installRoot = (): string => dirname(dirname(dirname(fileURLToPath(import.meta.url))));

/**
 * Runs one hook under the rule that hooks never hurt the agent: any failure — unreadable or oversized stdin, wrong
 * types, missing or locked store, a bug — is logged as one line to `$ENGRAM_HOME/logs/hooks.log`, nothing harmful is
 * printed, and the process exits 0. Exit code 2 (blocking) is never used.
 */
export async function runHook<S extends z.ZodType<HookCommon>>(
  event: HookEventName,
  schema: S,
  handler: (context: HookContext<z.infer<S>>) => void | Promise<void>,
  io: HookIo = processIo(),
): Promise<void> {
  const started = performance.now();
  const deadline = setTimeout(() => io.exit(0), DEADLINE_MS);
  deadline.unref?.();
  const env = readEnv(io.env);
  const { settings, configError } = loadSettingsLeniently(env);
  const log = createLogger({
    dir: settings.paths.logs,
    name: 'hooks',
    level: settings.config.log.level,
    maxBytes: settings.config.log.max_bytes,
    now: io.now,
  });
  if (configError) log.warn('config.json is invalid; using defaults', { event, error: configError.message });

  let store: Store | undefined;
  let agent: Agent = 'unknown';
  try {
    const stdin = await readStdin(io.stdin);
    if (stdin.tooLarge) return log.warn('stdin larger than the limit; ignored', { event, limit_bytes: MAX_STDIN_BYTES });
    if (stdin.timedOut && stdin.text === '') return log.warn('no stdin before the timeout; ignored', { event });
    let raw: unknown;
    try {
      raw = JSON.parse(stdin.text);
    } catch {
      return log.warn('stdin is not JSON; ignored', { event, bytes: stdin.text.length });
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      return log.warn('stdin does not match the event contract; ignored', {
        event,
        issues: parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.join('.')}: ${issue.message}`),
      });
    }
    const input = parsed.data;
    agent = detectAgent(io.argv, input, env);
    if (input.hook_event_name !== event) {
      return log.warn('hook_event_name does not match this hook; ignored', { event, got: input.hook_event_name });
    }
    await handler({
      input,
      agent,
      settings,
      log,
      now: io.now,
      store: () =>
        (store ??= openStore({ path: settings.paths.db, busyTimeoutMs: settings.config.hooks.busy_timeout_ms })),
    });
    log.debug('hook done', { event, agent, path: 'in-process', ms: Math.round(performance.now() - started) });
  } catch (error) {
    log.error('hook failed', { event, agent, error, ms: Math.round(performance.now() - started) });
    if (isEngramError(error, 'NATIVE_MODULE_MISSING')) {
      // Built for another Node (the user upgraded Node): rebuild in the background for the next hook.
      startBootstrap(installRoot(), { home: settings.paths.home, reason: `hook ${event}: native module failed` });
    }
  } finally {
    try {
      store?.close();
    } catch {
      // Closing cannot fail in a way the agent should see.
    }
    clearTimeout(deadline);
    io.exit(0);
  }
}
