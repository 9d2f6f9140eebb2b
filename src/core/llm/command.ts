import { spawn, type ChildProcess } from 'node:child_process';
import { childEnv } from '../env.js';
import { EngramError } from '../errors.js';
import { redactText } from '../redact.js';
import type { ProviderAnswer } from './openai.js';

/** Everything one command call needs. */
export interface CommandCall {
  argv: string[];
  model: string | null;
  /** What goes on stdin: the system text, a blank line, the prompt. */
  input: string;
  timeoutMs: number;
  /** Working folder of the command. @default the process cwd */
  cwd?: string;
  /** Aborting kills the process group (SIGTERM, then SIGKILL), like a timeout. */
  signal?: AbortSignal;
  /** Called with the pid (= its process group) once the command runs. */
  onSpawn?: (pid: number) => void;
}

/** An answer is a few KB; more output is a misbehaving command, refused rather than buffered. */
export const MAX_COMMAND_OUTPUT_BYTES = 1024 * 1024;
/** stderr kept for the error message. */
const MAX_STDERR_BYTES = 64 * 1024;
/** How long a timed-out command gets between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 2_000;
/** Lines of stderr quoted when the command fails. */
const STDERR_LINES = 5;

/**
 * Set in the command's environment. An agent CLI used as the LLM (`claude -p`, `codex exec`) runs its own hooks; this
 * tells Engram's hooks in that child session that the session is Engram's own call, not the user's.
 */
export const LLM_CHILD_VARIABLE = 'ENGRAM_LLM_CHILD';

const WINDOWS = process.platform === 'win32';

const failed = (message: string, details: Record<string, unknown> = {}, cause?: unknown): EngramError =>
  new EngramError('LLM_FAILED', message, { cause, details: { provider: 'command', attempts: 1, ...details } });

/** The first lines of stderr, redacted: enough to say why (not logged in, unknown model) without a wall of text. */
function stderrSummary(stderr: string): string {
  const lines = stderr.split(/\r?\n/).map((line) => line.trim()).filter(Boolean).slice(0, STDERR_LINES);
  return lines.length ? redactText(lines.join(' | ').slice(0, 1_000)) : '(no stderr)';
}

/**
 * Kills the command and everything it started. The command runs as the leader of its own process group (detached),
 * so one signal to the group reaches grandchildren too — an agent CLI starts MCP servers and shells.
 */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (WINDOWS || child.pid === undefined) child.kill(signal);
    else process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Runs the configured command once with the input on stdin and returns its stdout as the answer. Not retried: an
 * agent CLI retries its own API calls, and a failing command (not logged in, unknown flag) fails the same way again.
 * On timeout the process group gets SIGTERM, then SIGKILL after a grace period; after a normal exit, anything the
 * command left running in its group is killed too.
 */
export function runCommand(call: CommandCall): Promise<ProviderAnswer> {
  const [file, ...args] = call.argv;
  if (file === undefined) return Promise.reject(failed('llm.command is empty'));
  const name = redactText(file);

  return new Promise<ProviderAnswer>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(file, args, {
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: !WINDOWS,
        windowsHide: true,
        env: childEnv({ [LLM_CHILD_VARIABLE]: '1' }),
        ...(call.cwd ? { cwd: call.cwd } : {}),
      });
    } catch (error) {
      reject(failed(`cannot run the LLM command '${name}': ${(error as Error).message}`, {}, error));
      return;
    }

    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let problem: 'timeout' | 'overflow' | 'aborted' | undefined;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;

    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
      clearTimeout(killTimer);
      outcome();
    };
    const stop = (reason: 'timeout' | 'overflow' | 'aborted'): void => {
      if (problem) return;
      problem = reason;
      killGroup(child, reason === 'overflow' ? 'SIGKILL' : 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS);
      killTimer.unref();
    };
    const timer = setTimeout(() => stop('timeout'), call.timeoutMs);
    const onAbort = (): void => stop('aborted');
    if (call.signal?.aborted) onAbort();
    call.signal?.addEventListener('abort', onAbort, { once: true });
    if (child.pid !== undefined) call.onSpawn?.(child.pid);

    child.stdout?.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.byteLength;
      if (stdoutBytes > MAX_COMMAND_OUTPUT_BYTES) stop('overflow');
      else stdout.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString('utf8');
    });
    // A command that exits without reading its stdin closes the pipe under us; its exit status tells the story.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(call.input);

    child.on('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'ENOENT' ? 'not found' : error.message;
      settle(() => reject(failed(`cannot run the LLM command '${name}': ${why} (llm.command / ENGRAM_LLM_COMMAND)`, { errno: error.code }, error)));
    });

    child.on('close', (code, signal) => {
      // Whatever the command left behind in its group goes with it.
      if (!problem) killGroup(child, 'SIGKILL');
      settle(() => {
        if (problem === 'timeout') {
          reject(failed(`the LLM command '${name}' did not finish within ${call.timeoutMs} ms (llm.timeout_ms); killed`, { timeout_ms: call.timeoutMs }));
        } else if (problem === 'aborted') {
          reject(failed(`the LLM command '${name}' was stopped (aborted by its caller)`, { aborted: true }));
        } else if (problem === 'overflow') {
          reject(failed(`the LLM command '${name}' printed more than ${MAX_COMMAND_OUTPUT_BYTES} bytes; killed`));
        } else if (code !== 0) {
          const how = code === null ? `was killed by ${signal ?? 'a signal'}` : `exited with code ${code}`;
          reject(failed(`the LLM command '${name}' ${how}: ${stderrSummary(stderr)}`, { exit_code: code, signal }));
        } else {
          const text = Buffer.concat(stdout).toString('utf8').trim();
          if (text === '') reject(failed(`the LLM command '${name}' printed nothing: ${stderrSummary(stderr)}`));
          else resolve({ text, model: call.model, usage: undefined, attempts: 1 });
        }
      });
    });
  });
}
