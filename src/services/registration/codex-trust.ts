import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import * as z from 'zod';
import { EngramError, VERSION, type EngramEnv } from '../../core/index.js';
import { isEngramCommand, isEngramPluginId } from './plugin.js';

/** The process environment, as the surface received it (the CLI's `io.env`). */
export type Vars = Record<string, string | undefined>;

/** How long a `codex app-server` conversation may take before it is abandoned and the child killed. */
export const TRUST_TIMEOUT_MS = 15_000;
/** Doctor's budget: it must stay quick, and falls back to reading config.toml. */
export const DOCTOR_TIMEOUT_MS = 5_000;

const NO_CODEX_HINT = "or trust them yourself: start codex, type /hooks and trust Engram's hooks";

const isExecutable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/**
 * The Codex CLI to ask: `explicit` (`--codex-bin`), else `$CODEX_BIN`, else `codex` on `$PATH`; undefined when none is
 * an executable file.
 */
export function findCodexBinary(options: { explicit?: string | undefined; vars: Vars; cwd: string }): string | undefined {
  if (options.explicit) {
    const path = resolve(options.cwd, options.explicit);
    return isExecutable(path) ? path : undefined;
  }
  if (options.vars.CODEX_BIN) {
    const path = resolve(options.cwd, options.vars.CODEX_BIN);
    if (isExecutable(path)) return path;
  }
  for (const dir of (options.vars.PATH ?? '').split(delimiter).filter(Boolean)) {
    const path = join(dir, 'codex');
    if (isExecutable(path)) return path;
  }
  return undefined;
}

/** Like {@link findCodexBinary}, but a missing binary is an error that says how to trust without one. */
export function requireCodexBinary(options: { explicit?: string | undefined; vars: Vars; cwd: string }): string {
  const found = findCodexBinary(options);
  if (found) return found;
  const where = options.explicit ? `--codex-bin ${options.explicit} is not an executable file` : 'no codex on $PATH and no $CODEX_BIN';
  throw new EngramError('NOT_FOUND', `cannot find the Codex CLI (${where}): pass --codex-bin PATH, ${NO_CODEX_HINT}`);
}

/** One hook as `hooks/list` reports it (Codex 0.169.0); unknown fields are kept out of our types. */
const ListedHookSchema = z.looseObject({
  key: z.string(),
  eventName: z.string(),
  command: z.string().nullish(),
  sourcePath: z.string().nullish(),
  source: z.string().nullish(),
  pluginId: z.string().nullish(),
  enabled: z.boolean().optional(),
  isManaged: z.boolean().optional(),
  currentHash: z.string(),
  trustStatus: z.string(),
});
const HooksListSchema = z.looseObject({
  data: z.array(
    z.looseObject({
      hooks: z.array(ListedHookSchema).optional(),
      warnings: z.array(z.unknown()).optional(),
      errors: z.array(z.unknown()).optional(),
    }),
  ),
});

/** A hook Codex knows about, and whether it would run. */
export interface CodexHook {
  key: string;
  /** The event as plugin.json names it (`SessionStart`; app-server says `sessionStart`). */
  event: string;
  /** `user`, `project`, `plugin`, … as Codex says. */
  origin: string;
  plugin_id: string | null;
  command: string | null;
  source_path: string | null;
  enabled: boolean;
  managed: boolean;
  current_hash: string;
  /** `trusted`, `untrusted`, `modified` (changed since it was trusted) or `managed`. */
  trust: string;
}

/** What `hooks/list` returned for one cwd. */
export interface CodexHookListing {
  hooks: CodexHook[];
  warnings: string[];
}

/** Validates a `hooks/list` result; one hook listed for several cwds appears once. */
export function parseHookListing(result: unknown): CodexHookListing {
  const parsed = HooksListSchema.safeParse(result);
  if (!parsed.success) {
    throw new EngramError('IO', `codex app-server answered hooks/list in an unexpected shape: ${parsed.error.issues[0]?.message ?? ''}`);
  }
  const byKey = new Map<string, CodexHook>();
  const warnings: string[] = [];
  for (const entry of parsed.data.data) {
    for (const hook of entry.hooks ?? []) {
      byKey.set(hook.key, {
        key: hook.key,
        event: hook.eventName.charAt(0).toUpperCase() + hook.eventName.slice(1),
        origin: hook.source ?? 'unknown',
        plugin_id: hook.pluginId ?? null,
        command: hook.command ?? null,
        source_path: hook.sourcePath ?? null,
        enabled: hook.enabled ?? true,
        managed: hook.isManaged ?? false,
        current_hash: hook.currentHash,
        trust: hook.trustStatus,
      });
    }
    for (const item of [...(entry.warnings ?? []), ...(entry.errors ?? [])]) warnings.push(typeof item === 'string' ? item : JSON.stringify(item));
  }
  return { hooks: [...byKey.values()], warnings };
}

/**
 * Is this listed hook one of Engram's? Plugin hooks by their `engram@…` id; settings-file hooks by their command, or,
 * when the listing leaves the command out, by the trust keys of the hooks.json entries we wrote (`knownKeys`).
 */
export function isEngramCodexHook(hook: CodexHook, knownKeys: ReadonlySet<string>): boolean {
  if (hook.plugin_id) return isEngramPluginId(hook.plugin_id);
  if (isEngramPluginId(hook.key)) return true;
  if (hook.command !== null) return isEngramCommand(hook.command);
  return knownKeys.has(hook.key);
}

/** Where and how to run `codex app-server`. */
export interface AppServerOptions {
  codexBin: string;
  env: EngramEnv;
  vars: Vars;
  /** The folder whose hooks are listed (project hooks depend on it). */
  cwd: string;
  timeoutMs?: number;
}

const CLIENT_INFO = { name: 'engram', title: 'Engram', version: VERSION };

/** Codex must see the same HOME and CODEX_HOME Engram read its configuration from. */
const childEnv = (options: AppServerOptions): Vars => ({ ...options.vars, HOME: options.env.userHome, CODEX_HOME: options.env.codexHome });

/** Kills the child's whole process group: the npm `codex` launcher is Node, which starts the native binary. */
const killGroup = (child: ChildProcess, signal: NodeJS.Signals): void => {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
};

/** Ends the conversation: closing stdin makes app-server exit; whatever is left after a second is killed. */
async function stopAppServer(child: ChildProcess): Promise<void> {
  // A child that never started (spawn error) has no pid and will not exit.
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    child.stdin?.end();
    await new Promise<void>((done) => {
      const timer = setTimeout(done, 1000);
      child.once('exit', () => {
        clearTimeout(timer);
        done();
      });
    });
  }
  killGroup(child, 'SIGKILL');
}

type Call = (method: string, params: unknown) => Promise<unknown>;

/**
 * Runs one JSON-RPC conversation with `codex app-server` (one JSON object per line on stdin/stdout): `initialize`,
 * `initialized`, then `talk`. The whole conversation has a deadline, and the child (its process group) is always
 * stopped before this returns, so nothing is left running.
 */
export async function withAppServer<T>(options: AppServerOptions, talk: (call: Call) => Promise<T>): Promise<T> {
  const timeoutMs = options.timeoutMs ?? TRUST_TIMEOUT_MS;
  const child = spawn(options.codexBin, ['app-server'], {
    cwd: options.cwd,
    env: childEnv(options),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let failure: EngramError | undefined;
  let stderr = '';
  let buffer = '';
  let nextId = 1;
  const failAll = (error: EngramError): void => {
    failure ??= error;
    for (const waiter of pending.values()) waiter.reject(failure);
    pending.clear();
  };
  child.on('error', (error: NodeJS.ErrnoException) =>
    failAll(
      error.code === 'ENOENT'
        ? new EngramError('NOT_FOUND', `cannot run ${options.codexBin}: not found; ${NO_CODEX_HINT}`)
        : new EngramError('IO', `cannot run ${options.codexBin} app-server: ${error.message}`, { cause: error }),
    ),
  );
  child.on('exit', (code, signal) =>
    failAll(new EngramError('IO', `codex app-server exited (${code ?? signal}) before answering${stderr ? `: ${stderr.trim().slice(-500)}` : ''}`)),
  );
  child.stdin?.on('error', () => {});
  child.stderr?.on('data', (data: Buffer) => {
    stderr = (stderr + data.toString()).slice(-4000);
  });
  child.stdout?.on('data', (data: Buffer) => {
    buffer += data.toString();
    for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      let message: { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      // Answers carry our id and no method; notifications and server requests are not ours to handle.
      if (typeof message.id !== 'number' || message.method !== undefined) continue;
      const waiter = pending.get(message.id);
      if (!waiter) continue;
      pending.delete(message.id);
      if (message.error !== undefined) waiter.reject(new EngramError('IO', `codex app-server refused: ${JSON.stringify(message.error)}`));
      else waiter.resolve(message.result);
    }
  });
  const send = (message: object): void => {
    child.stdin?.write(`${JSON.stringify(message)}\n`);
  };
  const call: Call = (method, params) =>
    new Promise((resolveCall, rejectCall) => {
      if (failure) return rejectCall(failure);
      const id = nextId++;
      pending.set(id, {
        resolve: resolveCall,
        reject: (error) => rejectCall(new EngramError(error instanceof EngramError ? error.code : 'IO', `${method}: ${error.message}`)),
      });
      send({ id, method, params });
    });

  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new EngramError('IO', `codex app-server did not answer within ${timeoutMs / 1000} s; ${NO_CODEX_HINT}`);
      failAll(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    const conversation = (async () => {
      await call('initialize', { clientInfo: CLIENT_INFO, capabilities: null });
      send({ method: 'initialized' });
      return talk(call);
    })();
    return await Promise.race([conversation, deadline]);
  } finally {
    clearTimeout(timer);
    await stopAppServer(child);
  }
}

/** Lists the hooks Codex sees for `options.cwd`, through app-server. */
export async function listCodexHooks(options: AppServerOptions): Promise<CodexHookListing> {
  return withAppServer(options, async (call) => parseHookListing(await call('hooks/list', { cwds: [options.cwd] })));
}

/**
 * A small Node program that holds a fixed conversation with app-server: it writes every message, keeps stdin open
 * until each request is answered (app-server exits on end of input without answering), prints the answers as JSON
 * and stops the child's process group. It exists so doctor, which is synchronous, can ask Codex through spawnSync.
 */
const PUMP = String.raw`
const { spawn } = require('node:child_process');
const [bin, timeoutText] = process.argv.slice(1);
let input = '';
process.stdin.on('data', (d) => (input += d)).on('end', () => {
  const messages = JSON.parse(input);
  const waiting = new Set(messages.filter((m) => m.id !== undefined).map((m) => m.id));
  const answers = {};
  let done = false, exited = false, buffer = '';
  const child = spawn(bin, ['app-server'], { stdio: ['pipe', 'pipe', 'ignore'], detached: true });
  const killGroup = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch {} };
  const finish = (error) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    const out = JSON.stringify(error ? { error, answers } : { answers });
    const end = () => { killGroup(); process.stdout.write(out, () => process.exit(0)); };
    if (exited || !child.pid) return end();
    child.stdin.end();
    child.once('exit', end);
    setTimeout(end, 1000);
  };
  const timer = setTimeout(() => finish('timeout'), Number(timeoutText));
  child.on('error', (e) => finish(e.code === 'ENOENT' ? 'ENOENT' : e.message));
  child.on('exit', (code) => { exited = true; finish('codex app-server exited (' + code + ') before answering'); });
  child.stdin.on('error', () => {});
  child.stdout.on('data', (d) => {
    buffer += d;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      let m;
      try { m = JSON.parse(line); } catch { continue; }
      if (!m || m.method !== undefined || !waiting.has(m.id)) continue;
      answers[m.id] = m;
      waiting.delete(m.id);
      if (waiting.size === 0) finish();
    }
  });
  for (const m of messages) child.stdin.write(JSON.stringify(m) + '\n');
});
`;

const PumpOutputSchema = z.object({
  error: z.string().optional(),
  answers: z.record(z.string(), z.looseObject({ result: z.unknown().optional(), error: z.unknown().optional() })),
});

/** {@link listCodexHooks} for synchronous callers (doctor): the same conversation, run by a helper Node process. */
export function listCodexHooksSync(options: AppServerOptions): CodexHookListing {
  const timeoutMs = options.timeoutMs ?? DOCTOR_TIMEOUT_MS;
  const messages = [
    { id: 1, method: 'initialize', params: { clientInfo: CLIENT_INFO, capabilities: null } },
    { method: 'initialized' },
    { id: 2, method: 'hooks/list', params: { cwds: [options.cwd] } },
  ];
  const run = spawnSync(process.execPath, ['-e', PUMP, options.codexBin, String(timeoutMs)], {
    input: JSON.stringify(messages),
    cwd: options.cwd,
    env: childEnv(options),
    encoding: 'utf8',
    // The helper has its own deadline and cleans up; this one only guards against the helper itself hanging.
    timeout: timeoutMs + 3000,
    maxBuffer: 64 * 1024 * 1024,
  });
  let output: z.infer<typeof PumpOutputSchema>;
  try {
    output = PumpOutputSchema.parse(JSON.parse(run.stdout));
  } catch {
    const why = run.error?.message ?? `helper exited ${run.status ?? run.signal}${run.stderr ? `: ${run.stderr.trim().slice(-300)}` : ''}`;
    throw new EngramError('IO', `could not ask codex app-server (${why})`);
  }
  if (output.error === 'ENOENT') throw new EngramError('NOT_FOUND', `cannot run ${options.codexBin}: not found`);
  if (output.error === 'timeout') throw new EngramError('IO', `codex app-server did not answer within ${timeoutMs / 1000} s`);
  if (output.error) throw new EngramError('IO', output.error);
  const answer = output.answers['2'];
  if (!answer || answer.error !== undefined) throw new EngramError('IO', `codex app-server refused hooks/list: ${JSON.stringify(answer?.error)}`);
  return parseHookListing(answer.result);
}

/** One of Engram's hooks in a trust report. */
export interface TrustedHook {
  key: string;
  event: string;
  origin: string;
  command: string | null;
}

/** What `engram hooks trust --agent codex` did. */
export interface TrustReport {
  codex: string;
  cwd: string;
  /** Trusted now, confirmed by listing again. */
  trusted: TrustedHook[];
  already_trusted: TrustedHook[];
  /** Still not trusted after the write (or not trustable here), with Codex's status. */
  failed: Array<TrustedHook & { reason: string }>;
  warnings: string[];
}

const asTrusted = (hook: CodexHook): TrustedHook => ({ key: hook.key, event: hook.event, origin: hook.origin, command: hook.command });

/**
 * Trusts Engram's Codex hooks the way Codex's own /hooks screen does: lists them through app-server, writes each
 * untrusted or modified one's `currentHash` as its `trusted_hash` (`config/batchWrite` upsert into `hooks.state`),
 * and lists again to confirm. The hash is always Codex's; Engram never computes it. Only Engram's hooks are touched.
 * Callers must only run this on the user's explicit request: it is the user's consent to run these hooks.
 */
export async function trustCodexHooks(options: AppServerOptions & { knownKeys?: ReadonlySet<string> }): Promise<TrustReport> {
  const knownKeys = options.knownKeys ?? new Set<string>();
  return withAppServer(options, async (call) => {
    const list = async (): Promise<CodexHookListing> => parseHookListing(await call('hooks/list', { cwds: [options.cwd] }));
    const before = await list();
    const ours = before.hooks.filter((hook) => isEngramCodexHook(hook, knownKeys));
    if (ours.length === 0) {
      throw new EngramError(
        'NOT_FOUND',
        `Codex lists no Engram hooks for ${options.cwd}: run engram hooks install --agent codex (or install the engram plugin) first; ` +
          'hooks in <repository>/.codex/ load only when Codex trusts the project',
      );
    }
    const warnings = [...before.warnings];
    const failed: TrustReport['failed'] = [];
    for (const hook of ours.filter((candidate) => !candidate.enabled)) {
      failed.push({ ...asTrusted(hook), reason: 'disabled in Codex (a disabled plugin or hook); enable it first' });
    }
    const active = ours.filter((hook) => hook.enabled);
    const already = active.filter((hook) => hook.managed || hook.trust === 'trusted' || hook.trust === 'managed');
    const todo = active.filter((hook) => !already.includes(hook));
    const report = (trusted: TrustedHook[]): TrustReport => ({
      codex: options.codexBin,
      cwd: options.cwd,
      trusted,
      already_trusted: already.map(asTrusted),
      failed,
      warnings,
    });
    if (todo.length === 0) return report([]);

    const state = Object.fromEntries(todo.map((hook) => [hook.key, { trusted_hash: hook.current_hash }]));
    await call('config/batchWrite', { edits: [{ keyPath: 'hooks.state', value: state, mergeStrategy: 'upsert' }] });
    const after = new Map((await list()).hooks.map((hook) => [hook.key, hook]));
    const trusted: TrustedHook[] = [];
    for (const hook of todo) {
      const now = after.get(hook.key);
      if (now?.trust === 'trusted') trusted.push(asTrusted(now));
      else failed.push({ ...asTrusted(hook), reason: now ? `Codex still reports it ${now.trust}` : 'Codex no longer lists it' });
    }
    return report(trusted);
  });
}
