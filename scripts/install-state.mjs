// What an Engram install folder needs before its hooks and CLI can run, and how to start the first-run bootstrap
// that provides it. Shared by hooks/run.cjs, bin/engram and scripts/bootstrap.mjs; plain JavaScript with no
// dependencies, because it runs before `npm ci` and before the build.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { engramHome } from './home.mjs';

/** The hook entries (`node hooks/run.cjs <entry>`), one per event Engram handles; plugin.json registers them. */
export const HOOK_ENTRIES = ['session-start', 'user-prompt-submit', 'pre-tool-use', 'post-tool-use', 'post-tool-use-failure', 'stop', 'session-end'];

/** Packages that stay outside the bundles and must be installed (and, for better-sqlite3, compiled). */
export const RUNTIME_PACKAGES = ['better-sqlite3', 'sqlite-vec'];

/** The compiled better-sqlite3 addon, relative to the install folder. */
export const NATIVE_BINDING = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';

/** A failed bootstrap is not retried by hooks for this long, so a broken machine is not hammered by every event. */
export const RETRY_AFTER_MS = 10 * 60 * 1000;

/** A bootstrap lock older than this is considered abandoned (npm ci plus a native build finish well within it). */
export const STALE_LOCK_MS = 20 * 60 * 1000;

export { engramHome } from './home.mjs';

/**
 * What is missing for this install folder to run: runtime packages, the native addon, the bundles.
 * @param {string} root the install folder (the plugin root)
 * @returns {{ ready: boolean, missing: string[] }}
 */
export function checkInstall(root) {
  const missing = [];
  for (const name of RUNTIME_PACKAGES) {
    if (!existsSync(join(root, 'node_modules', name, 'package.json'))) missing.push(`node_modules/${name}`);
  }
  if (!existsSync(join(root, NATIVE_BINDING))) missing.push(NATIVE_BINDING);
  for (const file of ['dist/cli.mjs', 'dist/server.mjs', 'dist/hooks/fast.cjs', 'dist/hooks/inprocess.mjs']) {
    if (!existsSync(join(root, file))) missing.push(file);
  }
  return { ready: missing.length === 0, missing };
}

/**
 * Where the bootstrap of one install folder keeps its state, lock and log. Keyed by the folder, because each
 * plugin version lives in its own folder and needs its own build.
 */
export function bootstrapFiles(root, home = engramHome()) {
  const key = createHash('sha256').update(resolve(root)).digest('hex').slice(0, 16);
  return {
    key,
    state: join(home, 'bootstrap', `${key}.json`),
    lock: join(home, 'bootstrap', `${key}.lock`),
    log: join(home, 'logs', 'bootstrap.log'),
  };
}

/** The last recorded bootstrap state of an install folder, or null. */
export function readBootstrapState(root, home = engramHome()) {
  try {
    return JSON.parse(readFileSync(bootstrapFiles(root, home).state, 'utf8'));
  } catch {
    return null;
  }
}

/** True when a lock folder belongs to a live process and is recent. */
export function lockIsHeld(lockDir, now = Date.now()) {
  try {
    const age = now - statSync(lockDir).mtimeMs;
    const pid = Number(readFileSync(join(lockDir, 'pid'), 'utf8'));
    if (age > STALE_LOCK_MS || !Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else, so the lock is live.
    return error && error.code === 'EPERM';
  }
}

/**
 * Starts the bootstrap in a detached process unless one is running or one failed recently. Never throws and never
 * waits: hooks call it and exit at once.
 * @returns {'started' | 'running' | 'backoff' | 'error'}
 */
export function startBootstrap(root, options = {}) {
  const home = options.home ?? engramHome();
  const files = bootstrapFiles(root, home);
  try {
    if (lockIsHeld(files.lock)) return 'running';
    const state = readBootstrapState(root, home);
    const finished = state && Date.parse(state.finished_at ?? '');
    if (!options.force && state?.status === 'failed' && Date.now() - finished < RETRY_AFTER_MS) return 'backoff';
    mkdirSync(join(home, 'logs'), { recursive: true, mode: 0o700 });
    const out = openSync(files.log, 'a', 0o600);
    const child = spawn(process.execPath, [join(root, 'scripts', 'bootstrap.mjs'), '--reason', options.reason ?? 'hook'], {
      cwd: root,
      detached: true,
      stdio: ['ignore', out, out],
      env: { ...process.env, ENGRAM_HOME: home },
    });
    child.on('error', () => {});
    child.unref();
    return 'started';
  } catch {
    return 'error';
  }
}
