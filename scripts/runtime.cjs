// Which folder's dist/ and node_modules/ run an Engram install. The hot half of the runtime resolution: the hook
// launcher (hooks/run.cjs) calls findRuntime on every agent event, so it costs a few stat calls and one small read
// and loads nothing but node:fs, node:path and home.cjs. install-state.mjs holds the rest (the runtime key, finding a
// runtime another install built, the bootstrap) and re-exports this for bin/engram and the other launchers.
//
// Two layouts:
// - in place: a source checkout that ran ./install.sh has node_modules/ and dist/ in the folder itself;
// - a runtime folder: a plugin folder as an agent installed it stays exactly as installed (Codex fingerprints a
//   plugin's files to trust its hooks), so the bootstrap installs and builds into
//   `<plugin data>/runtime/<version>-<lock hash>/` or `$ENGRAM_HOME/runtime/<version>-<lock hash>/`, and leaves a
//   pointer for the install folder in `$ENGRAM_HOME/runtime/roots/`, which this file reads.
'use strict';
const { existsSync, readFileSync, statSync } = require('node:fs');
const { join } = require('node:path');

/** The compiled better-sqlite3 addon, relative to a runtime folder. */
const NATIVE_BINDING = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
/** The hook fast path, relative to a runtime folder. */
const FAST_PATH = 'dist/hooks/fast.cjs';

/**
 * A short name for a folder path, for the pointer's file name: FNV-1a in two lanes (node:crypto costs a hook process
 * more than the whole lookup). A collision only costs a rebuild of the pointer: the pointer names its folder.
 */
function folderKey(path) {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ path.length;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}

/** Where the pointer of the install folder `root` lives. */
function pointerFile(root, home) {
  return join(home, 'runtime', 'roots', `${folderKey(root)}.json`);
}

/**
 * The install folder's package-lock.json as size and mtime: a pointer is valid while they are unchanged (a folder
 * marketplace's source folder can be pulled to another version; an agent's plugin copy never changes). `none`
 * when the folder has no lockfile.
 */
function lockStamp(root) {
  try {
    const stats = statSync(join(root, 'package-lock.json'));
    return `${stats.size}:${stats.mtimeMs}`;
  } catch {
    return 'none';
  }
}

/**
 * The runtime of the install folder `root`, or null when none is ready (the bootstrap provides one; install-state.mjs
 * `locateRuntime` also finds one built for another folder with the same version and lockfile).
 * @param {string} root the install folder (the plugin root: hooks/, bin/, scripts/)
 * @param {Record<string, string | undefined>} [env]
 * @returns {{ dir: string, kind: 'in-place' | 'runtime', key?: string } | null}
 */
function findRuntime(root, env = process.env) {
  if (existsSync(join(root, FAST_PATH)) && existsSync(join(root, NATIVE_BINDING))) return { dir: root, kind: 'in-place' };
  try {
    // Required here, not above: a source checkout built in place never needs it.
    const { engramHome } = require('./home.cjs');
    const pointer = JSON.parse(readFileSync(pointerFile(root, engramHome(env)), 'utf8'));
    if (pointer.root === root && pointer.lock === lockStamp(root) && typeof pointer.dir === 'string') {
      return { dir: pointer.dir, kind: 'runtime', key: pointer.key };
    }
  } catch {
    // No pointer yet, or a damaged one: the slow path looks again and rewrites it.
  }
  return null;
}

module.exports = { NATIVE_BINDING, FAST_PATH, folderKey, pointerFile, lockStamp, findRuntime };
