#!/usr/bin/env node
// Entry point of every Engram hook: `node hooks/run.cjs <entry> --agent claude|codex`, registered in hooks.json and
// codex-hooks.json. It finds the runtime of this install folder — the folder itself when it was built in place, else
// the runtime folder the first-run bootstrap built outside it — and hands over to that runtime's bundled fast path
// (dist/hooks/fast.cjs). When there is none yet, it looks for one another install of the same version built, and
// otherwise starts the bootstrap in the background and exits 0 with no output, so a fresh install never slows down or
// disturbs the agent. Nothing is ever written into this folder.
//
// The resolution itself (findRuntime) lives here, not in a module of its own, because this file runs on every agent
// event: loading one more CommonJS module costs a hook process 0.25–0.9 ms on a busy 2-core machine, several times the
// lookup (two stat calls, or one stat and one small read). Required as a module, this file only exports it (the hook
// runs only when it is the main script); scripts/install-state.mjs re-exports it for bin/engram and every other
// launcher. CommonJS on purpose: Node starts an ES module main script ~6 ms slower.
'use strict';
const { existsSync, readFileSync, statSync } = require('node:fs');
const { join } = require('node:path');

/** The compiled better-sqlite3 addon, relative to a runtime folder. */
const NATIVE_BINDING = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
/** The hook fast path, relative to a runtime folder. */
const FAST_PATH = 'dist/hooks/fast.cjs';

/**
 * A short name for a folder path, for its pointer's file name: FNV-1a in two lanes (node:crypto would cost a hook more
 * than the lookup). A collision only costs a slow lookup: the pointer names its folder.
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

/** The data folder the agent gives its plugin's hooks (Codex: PLUGIN_DATA, Claude Code: CLAUDE_PLUGIN_DATA), or ''. */
function pluginData(env) {
  return (env.PLUGIN_DATA || env.CLAUDE_PLUGIN_DATA || '').trim();
}

/**
 * Where the pointer of install folder `root` is for this environment: in the plugin data folder when the agent gives
 * one (the hooks of a plugin install always have it), else in `$ENGRAM_HOME/runtime/roots/` (the CLI in a shell).
 */
function pointerFile(root, env = process.env) {
  const data = pluginData(env);
  // home.cjs is loaded only here: a plugin's hooks and a source checkout built in place never need it.
  const base = data ? join(data, 'runtime') : join(require('../scripts/home.cjs').engramHome(env), 'runtime');
  return join(base, 'roots', `${folderKey(root)}.json`);
}

/**
 * The install folder's package-lock.json as size and mtime: a pointer is valid while they are unchanged (a folder
 * marketplace's source folder can be pulled to another version; an agent's plugin copy never changes). `none` when
 * the folder has no lockfile.
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
 * The runtime of install folder `root`, or null when none is ready: the folder itself when built in place, else the
 * runtime folder its pointer names. The slow half (a runtime another folder of the same key built, linking, the
 * bootstrap) is scripts/install-state.mjs `locateRuntime`.
 * @param {string} root the install folder (the plugin root: hooks/, bin/, scripts/)
 * @param {Record<string, string | undefined>} [env]
 * @returns {{ dir: string, kind: 'in-place' | 'runtime', key?: string } | null}
 */
function findRuntime(root, env = process.env) {
  if (existsSync(join(root, FAST_PATH)) && existsSync(join(root, NATIVE_BINDING))) return { dir: root, kind: 'in-place' };
  try {
    const pointer = JSON.parse(readFileSync(pointerFile(root, env), 'utf8'));
    if (pointer.root === root && pointer.lock === lockStamp(root) && typeof pointer.dir === 'string') {
      return { dir: pointer.dir, kind: 'runtime', key: pointer.key };
    }
  } catch {
    // No pointer yet, or a damaged one: the slow half looks again and rewrites it.
  }
  return null;
}

/** The launcher: run the hook through the runtime's fast path, or see to a runtime and say nothing. */
function main() {
  const root = join(__dirname, '..');
  const entry = process.argv[2] || '';
  /** The fast path of a runtime folder, or null when it cannot be loaded (deleted, half-removed). */
  const fastPath = (runtime) => {
    try {
      return runtime && require(join(runtime.dir, FAST_PATH));
    } catch {
      return null;
    }
  };
  const runtime = /^[a-z-]+$/.test(entry) ? findRuntime(root) : null;
  const fast = fastPath(runtime);
  if (fast) return fast.runHook(entry, root, runtime.dir);
  const giveUp = setTimeout(() => process.exit(0), 1000);
  giveUp.unref();
  const drain = () => process.stdin.on('data', () => {}).on('end', () => process.exit(0)).on('error', () => process.exit(0));
  import('../scripts/install-state.mjs')
    .then(({ HOOK_ENTRIES, locateRuntime, startBootstrap }) => {
      // An event this version does not handle (a newer hooks.json, a typo) is not a reason to install anything.
      if (!HOOK_ENTRIES.includes(entry)) return drain();
      // A runtime another install folder of this version built (the plugin copy, the other agent, the CLI): linked
      // now, and this hook runs as usual.
      const found = locateRuntime(root);
      const loaded = found && fastPath(found);
      if (loaded) {
        clearTimeout(giveUp);
        return loaded.runHook(entry, root, found.dir);
      }
      startBootstrap(root, { reason: `hook ${entry}` });
      drain();
    })
    .catch(() => drain()); // Nothing useful to do: the agent must not notice.
}

// Exported whether this file runs as the launcher or is required: the slow path's install-state.mjs imports it from
// the module cache, where the launcher is this same module.
module.exports = { NATIVE_BINDING, FAST_PATH, folderKey, pointerFile, lockStamp, findRuntime };
if (require.main === module) main();
