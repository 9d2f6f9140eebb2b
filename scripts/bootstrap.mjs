#!/usr/bin/env node
// First-run bootstrap of an Engram install folder. A marketplace install arrives without dependencies, a compiled
// native addon or dist/ (Claude Code at most runs `npm ci --ignore-scripts`; Codex runs nothing), and the folder
// itself must stay exactly as installed: Codex fingerprints a plugin's files to trust its hooks, and a symlink in
// node_modules/.bin or a new dist/ makes every hook fail. So this installs the dependencies (with their install
// scripts, so the SQLite addon is compiled) and builds dist/ in a *runtime folder* outside the install folder —
// `<plugin data>/runtime/<version>-<lock hash>/` (PLUGIN_DATA / CLAUDE_PLUGIN_DATA) or
// `$ENGRAM_HOME/runtime/<version>-<lock hash>/` — built under a temporary name and renamed into place when complete,
// then records where it is (scripts/install-state.mjs). A runtime another folder already built for the same key is
// linked, not built again. Hooks start this in the background on first use and stay silent until it has finished;
// bin/engram runs it in the foreground (--wait: a bootstrap already running is waited for).
//
// The one exception is a source checkout that ran ./install.sh (its own node_modules/ and dist/): when its addon no
// longer loads (a Node upgrade), the addon is rebuilt where it is, as ./install.sh would.
//
//   node scripts/bootstrap.mjs [--reason TEXT] [--rebuild-native] [--wait]
//
// One bootstrap per runtime key at a time (a lock folder in $ENGRAM_HOME/bootstrap/); the outcome is written to
// $ENGRAM_HOME/bootstrap/<key>.json, which `engram doctor` and `engram status` report; npm's output goes to
// $ENGRAM_HOME/logs/bootstrap.log.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BUILD_INPUTS,
  bootstrapFiles,
  collectOldRuntimes,
  engramHome,
  linkRuntime,
  locateRuntime,
  lockIsHeld,
  missingFiles,
  RUNTIME_STAMP,
  runtimeBase,
  STALE_LOCK_MS,
} from './install-state.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const reason = args.includes('--reason') ? args[args.indexOf('--reason') + 1] : 'manual';
const rebuildNative = args.includes('--rebuild-native');
const wait = args.includes('--wait');
const home = engramHome();
const files = bootstrapFiles(root, home);
const started = new Date();

const say = (message) => process.stdout.write(`[engram bootstrap ${new Date().toISOString()}] ${message}\n`);
let runtimeDir = null;
const writeState = (state) => {
  mkdirSync(dirname(files.state), { recursive: true, mode: 0o700 });
  const record = { root, key: files.key, runtime: runtimeDir, reason, pid: process.pid, started_at: started.toISOString(), ...state };
  writeFileSync(files.state, `${JSON.stringify(record, null, 2)}\n`);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** npm needs Node's headers to compile better-sqlite3 offline; the Debian node package ships them in /usr. */
function npmEnv() {
  const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
  if (!env.npm_config_nodedir && existsSync('/usr/include/node/node.h')) env.npm_config_nodedir = '/usr';
  return env;
}

function run(cwd, command, commandArgs) {
  say(`$ ${command} ${commandArgs.join(' ')}   (in ${cwd})`);
  const result = spawnSync(command, commandArgs, { cwd, env: npmEnv(), stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.error) throw new Error(`${command} could not start: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${commandArgs.join(' ')} exited with ${result.status ?? result.signal}`);
}

function nativeLoads(dir) {
  const probe = "const D=require('better-sqlite3');new D(':memory:').close();require('sqlite-vec')";
  return spawnSync(process.execPath, ['-e', probe], { cwd: dir, stdio: 'ignore' }).status === 0;
}

/** Takes the key's lock; with --wait, waits for a running bootstrap to finish first. Returns false to leave. */
async function takeLock() {
  mkdirSync(dirname(files.lock), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + STALE_LOCK_MS;
  let announced = false;
  for (;;) {
    try {
      mkdirSync(files.lock);
      writeFileSync(join(files.lock, 'pid'), String(process.pid));
      return true;
    } catch {
      if (!lockIsHeld(files.lock)) {
        rmSync(files.lock, { recursive: true, force: true });
        continue;
      }
      if (!wait || Date.now() > deadline) {
        say('another bootstrap is running for this version; leaving it to finish');
        return false;
      }
      if (!announced) say('another bootstrap is running for this version; waiting for it');
      announced = true;
      await sleep(1000);
    }
  }
}

/** Temporary runtime folders (`<key>.partial-<pid>`) whose bootstrap died, for this key. */
function removeAbandonedPartials(base, key) {
  let names = [];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) {
    const match = new RegExp(`^${key.replace(/[.+]/g, '\\$&')}\\.(partial|old)-(\\d+)$`).exec(name);
    if (!match || Number(match[2]) === process.pid) continue;
    try {
      process.kill(Number(match[2]), 0);
    } catch (error) {
      if (error.code === 'ESRCH') rmSync(join(base, name), { recursive: true, force: true });
    }
  }
}

/** A source checkout that ran ./install.sh: its own dependencies and bundles (only its addon may need a rebuild). */
function rebuildInPlace(steps) {
  runtimeDir = root;
  if (rebuildNative || !nativeLoads(root)) {
    run(root, 'npm', ['rebuild', 'better-sqlite3']);
    steps.push('npm rebuild better-sqlite3 (in place)');
    if (!nativeLoads(root)) throw new Error('better-sqlite3 still does not load after rebuilding it');
  }
}

/** Installs and builds a new runtime folder for the key under a temporary name, then renames it into place. */
function buildRuntime(steps) {
  const base = runtimeBase(process.env, home);
  const target = join(base, files.key);
  runtimeDir = target;
  writeState({ status: 'running' });
  mkdirSync(base, { recursive: true, mode: 0o700 });
  removeAbandonedPartials(base, files.key);
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  for (const name of BUILD_INPUTS) {
    if (existsSync(join(root, name))) cpSync(join(root, name), join(partial, name), { recursive: true, dereference: true });
  }
  say(`building the runtime ${target} from ${root}`);
  run(partial, 'npm', ['ci', '--include=dev', '--no-audit', '--no-fund', '--loglevel=error']);
  steps.push('npm ci');
  if (!nativeLoads(partial)) {
    run(partial, 'npm', ['rebuild', 'better-sqlite3']);
    steps.push('npm rebuild better-sqlite3');
    if (!nativeLoads(partial)) throw new Error('better-sqlite3 still does not load after rebuilding it');
  }
  run(partial, process.execPath, [join(partial, 'scripts', 'build.mjs')]);
  steps.push('build');
  // The build tools (esbuild, TypeScript, vitest) are not needed to run: about a fifth of the folder.
  run(partial, 'npm', ['prune', '--omit=dev', '--no-audit', '--no-fund', '--loglevel=error']);
  steps.push('npm prune --omit=dev');
  const missing = missingFiles(partial);
  if (missing.length > 0) throw new Error(`still missing after bootstrap: ${missing.join(', ')}`);
  writeFileSync(
    join(partial, RUNTIME_STAMP),
    `${JSON.stringify({ key: files.key, built_from: root, node: process.version, node_modules_abi: process.versions.modules, built_at: new Date().toISOString() }, null, 2)}\n`,
  );
  // An incomplete folder under the final name (a runtime deleted in part) is moved aside, then replaced.
  if (existsSync(target)) {
    const old = `${target}.old-${process.pid}`;
    renameSync(target, old);
    rmSync(old, { recursive: true, force: true });
  }
  renameSync(partial, target);
  linkRuntime(root, target, files.key, home);
}

if (!(await takeLock())) process.exit(0);

const inPlace = existsSync(join(root, 'dist', 'hooks', 'fast.cjs')) && existsSync(join(root, 'node_modules', 'better-sqlite3', 'package.json'));
const found = inPlace ? null : locateRuntime(root, { home });
if (found && !rebuildNative && nativeLoads(found.dir)) {
  // Built already (by the bootstrap this one waited for, the other agent, or another copy of this version), and
  // linked by locateRuntime: nothing to do, and the state file keeps describing the bootstrap that built it.
  say(`${root} runs from ${found.dir} (built already; linked)`);
  rmSync(files.lock, { recursive: true, force: true });
  process.exit(0);
}

let exitCode = 0;
try {
  say(`bootstrapping ${root} (key ${files.key}, reason: ${reason}, node ${process.version})`);
  writeState({ status: 'running' });
  const steps = [];
  if (inPlace) {
    rebuildInPlace(steps);
  } else if (found) {
    // Built already, but its addon does not load with this Node (an upgrade): rebuilt where it is.
    runtimeDir = found.dir;
    run(found.dir, 'npm', ['rebuild', 'better-sqlite3']);
    steps.push(`npm rebuild better-sqlite3 (in ${basename(found.dir)})`);
    if (!nativeLoads(found.dir)) throw new Error('better-sqlite3 still does not load after rebuilding it');
  } else {
    buildRuntime(steps);
  }
  if (runtimeDir !== root) {
    for (const dir of collectOldRuntimes(files.key, home)) {
      say(`removed ${dir}: no install folder uses it any more`);
      steps.push(`removed an unused runtime (${basename(dir)})`);
    }
  }
  const seconds = (Date.now() - started.getTime()) / 1000;
  writeState({ status: 'done', steps, finished_at: new Date().toISOString(), seconds });
  say(`done in ${seconds.toFixed(1)} s (${steps.length ? steps.join(', ') : 'nothing to do'}); runtime ${runtimeDir}`);
  // The strong embedding model when the hub can be reached; one line and the offline model when not (never fatal).
  // Run from the runtime folder: a plugin install's own folder has no dist/.
  spawnSync(process.execPath, [join(runtimeDir, 'dist', 'cli.mjs'), 'model', 'pull', '--quiet', '--if-reachable'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], timeout: 11 * 60_000 });
} catch (error) {
  exitCode = 1;
  writeState({ status: 'failed', error: error.message, finished_at: new Date().toISOString() });
  say(`failed: ${error.message}`);
  if (runtimeDir && runtimeDir !== root) rmSync(`${runtimeDir}.partial-${process.pid}`, { recursive: true, force: true });
} finally {
  rmSync(files.lock, { recursive: true, force: true });
}
process.exit(exitCode);
