/**
 * The fast path of a hook the warm server did not answer (`hooks/run.cjs` → `dist/hooks/fast.cjs` → {@link runHook}).
 * The launcher reads stdin and asks the server through its mailbox itself (everything a hook does on every agent
 * event lives in hooks/run.cjs, so a hook the server answers loads no other file); this is loaded only when that did
 * not give an answer: stdin is a terminal (read here as a stream, with a time limit), the server has no mailbox (it
 * is asked over its socket), or it did not answer in time, is of another version, or is switched off. Then the
 * in-process path (`dist/hooks/inprocess.cjs`: store, search, zod) is loaded with its V8 code cache
 * (fallback-loader.ts) and answers with BM25 alone. Bundled on its own as one CommonJS file of Node built-ins.
 * @module
 */
import { join } from 'node:path';
import { answerAndExit, engramHome, HOOK_ENTRIES, mailboxOf, MAX_STDIN_BYTES, postToMailbox, readStdinSync, type Handover } from '../../hooks/run.cjs';
import { serverPaths } from '../server/address.js';
import { askServer, type AskAnswer, type AskFailure } from '../server/ask.js';
import type { ServerReply } from '../server/protocol.js';
import type { HookEventName } from './contract.js';
import type { HookCall } from './dispatch.js';
import { VERSION } from '../core/version.js';
import { loadFallback } from './fallback-loader.js';

export { MAX_STDIN_BYTES };
/** A terminal (or anything else read as a stream) that never closes stdin must not hang us. */
const STDIN_TIMEOUT_MS = 3_000;

/**
 * The hard deadline of the whole process for each event — under each event's registered timeout (plugin.json), and
 * Claude's 1.5 s SessionEnd budget. How long a hook waits for the server is the launcher's (HOOK_ENTRIES).
 */
const DEADLINE_MS: Record<HookEventName, number> = {
  SessionStart: 12_000,
  UserPromptSubmit: 8_000,
  PreToolUse: 4_000,
  PostToolUse: 4_000,
  PostToolUseFailure: 4_000,
  Stop: 8_000,
  SessionEnd: 1_200,
};

/** What was read from stdin. */
export interface StdinText {
  text: string;
  tooLarge: boolean;
  timedOut: boolean;
}

/** Collects stdin's bytes up to the cap; past it, drops them (the rest is still read, so the agent sees no broken pipe). */
function collector(maxBytes: number, initial: readonly Buffer[] = []) {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  const add = (buffer: Buffer): void => {
    size += buffer.length;
    if (size > maxBytes) {
      tooLarge = true;
      chunks.length = 0;
    } else if (!tooLarge) {
      chunks.push(buffer);
    }
  };
  for (const buffer of initial) add(buffer);
  return {
    add,
    chunks: () => chunks,
    get tooLarge() {
      return tooLarge;
    },
    result: (timedOut: boolean): StdinText => ({ text: tooLarge ? '' : Buffer.concat(chunks).toString('utf8'), tooLarge, timedOut }),
  };
}

/** Reads stdin to its end as a stream, up to a byte cap and a time limit (`initial`: bytes already read). */
export function readStdin(
  stream: NodeJS.ReadableStream,
  options: { maxBytes?: number; timeoutMs?: number; initial?: readonly Buffer[] } = {},
): Promise<StdinText> {
  const bytes = collector(options.maxBytes ?? MAX_STDIN_BYTES, options.initial);
  return new Promise((resolve) => {
    let done = false;
    const finish = (timedOut: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(bytes.result(timedOut));
    };
    const timer = setTimeout(() => finish(true), options.timeoutMs ?? STDIN_TIMEOUT_MS);
    timer.unref?.();
    stream.on('data', (chunk: Buffer | string) => bytes.add(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    stream.on('end', () => finish(false));
    stream.on('error', () => finish(false));
  });
}

const OFF = new Set(['off', '0', 'false', 'no']);

/**
 * The fast path cannot load core/log (only Node built-ins here), so a failure of its own — the in-process path
 * missing or failing to load — is written as one line in hooks.log's format by hand. Never throws.
 */
function logFailure(event: string, error: unknown): void {
  try {
    // node:fs is loaded only on this path, and only once something went wrong.
    const fs = process.getBuiltinModule('node:fs');
    const dir = join(engramHome(process.env), 'logs');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const message = error instanceof Error ? error.message : String(error);
    const line = { t: new Date().toISOString(), level: 'error', msg: 'hook fast path failed', event, error: { message: message.slice(0, 500) } };
    fs.appendFileSync(join(dir, 'hooks.log'), `${JSON.stringify(line)}\n`, { mode: 0o600 });
  } catch {
    // Nowhere to say it: the agent still gets a clean exit.
  }
}

/**
 * Runs the hook `entry` of the install folder `root` (the plugin root: what the bootstrap is started for), whose
 * bundles and dependencies are in `runtime` (the same folder for a source checkout built in place, else the runtime
 * folder the bootstrap built; hooks/run.cjs findRuntime), going on from what the launcher did (`handed`: the stdin it
 * read, what asking the server gave); without it, this reads stdin and asks the server itself. Always exits 0; never
 * blocks the agent.
 */
export async function runHook(entry: string, root: string, runtime: string = root, handed?: Handover): Promise<void> {
  const event = (HOOK_ENTRIES as Record<string, { event: HookEventName; waitMs: number } | undefined>)[entry]?.event;
  // An agent Engram itself runs as its LLM (`claude -p` for evaluation) must not record or evaluate its own session.
  const nested = process.env.ENGRAM_LLM_CHILD === '1';
  if (!event || nested) {
    // An entry this version does not know (a newer hooks.json), or a nested session: read stdin so the agent sees no
    // broken pipe, exit.
    const read = handed?.stdin ?? readStdinSync();
    if (!('rest' in read)) process.exit(0);
    process.stdin.on('data', () => {}).on('end', () => process.exit(0)).on('error', () => process.exit(0));
    setTimeout(() => process.exit(0), 1_000).unref();
    return;
  }
  const waitMs = HOOK_ENTRIES[entry as keyof typeof HOOK_ENTRIES].waitMs;
  // The hard deadline guards what waits on the event loop (a stdin stream, the socket, the fallback); arming a timer
  // loads the timers (part of a millisecond per hook), so the synchronous paths do without.
  let armed = false;
  const deadline = (): void => {
    if (!armed) setTimeout(() => process.exit(0), DEADLINE_MS[event]).unref();
    armed = true;
  };
  let stdout = '';
  let saveCodeCache: (() => void) | undefined;
  try {
    const argv = process.argv.slice(2);
    const flag = argv.indexOf('--agent');
    const serverOff = OFF.has((process.env.ENGRAM_SERVER ?? '').trim().toLowerCase());
    const read = handed?.stdin ?? readStdinSync();
    if ('rest' in read) deadline();
    const stdin = 'rest' in read ? await readStdin(process.stdin, { initial: read.rest }) : read;
    const call: HookCall = {
      event,
      stdin: stdin.text,
      stdinProblem: stdin.tooLarge ? 'too-large' : stdin.timedOut ? 'timeout' : undefined,
      agentFlag: flag >= 0 ? argv[flag + 1] : undefined,
      envHints: {
        codex: Boolean(process.env.PLUGIN_ROOT || process.env.CODEX_HOME),
        claude: Boolean(process.env.CLAUDE_PROJECT_DIR),
      },
    };
    let serverFailure: AskFailure | 'declined' | undefined;
    if (!serverOff && !call.stdinProblem) {
      const home = engramHome(process.env);
      const request = { v: 1, op: 'hook', version: VERSION, call };
      // What the launcher's mailbox call gave, else the mailbox now (stdin came from a stream); the socket when the
      // server has no mailbox (one that could not make its pipe).
      const asked = handed?.mailbox ?? 'not-asked';
      const posted = asked === 'not-asked' ? postToMailbox<ServerReply>(mailboxOf(home), request, waitMs) : asked === 'absent' ? null : { failure: asked };
      const answer: AskAnswer<ServerReply> | { failure: 'declined' } =
        posted ?? (deadline(), await askServer<ServerReply>(serverPaths(home).socket, request, waitMs));
      if ('reply' in answer && answer.reply.ok && answer.reply.op === 'hook') return answerAndExit(answer.reply.stdout);
      // `declined`: the server answered but not this call (another Engram version, an invalid request).
      serverFailure = 'failure' in answer ? answer.failure : 'declined';
    }
    deadline();
    const loadStarted = performance.now();
    const fallback = loadFallback(runtime, join(engramHome(process.env), 'cache', 'code'));
    saveCodeCache = fallback.save;
    stdout = await fallback.module.runInProcess(call, {
      reason: serverOff ? 'server-off' : call.stdinProblem ? 'stdin-problem' : 'no-answer',
      ...(serverFailure ? { serverFailure } : {}),
      installRoot: root,
      runtimeDir: runtime,
      loaded: { ms: Math.round((performance.now() - loadStarted) * 10) / 10, codeCache: fallback.cache },
    });
  } catch (error) {
    // Nothing may reach the agent but a valid answer. The in-process path logs its own failures; reaching here means
    // it could not even be loaded (a runtime removed in part, a broken build).
    logFailure(event, error);
    stdout = '';
  }
  answerAndExit(stdout, saveCodeCache);
}
