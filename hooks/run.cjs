#!/usr/bin/env node
// Entry point of every Engram hook: `node hooks/run.cjs <entry> --agent claude|codex`, registered in hooks.json and
// codex-hooks.json. It finds the runtime of this install folder (scripts/runtime.cjs: the folder itself when it was
// built in place, else the runtime folder the first-run bootstrap built outside it) and hands over to its bundled
// fast path (dist/hooks/fast.cjs). When there is none yet, it looks for one another install of the same version
// built, and otherwise starts the bootstrap in the background and exits 0 with no output, so a fresh install never
// slows down or disturbs the agent. Nothing is ever written into this folder. CommonJS on purpose: Node starts an ES
// module main script ~6 ms slower, and this file runs on every agent event.
'use strict';
const { join } = require('node:path');

const root = join(__dirname, '..');
const entry = process.argv[2] || '';

/** The fast path of a runtime folder, or null when it cannot be loaded (deleted, half-removed). */
function fastPath(runtime) {
  try {
    return runtime && require(join(runtime.dir, 'dist', 'hooks', 'fast.cjs'));
  } catch {
    return null;
  }
}

const valid = /^[a-z-]+$/.test(entry);
let runtime = null;
try {
  runtime = valid ? require('../scripts/runtime.cjs').findRuntime(root) : null;
} catch {
  // A damaged install folder: the slow path below says nothing either.
}
const fast = fastPath(runtime);

if (fast) {
  fast.runHook(entry, root, runtime.dir);
} else {
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
