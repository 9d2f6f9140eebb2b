#!/usr/bin/env node
// First-run bootstrap of an Engram install folder: installs the dependencies (with their install scripts, so the
// native SQLite addon is compiled), rebuilds the addon if it is missing or was built for another Node, and builds
// dist/. A Claude Code marketplace install copies the plugin and at most runs `npm ci --ignore-scripts`; a Codex
// install runs nothing. Hooks start this in the background on first use and stay silent until it has finished.
//
//   node scripts/bootstrap.mjs [--reason TEXT] [--rebuild-native]
//
// One bootstrap per install folder at a time (a lock folder in $ENGRAM_HOME/bootstrap/); the outcome is written to
// $ENGRAM_HOME/bootstrap/<key>.json, which `engram doctor` reports; npm's output goes to $ENGRAM_HOME/logs/bootstrap.log.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bootstrapFiles, checkInstall, engramHome, lockIsHeld, NATIVE_BINDING, RUNTIME_PACKAGES } from './install-state.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const reason = args.includes('--reason') ? args[args.indexOf('--reason') + 1] : 'manual';
const rebuildNative = args.includes('--rebuild-native');
const home = engramHome();
const files = bootstrapFiles(root, home);
const started = new Date();

const say = (message) => process.stdout.write(`[engram bootstrap ${new Date().toISOString()}] ${message}\n`);
const writeState = (state) => {
  mkdirSync(dirname(files.state), { recursive: true, mode: 0o700 });
  writeFileSync(files.state, `${JSON.stringify({ root, reason, pid: process.pid, started_at: started.toISOString(), ...state }, null, 2)}\n`);
};

/** npm needs Node's headers to compile better-sqlite3 offline; the Debian node package ships them in /usr. */
function npmEnv() {
  const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
  if (!env.npm_config_nodedir && existsSync('/usr/include/node/node.h')) env.npm_config_nodedir = '/usr';
  return env;
}

function run(command, commandArgs) {
  say(`$ ${command} ${commandArgs.join(' ')}`);
  const result = spawnSync(command, commandArgs, { cwd: root, env: npmEnv(), stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.error) throw new Error(`${command} could not start: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${commandArgs.join(' ')} exited with ${result.status ?? result.signal}`);
}

function nativeLoads() {
  const probe = "const D=require('better-sqlite3');new D(':memory:').close();require('sqlite-vec')";
  return spawnSync(process.execPath, ['-e', probe], { cwd: root, stdio: 'ignore' }).status === 0;
}

mkdirSync(dirname(files.lock), { recursive: true, mode: 0o700 });
try {
  mkdirSync(files.lock);
} catch {
  if (lockIsHeld(files.lock)) {
    say('another bootstrap is running for this folder; leaving it to finish');
    process.exit(0);
  }
  rmSync(files.lock, { recursive: true, force: true });
  mkdirSync(files.lock);
}
writeFileSync(join(files.lock, 'pid'), String(process.pid));

let exitCode = 0;
try {
  say(`bootstrapping ${root} (reason: ${reason}, node ${process.version})`);
  writeState({ status: 'running' });
  const steps = [];
  const { missing: before } = checkInstall(root);
  const packagesMissing = RUNTIME_PACKAGES.some((name) => before.includes(`node_modules/${name}`));
  const distMissing = before.some((item) => item.startsWith('dist/'));
  const buildToolMissing = !existsSync(join(root, 'node_modules', 'esbuild', 'package.json'));
  if (packagesMissing || (distMissing && buildToolMissing)) {
    run('npm', ['ci', '--include=dev', '--no-audit', '--no-fund', '--loglevel=error']);
    steps.push('npm ci');
  }
  if (rebuildNative || !existsSync(join(root, NATIVE_BINDING)) || !nativeLoads()) {
    run('npm', ['rebuild', 'better-sqlite3']);
    steps.push('npm rebuild better-sqlite3');
    if (!nativeLoads()) throw new Error('better-sqlite3 still does not load after rebuilding it');
  }
  if (distMissing) {
    run(process.execPath, [join(root, 'scripts', 'build.mjs')]);
    steps.push('build');
  }
  const { ready, missing } = checkInstall(root);
  if (!ready) throw new Error(`still missing after bootstrap: ${missing.join(', ')}`);
  const seconds = (Date.now() - started.getTime()) / 1000;
  writeState({ status: 'done', steps, finished_at: new Date().toISOString(), seconds });
  say(`done in ${seconds.toFixed(1)} s (${steps.length ? steps.join(', ') : 'nothing to do'})`);
  // The strong embedding model when the hub can be reached; one line and the offline model when not (never fatal).
  spawnSync(process.execPath, [join(root, 'dist', 'cli.mjs'), 'model', 'pull', '--quiet', '--if-reachable'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], timeout: 11 * 60_000 });
} catch (error) {
  exitCode = 1;
  writeState({ status: 'failed', error: error.message, finished_at: new Date().toISOString() });
  say(`failed: ${error.message}`);
} finally {
  rmSync(files.lock, { recursive: true, force: true });
}
process.exit(exitCode);
