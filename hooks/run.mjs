#!/usr/bin/env node
// Entry point of every Engram hook: `node hooks/run.mjs <event> --agent claude|codex`, registered in hooks.json and
// codex-hooks.json. It hands over to the bundled hook in dist/hooks/ when this install folder is ready, and otherwise
// starts the first-run bootstrap in the background and exits 0 with no output, so a fresh install never slows down
// or disturbs the agent. Kept tiny: it runs on every hook event.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const event = process.argv[2] ?? '';
const bundle = join(root, 'dist', 'hooks', `${event}.mjs`);
// The addon path is spelled out rather than imported from install-state.mjs (NATIVE_BINDING; a test keeps them
// equal): this file runs on every hook event and loads nothing it can avoid.

if (/^[a-z-]+$/.test(event) && existsSync(bundle) && existsSync(join(root, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'))) {
  await import(pathToFileURL(bundle).href);
} else {
  try {
    const { HOOK_ENTRIES, startBootstrap } = await import('../scripts/install-state.mjs');
    // An event this version does not handle (a newer hooks.json, a typo) is not a reason to reinstall anything.
    if (HOOK_ENTRIES.includes(event)) startBootstrap(root, { reason: `hook ${event}` });
  } catch {
    // Nothing useful to do: the agent must not notice.
  }
  // Read stdin to its end so the agent never sees a broken pipe, but give up quickly.
  process.stdin.on('data', () => {}).on('end', () => process.exit(0)).on('error', () => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
}
