import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { hookCommand } from '../scripts/hook-registry.mjs';
import { openStore, type EngramError, type Store } from '../src/core/index.js';
import { runCli } from '../src/cli/program.js';
import { addEngram } from '../src/services/index.js';
import { bundleEntry } from '../scripts/bundle.mjs';
import { linkRuntime, RUNTIME_STAMP, runtimeKey } from '../scripts/install-state.mjs';

/** The repository root. */
export const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** ../shared beside the repository (fixtures, tools, models). */
export const SHARED = join(ROOT, '..', 'shared');

/** The pinned Claude Code CLI test/global-setup.ts installs (the cache fake-anthropic/run-claude.sh uses). */
export const CLAUDE_BIN =
  process.env.CLAUDE_BIN ?? join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? '', '.cache'), 'engram-test-claude-2.1.197', 'node_modules', '.bin', 'claude');

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
});

/** A temporary folder removed after the test. */
export function tempDir(prefix = 'engram-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A store in a fresh temporary home, closed after the test. */
export function tempStore(): Store {
  const store = openStore({ path: join(tempDir(), 'engram.db') });
  cleanups.push(() => store.close());
  return store;
}

/**
 * A home whose store another writer holds locked (an open IMMEDIATE transaction) and whose hooks give up after
 * `hookBusyMs`. The lock is released and the holder closed after the test.
 */
export function lockedHome(hookBusyMs: number): string {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ hooks: { busy_timeout_ms: hookBusyMs } }));
  const holder = openStore({ path: join(home, 'engram.db') });
  holder.db.exec('BEGIN IMMEDIATE');
  cleanups.push(() => {
    holder.db.exec('ROLLBACK');
    holder.close();
  });
  return home;
}

/** Runs `fn` and returns the error it threw, or undefined when it did not throw. */
export function thrown(fn: () => unknown): EngramError | undefined {
  try {
    fn();
  } catch (error) {
    return error as EngramError;
  }
  return undefined;
}

/** A clock that starts at a fixed instant and moves one second per call. */
export function steppingClock(start = '2026-11-01T10:00:00.000Z'): () => Date {
  let t = Date.parse(start);
  return () => new Date((t += 1000) - 1000);
}

/** Collects written text. */
export class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

/** Runs the CLI in-process against a home; returns exit code and output. */
export async function cli(
  argv: string[],
  options: { home: string; stdin?: string; cwd?: string; now?: () => Date; env?: Record<string, string> },
): Promise<{ code: number; stdout: string; stderr: string; json: any }> {
  const stdout = new Sink();
  const stderr = new Sink();
  const code = await runCli(argv, {
    stdin: Readable.from([options.stdin ?? '']),
    stdout,
    stderr,
    env: { HOME: options.home, ...options.env, ENGRAM_HOME: options.home },
    cwd: options.cwd ?? options.home,
    now: options.now ?? (() => new Date()),
  });
  let json: unknown;
  try {
    json = JSON.parse(stdout.text);
  } catch {
    json = undefined;
  }
  return { code, stdout: stdout.text, stderr: stderr.text, json };
}

/** Runs the real `bin/engram` in a child process. */
export function engramProcess(
  args: string[],
  options: { home: string; input?: string; cwd?: string; env?: Record<string, string> },
): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [join(ROOT, 'bin', 'engram'), ...args], {
    input: options.input ?? '',
    encoding: 'utf8',
    cwd: options.cwd ?? options.home,
    env: { ...process.env, HOME: options.home, ENGRAM_HOME: options.home, ...options.env },
    maxBuffer: 256 * 1024 * 1024,
  });
}

/** Runs one hook through the real launcher (hooks/run.cjs → dist/hooks/fast.cjs) with the given stdin. */
export function hookProcess(
  entry: string,
  stdin: string | Buffer,
  options: {
    home: string;
    agent?: 'claude' | 'codex';
    env?: Record<string, string>;
    timeoutMs?: number;
    root?: string;
    /** Let hooks use (and start) the background server; off by default so a test controls when one runs. */
    server?: boolean;
    /** Called with the hook process's pid as soon as it is started. */
    onSpawn?: (pid: number) => void;
    /** `sh`: the registered command line (the shell front, hooks/run.sh) through `sh -c`; default: the Node launcher. */
    front?: 'node' | 'sh';
  },
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const launcher = join(options.root ?? ROOT, 'hooks', 'run.cjs');
    const [program, args] =
      options.front === 'sh'
        ? ['/bin/sh', ['-c', hookCommand(options.root ?? ROOT, entry, options.agent ?? 'claude')]]
        : [process.execPath, [launcher, entry, '--agent', options.agent ?? 'claude']];
    const child = spawn(program, args, {
      env: {
        ...process.env,
        HOME: options.home,
        ENGRAM_HOME: options.home,
        ...(options.server ? { ENGRAM_SERVER: 'on' } : { ENGRAM_SERVER: 'off' }),
        ...options.env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);
  });
}

/**
 * A getter for a test script (a path under test/) bundled once per test process, inside the repository
 * (node_modules/.cache is ignored by git) so the bundle resolves native modules from here. The promise is shared, so
 * parallel callers wait for one build instead of racing to write the same file.
 */
export function bundledScript(script: string, name: string): () => Promise<string> {
  let built: Promise<string> | undefined;
  return () => (built ??= bundleEntry(join(ROOT, 'test', script), join(ROOT, 'node_modules', '.cache', 'engram-test', `${name}-${process.pid}.mjs`)));
}

/** test/_worker.ts, bundled once per test process. */
export const workerPath = bundledScript('_worker.ts', 'worker');

/** Runs the worker with arguments; resolves with its stdout, rejects on a non-zero exit. */
export async function runWorker(args: string[]): Promise<string> {
  const file = await workerPath();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`worker exited ${code}: ${err}`))));
  });
}

/** Offline embedding models (../shared/models, or $MODEL_DIR). Tests that need one skip, saying why, when absent. */
export const MODELS_DIR = process.env.MODEL_DIR ?? join(SHARED, 'models');
/** The offline models tests use (../shared/models/README.md). */
export type TestModel = 'static-use-256' | 'ctx-use-256';
/** What transformers.js reads from a model folder (config, tokenizer, the quantized ONNX graph). */
const MODEL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'];
const warned = new Set<string>();
/**
 * True when every model named is complete in MODELS_DIR: a test gates on each model it loads, not on one of them.
 * A missing one is named once per test file, with the file it lacks.
 */
export function hasModels(...models: TestModel[]): boolean {
  let all = true;
  for (const model of models) {
    const missing = MODEL_FILES.find((file) => !existsSync(join(MODELS_DIR, model, file)));
    if (missing === undefined) continue;
    all = false;
    if (!warned.has(model)) console.warn(`[engram tests] ${join(MODELS_DIR, model, missing)} is missing: tests that need ${model} are skipped`);
    warned.add(model);
  }
  return all;
}

/** Engrams added to a home's store (for hook tests). */
export function seed(home: string, drafts: Array<Parameters<typeof addEngram>[1]>): void {
  const store = openStore({ path: join(home, 'engram.db') });
  try {
    for (const draft of drafts) addEngram(store, draft);
  } finally {
    store.close();
  }
}

/** The running server of a home: its pid from run/server.json, or null. */
export function serverPid(home: string): number | null {
  try {
    return (JSON.parse(readFileSync(join(home, 'run', 'server.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

/** True while a process exists and is not a zombie waiting to be reaped (detached servers are reparented, and a
 * container's init may not reap them at once). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** Waits until `check` holds (a check that throws, e.g. on a file not written yet, does not), polling; throws with
 * `what` after the timeout. */
export async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const holds = (): boolean => {
    try {
      return check();
    } catch {
      return false;
    }
  };
  while (!holds()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits for a home's server to listen (and to have finished loading), returning its pid. */
export async function waitForServer(home: string): Promise<number> {
  // The pid the check saw, not a second read of server.json.
  let pid = 0;
  await until(() => (pid = serverPid(home) ?? 0) > 0 && existsSync(join(home, 'run', 'server.sock')), 'the server to listen');
  await until(() => readFileSync(join(home, 'logs', 'server.log'), 'utf8').includes('"server warm"'), 'the server to warm up', 30_000);
  return pid;
}

/** Stops a home's server (SIGTERM) and waits until its process is gone. */
export async function stopServer(home: string): Promise<void> {
  const pid = serverPid(home);
  if (pid === null) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  await until(() => !alive(pid), `server ${pid} to exit`);
}

/**
 * Every entry under `dir` (`.git` aside) → its content hash, `dir`, or `link:<target>`, with its mode: two digests are
 * equal only when the folders are byte-identical. Used to pin that Engram never writes into an install folder.
 */
export function folderDigest(dir: string): Record<string, string> {
  const digest: Record<string, string> = {};
  const walk = (folder: string, prefix: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (prefix === '' && entry.name === '.git') continue;
      const path = join(folder, entry.name);
      const name = `${prefix}${entry.name}`;
      const mode = (lstatSync(path).mode & 0o7777).toString(8);
      if (entry.isSymbolicLink()) digest[name] = `link:${readlinkSync(path)}`;
      else if (entry.isDirectory()) {
        digest[name] = `dir ${mode}`;
        walk(path, `${name}/`);
      } else digest[name] = `${createHash('sha256').update(readFileSync(path)).digest('hex')} ${mode}`;
    }
  };
  walk(dir, '');
  return digest;
}

/**
 * An install folder as an agent's plugin install leaves it: the launcher, scripts, CLI and manifests, no
 * node_modules/ and no dist/. `files` adds more of the repository.
 */
export function pluginFolder(files: string[] = []): string {
  const root = tempDir('engram-plugin-');
  for (const name of ['hooks', 'scripts', 'bin', 'package.json', 'package-lock.json', 'plugin.json', ...files]) {
    cpSync(join(ROOT, name), join(root, name), { recursive: true });
  }
  return root;
}

/**
 * A finished runtime folder for `root` as the bootstrap leaves it (dist/ copied from this checkout's build,
 * node_modules/ linked to this checkout's, the stamp), under `<base>/<key>`, linked for `root` in `home`. The real
 * bootstrap (npm ci, native build) is exercised end to end by the plugin-install tests. With `env` naming a plugin data
 * folder, the pointer is written there too, as a hook's bootstrap does.
 */
export function fakeRuntime(root: string, home: string, base = join(home, 'runtime'), env: Record<string, string> = {}): string {
  const key = runtimeKey(root);
  const dir = join(base, key);
  mkdirSync(dir, { recursive: true });
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, RUNTIME_STAMP), JSON.stringify({ key, built_from: root }));
  linkRuntime(root, dir, key, home, env);
  return dir;
}

/**
 * The environment for a process a test starts with an environment of its own: PATH, the package and agent CLI caches
 * (HOME is a throwaway folder during the run, see global-setup.ts), the HTTP port (any free one), the run's marker (the global teardown finds
 * Engram processes that outlived their test by it), then `extra`.
 */
export function processEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
  for (const name of ['XDG_CACHE_HOME', 'npm_config_cache', 'ENGRAM_TEST_RUN', 'ENGRAM_PORT']) {
    const value = process.env[name];
    if (value) env[name] = value;
  }
  return { ...env, ...extra };
}

/**
 * Processes (zombies aside) that belong to a scratch home: its path on their command line or in their environment
 * (HOME, ENGRAM_HOME, CODEX_HOME…). After a session that is none: no server, no hook, no bootstrap, no agent.
 */
export function processesOf(home: string): Array<{ pid: number; command: string }> {
  if (process.platform !== 'linux') return [];
  const found: Array<{ pid: number; command: string }> = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid || !alive(pid)) continue;
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const inHome = (value: string) => value === home || value.startsWith(`${home}/`);
      const mine = command.includes(`${home}/`) || environ.some((pair) => inHome(pair.slice(pair.indexOf('=') + 1)));
      if (mine && alive(pid)) found.push({ pid, command });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/**
 * True when process `pid` holds a connected Unix socket besides its stdio (Linux /proc): a hook waiting for the
 * server's answer. Its stdio does not count: Node gives a child's pipes as socketpairs.
 */
export function hasConnectedUnixSocket(pid: number): boolean {
  let inodes: string[];
  try {
    inodes = readdirSync(`/proc/${pid}/fd`)
      .filter((fd) => Number(fd) > 2)
      .map((fd) => {
        try {
          return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        } catch {
          return undefined;
        }
      })
      .filter((inode): inode is string => inode !== undefined);
  } catch {
    return false;
  }
  if (inodes.length === 0) return false;
  // /proc/net/unix: Num RefCount Protocol Flags Type St Inode Path; St 03 is SS_CONNECTED.
  return readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .slice(1)
    .some((line) => {
      const fields = line.trim().split(/\s+/);
      return fields[5] === '03' && inodes.includes(fields[6] ?? '');
    });
}

/**
 * Starts `node script …args` (a bundled child that serves something) and collects each JSON line it prints on stdout
 * into `lines`; resolves once it has printed `{"ready": …}`. The child is pushed onto `children` for the caller's
 * afterEach to kill.
 */
export async function spawnJsonLines(
  script: string,
  args: string[],
  children: ChildProcess[],
  waitingFor: string,
): Promise<{ child: ChildProcess; lines: Array<Record<string, unknown>> }> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const lines: Array<Record<string, unknown>> = [];
  let buffer = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
      lines.push(JSON.parse(buffer.slice(0, end)) as Record<string, unknown>);
      buffer = buffer.slice(end + 1);
    }
  });
  await until(() => lines.some((line) => line.ready), waitingFor);
  return { child, lines };
}
