// What an Engram install needs before its hooks and CLI can run, where that lives, and how to start the first-run
// bootstrap that provides it. Shared by hooks/run.cjs, bin/engram, scripts/bootstrap.mjs and the health service;
// plain JavaScript with no dependencies, because it runs before `npm ci` and before the build.
//
// An install folder (the plugin root: hooks/, bin/, scripts/, src/) runs its code from a *runtime*: dist/ and
// node_modules/. A source checkout that ran ./install.sh is its own runtime ("in place"). Any other install folder
// stays exactly as the agent installed it — Codex fingerprints a plugin's files to trust its hooks, and a symlink
// in node_modules/.bin or a new dist/ breaks that — so the bootstrap installs and builds into a runtime folder
// outside it, keyed by the version and the lockfile: `<plugin data>/runtime/<key>/` when the agent gives the plugin a
// data folder (PLUGIN_DATA for Codex, CLAUDE_PLUGIN_DATA for Claude Code; it survives plugin updates), else
// `$ENGRAM_HOME/runtime/<key>/`. `$ENGRAM_HOME/runtime/` also holds `<key>.json` (where the runtime of a key was
// built, so the CLI run from a shell, without the agent's variables, and the other agent find it) and
// `roots/<folder key>.json` (the runtime of one install folder for the CLI in a shell; a plugin's hooks read the same
// pointer in the plugin data folder). The hot half of the lookup, findRuntime, lives in hooks/run.cjs and is
// re-exported here (see that file for why).
// node:child_process and node:crypto are loaded where they are used (process.getBuiltinModule): the hooks' in-process
// path bundles this file and would otherwise load both (~4–10 ms with the streams they pull) on every fallback.
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { engramHome } from './home.mjs';
// A static import (not createRequire), so esbuild bundles it into dist/ with the rest of this file.
import launcher from '../hooks/run.cjs';

/** The hook entries (`node hooks/run.cjs <entry>`), one per event Engram handles; plugin.json registers them. */
export const HOOK_ENTRIES = Object.keys(launcher.HOOK_ENTRIES);

/** Packages that stay outside the bundles and must be installed (and, for better-sqlite3, compiled). */
export const RUNTIME_PACKAGES = ['better-sqlite3', 'sqlite-vec'];

/** The compiled better-sqlite3 addon, relative to a runtime folder. */
export const NATIVE_BINDING = launcher.NATIVE_BINDING;

/** The bundles a runtime folder must hold. */
export const BUNDLES = ['dist/cli.mjs', 'dist/server.mjs', 'dist/bm25-worker.mjs', 'dist/text-index-worker.mjs', 'dist/mcp-inprocess.mjs', 'dist/hooks/fast.cjs', 'dist/hooks/inprocess.cjs'];

/** What the bootstrap copies from the install folder into a new runtime folder to install and build there. */
export const BUILD_INPUTS = ['package.json', 'package-lock.json', 'plugin.json', 'tsconfig.json', 'src', 'scripts', 'hooks'];

/** The file a finished runtime folder holds: its key, and what built it. Written last, before the folder is renamed
 * into place. */
export const RUNTIME_STAMP = 'runtime.json';

/** A failed bootstrap is not retried by hooks for this long, so a broken machine is not hammered by every event. */
export const RETRY_AFTER_MS = 10 * 60 * 1000;

/** A bootstrap lock older than this is considered abandoned (npm ci plus a native build finish well within it). */
export const STALE_LOCK_MS = 20 * 60 * 1000;

export { engramHome } from './home.mjs';
export const { findRuntime, folderKey, lockStamp, pointerFile } = launcher;

/** The data folder the agent gives its plugin (Codex: PLUGIN_DATA; Claude Code: CLAUDE_PLUGIN_DATA), or null; the
 * launcher's pointerFile reads the same two variables. */
export function pluginDataDir(env = process.env) {
  for (const name of ['PLUGIN_DATA', 'CLAUDE_PLUGIN_DATA']) {
    const value = env[name]?.trim();
    if (value) return resolve(value);
  }
  return null;
}

/**
 * The runtime key of an install folder: its version and the first 12 hex digits of its lockfile's SHA-256. Two
 * folders with the same key (the plugin cache and a folder marketplace, Codex and Claude Code) share one runtime.
 */
export function runtimeKey(root) {
  let version = 'unknown';
  try {
    const declared = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
    if (typeof declared === 'string' && /^[0-9A-Za-z.+-]{1,64}$/.test(declared)) version = declared;
  } catch {
    // No package.json: the bootstrap will say what is wrong.
  }
  let lock = '';
  try {
    lock = readFileSync(join(root, 'package-lock.json'), 'utf8');
  } catch {
    // No lockfile: `npm ci` will refuse, and the state says so.
  }
  return `${version}-${process.getBuiltinModule('node:crypto').createHash('sha256').update(lock).digest('hex').slice(0, 12)}`;
}

/** Where a runtime for this environment is built: the plugin data folder when the agent gives one, else the home. */
export function runtimeBase(env = process.env, home = engramHome(env)) {
  const data = pluginDataDir(env);
  return data ? join(data, 'runtime') : join(home, 'runtime');
}

/** What a runtime folder lacks to run (runtime packages, the native addon, the bundles), relative to it. */
export function missingFiles(dir) {
  const missing = [];
  for (const name of RUNTIME_PACKAGES) {
    if (!existsSync(join(dir, 'node_modules', name, 'package.json'))) missing.push(`node_modules/${name}`);
  }
  if (!existsSync(join(dir, NATIVE_BINDING))) missing.push(NATIVE_BINDING);
  for (const file of BUNDLES) if (!existsSync(join(dir, file))) missing.push(file);
  return missing;
}

/** The stamp of a runtime folder, or null. */
export function readRuntimeStamp(dir) {
  try {
    return JSON.parse(readFileSync(join(dir, RUNTIME_STAMP), 'utf8'));
  } catch {
    return null;
  }
}

/** True when `dir` is a finished runtime for `key`. */
export function isRuntimeFor(dir, key) {
  return readRuntimeStamp(dir)?.key === key && missingFiles(dir).length === 0;
}

/** Writes a small JSON file atomically (a reader sees the old file or the new one, never half of one). */
function writeJson(file, value) {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
}

/** Where the runtime of `key` was built, as the bootstrap recorded it in the home. */
function registryFile(key, home) {
  return join(home, 'runtime', `${key}.json`);
}

/** The pointer of install folder `root` in the home (what the CLI in a shell reads). */
const homePointer = (root, home) => pointerFile(root, { HOME: home, ENGRAM_HOME: home });

/**
 * Records that the install folder `root` runs from the runtime `dir` — its pointer in the home, and in the plugin data
 * folder when `env` names one (what the plugin's hooks read) — and that the runtime of `key` lives in `dir` (so
 * other install folders with the same key find it).
 */
export function linkRuntime(root, dir, key, home = engramHome(), env = process.env) {
  writeJson(registryFile(key, home), { key, dir });
  const pointer = { root, dir, key, lock: lockStamp(root), linked_at: new Date().toISOString() };
  writeJson(homePointer(root, home), pointer);
  if (pluginDataDir(env)) writeJson(pointerFile(root, env), pointer);
}

/** A runtime key as the bootstrap names folders: `<version>-<12 hex>`. */
const KEY_NAME = /^[0-9A-Za-z.+-]{1,64}-[0-9a-f]{12}$/;

/**
 * Removes the runtimes this home recorded that nothing uses any more, after a bootstrap built or linked `keep`: a
 * plugin update leaves the previous version's runtime (a few hundred MB) in the plugin data folder, which survives
 * updates. A runtime stays while any install folder's pointer still names it and that folder still exists with the
 * same lockfile, or while a process runs from it (this home's server, a drain). Returns the folders removed.
 */
export function collectOldRuntimes(keep, home = engramHome()) {
  const removed = [];
  let names = [];
  try {
    names = readdirSync(join(home, 'runtime'));
  } catch {
    return removed;
  }
  const inUse = new Set([keep]);
  // Every install folder with a runtime has a pointer in the home (linkRuntime writes it whatever else it writes).
  try {
    for (const name of readdirSync(join(home, 'runtime', 'roots'))) {
      try {
        const pointer = JSON.parse(readFileSync(join(home, 'runtime', 'roots', name), 'utf8'));
        if (existsSync(pointer.root) && pointer.lock === lockStamp(pointer.root)) inUse.add(pointer.key);
        else rmSync(join(home, 'runtime', 'roots', name), { force: true }); // its folder is gone or changed
      } catch {
        // Damaged: the launcher rewrites it.
      }
    }
  } catch {
    // No pointers yet.
  }
  const running = runningCommandLines();
  for (const name of names.filter((entry) => entry.endsWith('.json'))) {
    const key = name.slice(0, -'.json'.length);
    if (!KEY_NAME.test(key) || inUse.has(key)) continue;
    let dir;
    try {
      dir = JSON.parse(readFileSync(join(home, 'runtime', name), 'utf8')).dir;
    } catch {
      continue;
    }
    if (typeof dir !== 'string' || running.some((command) => command.includes(`${dir}/`))) continue;
    // Only a folder that is a runtime of that key is removed, whatever the registry says.
    if (existsSync(dir) && readRuntimeStamp(dir)?.key !== key) continue;
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(home, 'runtime', name), { force: true });
    removed.push(dir);
  }
  return removed;
}

/** The command lines of this user's processes (Linux /proc; elsewhere none are known, so nothing counts as idle). */
function runningCommandLines() {
  if (process.platform !== 'linux') return ['/'];
  const commands = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      commands.push(readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' '));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return commands;
}

/**
 * The runtime of an install folder: in place, its pointer, or a finished runtime with its key found where this
 * environment's bootstrap would build one or where another recorded one (a folder marketplace's source folder and
 * the agent's plugin copy, or the CLI in a shell and the agent's hooks, share one). A runtime found other than
 * through the pointer is linked, so the next hook finds it in a few stat calls. Null when none is ready.
 * @returns {{ dir: string, kind: 'in-place' | 'runtime', key?: string } | null}
 */
export function locateRuntime(root, options = {}) {
  const env = options.env ?? process.env;
  const home = options.home ?? engramHome(env);
  const known = findRuntime(root, { ...env, ENGRAM_HOME: home });
  if (known && (known.kind === 'in-place' || missingFiles(known.dir).length === 0)) return known;
  const key = runtimeKey(root);
  const candidates = [];
  for (const file of [homePointer(root, home), registryFile(key, home)]) {
    try {
      const recorded = JSON.parse(readFileSync(file, 'utf8'));
      if (typeof recorded.dir === 'string') candidates.push(recorded.dir);
    } catch {
      // Never linked or built for this home.
    }
  }
  candidates.push(join(runtimeBase(env, home), key), join(home, 'runtime', key));
  for (const dir of candidates) {
    if (!isRuntimeFor(dir, key)) continue;
    if (options.link !== false) {
      try {
        linkRuntime(root, dir, key, home, env);
      } catch {
        // An unwritable home: found anyway, looked up the slow way again next time.
      }
    }
    return { dir, kind: 'runtime', key };
  }
  return null;
}

/**
 * Whether an install folder can run, and from where. `missing` lists what the runtime it would use lacks: the
 * folder's own files when it has a node_modules/ of its own (a source checkout part-way through ./install.sh), else
 * the runtime folder its bootstrap would build.
 * @returns {{ ready: boolean, missing: string[], runtime: { dir: string, kind: string, key?: string } | null, expected: string }}
 */
export function checkInstall(root, options = {}) {
  const env = options.env ?? process.env;
  const home = options.home ?? engramHome(env);
  const found = locateRuntime(root, { env, home, link: options.link });
  if (found) {
    const missing = missingFiles(found.dir);
    return { ready: missing.length === 0, missing, runtime: found, expected: found.dir };
  }
  if (existsSync(join(root, 'node_modules'))) return { ready: false, missing: missingFiles(root), runtime: null, expected: root };
  const expected = join(runtimeBase(env, home), runtimeKey(root));
  return { ready: false, missing: [`runtime ${expected} (dependencies, native addon and bundles)`], runtime: null, expected };
}

/**
 * Where the bootstrap of one runtime key keeps its state, lock and log: one bootstrap per key at a time, whichever
 * install folder or agent started it.
 */
export function bootstrapFiles(root, home = engramHome()) {
  const key = runtimeKey(root);
  return {
    key,
    state: join(home, 'bootstrap', `${key}.json`),
    lock: join(home, 'bootstrap', `${key}.lock`),
    log: join(home, 'logs', 'bootstrap.log'),
  };
}

/** The last recorded bootstrap state of an install folder's runtime, or null. */
export function readBootstrapState(root, home = engramHome()) {
  try {
    return JSON.parse(readFileSync(bootstrapFiles(root, home).state, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Every bootstrap this home recorded, newest first, with `running` true only when its process still holds the lock
 * (a bootstrap killed mid-way leaves `status: running` behind).
 */
export function listBootstraps(home = engramHome()) {
  const dir = join(home, 'bootstrap');
  let names = [];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
  const states = [];
  for (const name of names) {
    try {
      const state = JSON.parse(readFileSync(join(dir, name), 'utf8'));
      const key = name.slice(0, -'.json'.length);
      states.push({ ...state, key, running: state.status === 'running' && lockIsHeld(join(dir, `${key}.lock`)) });
    } catch {
      // Being written, or damaged: skip.
    }
  }
  return states.sort((a, b) => String(b.started_at).localeCompare(String(a.started_at)));
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
  try {
    const files = bootstrapFiles(root, home);
    if (lockIsHeld(files.lock)) return 'running';
    const state = readBootstrapState(root, home);
    const finished = state && Date.parse(state.finished_at ?? '');
    if (!options.force && state?.status === 'failed' && Date.now() - finished < RETRY_AFTER_MS) return 'backoff';
    mkdirSync(join(home, 'logs'), { recursive: true, mode: 0o700 });
    const out = openSync(files.log, 'a', 0o600);
    const args = [join(root, 'scripts', 'bootstrap.mjs'), '--reason', options.reason ?? 'hook'];
    if (options.rebuildNative) args.push('--rebuild-native');
    const child = process.getBuiltinModule('node:child_process').spawn(process.execPath, args, {
      // Not the install folder: nothing is written there, and npm must not find its package.json by walking up.
      cwd: home,
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
