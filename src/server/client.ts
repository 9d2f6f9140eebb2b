import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// Starting the background server from a hook process that found none (the in-process path).
import type { ServerPaths } from './address.js';
import { lockOwner, processAlive } from './lock.js';

/** Hooks that find no server at the same moment start one between them: a spawn within this window is left to
 * take the lock (the server's own lock settles the rest). */
const SPAWN_EVERY_MS = 1_000;

/**
 * Starts the server in the background unless one was started moments ago. Detached in its own process group with
 * no stdin and output to `logs/server.out`, so it survives the hook and never holds the agent's pipes open.
 * Returns whether a process was started.
 */
export function startServer(options: {
  paths: ServerPaths;
  /** The folder holding dist/server.mjs and its node_modules (the install folder, or its runtime folder). */
  runtimeDir: string;
  home: string;
  logs: string;
  /** Only run queued jobs, then exit (the server is switched off). */
  drainOnly?: boolean;
  /** The environment the server inherits (the hook's own; a test's throwaway HOME). @default process.env */
  env?: Record<string, string | undefined>;
  now?: number;
}): boolean {
  const now = options.now ?? Date.now();
  const script = join(options.runtimeDir, 'dist', 'server.mjs');
  try {
    if (!existsSync(script)) return false;
    if (!options.drainOnly) {
      // A server that holds the lock is running or starting: it answers soon and sweeps for queued jobs.
      const owner = lockOwner(options.paths.lock);
      if (owner !== null && processAlive(owner)) return false;
      try {
        if (now - statSync(options.paths.spawnStamp).mtimeMs < SPAWN_EVERY_MS) return false;
      } catch {
        // Never started from this home.
      }
    }
    mkdirSync(options.paths.run, { recursive: true, mode: 0o700 });
    writeFileSync(options.paths.spawnStamp, String(process.pid), { mode: 0o600 });
    utimesSync(options.paths.spawnStamp, now / 1000, now / 1000);
    mkdirSync(options.logs, { recursive: true, mode: 0o700 });
    const out = openSync(join(options.logs, 'server.out'), 'a', 0o600);
    const child = spawn(process.execPath, options.drainOnly ? [script, '--drain'] : [script], {
      detached: true,
      stdio: ['ignore', out, out],
      env: { ...(options.env ?? process.env), ENGRAM_HOME: options.home },
    });
    closeSync(out);
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
