#!/usr/bin/env node
// Entry point of every Engram hook: `node hooks/run.cjs <entry> --agent claude|codex`, registered in hooks.json and
// codex-hooks.json. It hands over to the bundled fast path (dist/hooks/fast.cjs) when this install folder is ready,
// and otherwise starts the first-run bootstrap in the background and exits 0 with no output, so a fresh install
// never slows down or disturbs the agent. CommonJS on purpose: Node starts an ES module main script ~6 ms slower,
// and this file runs on every agent event.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const entry = process.argv[2] || '';
const fast = join(root, 'dist', 'hooks', 'fast.cjs');
// The addon path is spelled out rather than imported from install-state.mjs (NATIVE_BINDING; a test keeps them
// equal): this file loads nothing it can avoid.

if (/^[a-z-]+$/.test(entry) && existsSync(fast) && existsSync(join(root, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'))) {
  require(fast).runHook(entry, root);
} else {
  setTimeout(() => process.exit(0), 1000).unref();
  import('../scripts/install-state.mjs')
    .then(({ HOOK_ENTRIES, startBootstrap }) => {
      // An event this version does not handle (a newer hooks.json, a typo) is not a reason to reinstall anything.
      if (HOOK_ENTRIES.includes(entry)) startBootstrap(root, { reason: `hook ${entry}` });
    })
    .catch(() => {
      // Nothing useful to do: the agent must not notice.
    })
    .finally(() => {
      // Read stdin to its end so the agent never sees a broken pipe, but give up quickly.
      process.stdin.on('data', () => {}).on('end', () => process.exit(0)).on('error', () => process.exit(0));
    });
}
