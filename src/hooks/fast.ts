/**
 * The fast path every hook runs (`hooks/run.cjs` → `dist/hooks/fast.cjs` → {@link runHook}): read stdin, hand the
 * call to the warm server, print the answer. Bundled on its own as one CommonJS file of Node built-ins, so a hook
 * costs little more than starting Node: stdin is read with synchronous reads and the call goes through the server's
 * mailbox (server/mailbox.ts: a named pipe and two small files), so a hook never loads node:net or node:stream (the
 * socket is used only when the server has no mailbox). When the server does not answer in time, the in-process path
 * (`dist/hooks/inprocess.cjs`: store, search, zod) is loaded with its V8 code cache (fallback-loader.ts) and answers
 * with BM25 alone.
 * @module
 */
import { join } from 'node:path';
import { engramHome } from '../../scripts/home.mjs';
import { serverPaths } from '../server/address.js';
import { askServer, type AskAnswer, type AskFailure } from '../server/ask.js';
import { postToMailbox } from '../server/mailbox.js';
import type { ServerReply } from '../server/protocol.js';
import type { HookEventName } from './contract.js';
import type { HookCall } from './dispatch.js';
import { VERSION } from '../core/version.js';
import { HOOK_ENTRY_EVENTS } from './entries.js';
import { loadFallback } from './fallback-loader.js';

/** Upper bound on stdin: Claude Code's PostToolUse can carry whole files; beyond this we do not even try. */
export const MAX_STDIN_BYTES = 16 * 1024 * 1024;
/** A terminal (or anything else read as a stream) that never closes stdin must not hang us. */
const STDIN_TIMEOUT_MS = 3_000;

/**
 * How long a hook waits for the server's answer before answering itself, and the hard deadline of the whole
 * process — under each event's registered timeout (plugin.json), and Claude's 1.5 s SessionEnd budget.
 */
const BUDGET: Record<HookEventName, { waitMs: number; deadlineMs: number }> = {
  SessionStart: { waitMs: 1_500, deadlineMs: 12_000 },
  UserPromptSubmit: { waitMs: 1_500, deadlineMs: 8_000 },
  PreToolUse: { waitMs: 800, deadlineMs: 4_000 },
  PostToolUse: { waitMs: 800, deadlineMs: 4_000 },
  PostToolUseFailure: { waitMs: 800, deadlineMs: 4_000 },
  Stop: { waitMs: 800, deadlineMs: 8_000 },
  SessionEnd: { waitMs: 400, deadlineMs: 1_200 },
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

/**
 * Reads stdin with blocking reads when it is a pipe, a socket or a file — what agents give a hook — so the process
 * needs no stream machinery (node:net and node:stream cost a hook more than everything else it does). It stops at the
 * end of input, or as soon as what arrived is one complete JSON value and nothing more is waiting (an agent that
 * writes its payload and keeps stdin open does not hold the hook). Agents always send the payload before the hook
 * reads; one that sent nothing and never closed stdin would hold the hook until its own timeout. Returns
 * `{ rest }` for a terminal or anything else (and for a descriptor that turns out to be non-blocking), to be read
 * as a stream with its time limit, after the bytes already read.
 */
export function readStdinSync(fd = 0, maxBytes = MAX_STDIN_BYTES): StdinText | { rest: readonly Buffer[] } {
  const fs = process.getBuiltinModule('node:fs');
  try {
    const stats = fs.fstatSync(fd);
    if (!stats.isFIFO() && !stats.isSocket() && !stats.isFile()) return { rest: [] };
  } catch {
    return { rest: [] };
  }
  const bytes = collector(maxBytes);
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let read: number;
    try {
      read = fs.readSync(fd, buffer, 0, buffer.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') return { rest: bytes.tooLarge ? [] : bytes.chunks() };
      if (code === 'EINTR') continue;
      return bytes.result(false); // EOF by another name (the agent went away): what arrived is all there is
    }
    if (read === 0) return bytes.result(false);
    bytes.add(Buffer.from(buffer.subarray(0, read)));
    // A short read means nothing more is waiting: if what arrived is already the whole payload, stop here.
    if (read < buffer.length && !bytes.tooLarge && buffer[read - 1] === 0x7d /* } */) {
      const { text } = bytes.result(false);
      try {
        JSON.parse(text);
        return bytes.result(false);
      } catch {
        // Not complete yet: read on.
      }
    }
  }
}

const OFF = new Set(['off', '0', 'false', 'no']);

/**
 * Writes the answer and exits 0 once it is written; `after` runs between the two (the fallback's code cache). The
 * answer goes straight to fd 1: constructing `process.stdout` (a stream over the agent's pipe) costs a hook process
 * more than the write. A descriptor that would block (set non-blocking by someone else, full) gets the stream.
 */
function answerAndExit(stdout: string, after?: () => void): void {
  const exit = (): never => {
    after?.();
    process.exit(0);
  };
  if (stdout === '') exit();
  const bytes = Buffer.from(stdout);
  let written = 0;
  try {
    const { writeSync } = process.getBuiltinModule('node:fs');
    while (written < bytes.length) written += writeSync(1, bytes, written);
  } catch (error) {
    // EAGAIN: a non-blocking descriptor that is full; the rest goes through the stream, which waits for it. Anything
    // else (EPIPE: the agent stopped reading; EBADF: no fd 1) has nowhere to go.
    if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') exit();
  }
  if (written >= bytes.length) exit();
  process.stdout.write(bytes.subarray(written), exit);
}

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
 * folder the bootstrap built; hooks/run.cjs findRuntime). Always exits 0; never blocks the agent.
 */
export async function runHook(entry: string, root: string, runtime: string = root): Promise<void> {
  const event = (HOOK_ENTRY_EVENTS as Record<string, HookEventName | undefined>)[entry];
  // An agent Engram itself runs as its LLM (`claude -p` for evaluation) must not record or evaluate its own session.
  const nested = process.env.ENGRAM_LLM_CHILD === '1';
  if (!event || nested) {
    // An entry this version does not know (a newer hooks.json), or a nested session: read stdin so the agent sees no
    // broken pipe, exit.
    if (!('rest' in readStdinSync())) process.exit(0);
    process.stdin.on('data', () => {}).on('end', () => process.exit(0)).on('error', () => process.exit(0));
    setTimeout(() => process.exit(0), 1_000).unref();
    return;
  }
  const budget = BUDGET[event];
  // The hard deadline guards what waits on the event loop (a stdin stream, the fallback); the mailbox path is
  // synchronous and bounded by the wait, and arming a timer loads the timers (part of a millisecond per hook).
  let armed = false;
  const deadline = (): void => {
    if (!armed) setTimeout(() => process.exit(0), budget.deadlineMs).unref();
    armed = true;
  };
  let stdout = '';
  let saveCodeCache: (() => void) | undefined;
  try {
    const argv = process.argv.slice(2);
    const flag = argv.indexOf('--agent');
    const serverOff = OFF.has((process.env.ENGRAM_SERVER ?? '').trim().toLowerCase());
    const read = readStdinSync();
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
      const paths = serverPaths(engramHome(process.env));
      const request = { v: 1, op: 'hook', version: VERSION, call };
      // The mailbox when the server has one; the socket otherwise (a server that could not make its pipe).
      const answer: AskAnswer<ServerReply> =
        postToMailbox<ServerReply>(paths.mailbox, request, budget.waitMs) ?? (deadline(), await askServer<ServerReply>(paths.socket, request, budget.waitMs));
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
