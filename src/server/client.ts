import { closeSync, existsSync, mkdirSync, openSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// Starting the background server from a hook process that found none (the in-process path).
import type { ServerPaths } from './address.js';
import { lockOwner, processAlive } from './lock.js';

/** Hooks that find no server at the same moment start one between them: a spawn within this window is left to
 * take the lock (the server's own lock settles the rest). */
const SPAWN_EVERY_MS = 1_000;

/**
 * Node flags of the server process. V8 grows its young generation up to 2 × 16 MB when a process allocates fast (a
 * warm server answering hooks does) and gives it back when the process calms down, so the server's RSS swung by ~30 MB
 * between samples minutes apart (PERFORMANCE.md, "Soak (wave 7)"). A 4 MB semi-space (8 MB young generation) keeps
 * the server's memory flat; its scavenges are 4× as frequent and each is as short (they copy the survivors, which a
 * hook's garbage mostly is not). The semi-space is also 4 MB at least: V8 shrank the young generation to 1 MB when
 * hooks came slowly (a loaded machine) and grew it back to 8 MB when they came fast, so the RSS followed the machine's
 * load by 7 MB (PERFORMANCE.md, "Soak (wave 8)").
 * `--expose-gc` gives the server `gc()` for its collection between calls (server/quiet-collection.ts): under steady
 * traffic V8 let the old space fill up to its allocation limit before collecting (PERFORMANCE.md, "Soak (wave 8)").
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4', '--min-semi-space-size=4', '--expose-gc'];

/**
 * glibc's malloc gives each thread that allocates its own arena (up to 8 per core) and rarely hands their free pages
 * back; the server's threads (V8's compiler and GC helpers, libuv's pool, worker threads at start) each kept one.
 * Two arenas are enough for a process with one busy thread.
 */
export const SERVER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

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
    // Loaded here, not at the top: a hook that falls back with the server switched off never spawns (node:child_process
    // and node:net cost it 2–4 ms to load).
    const child = process.getBuiltinModule('node:child_process').spawn(process.execPath, [...SERVER_NODE_FLAGS, script, ...(options.drainOnly ? ['--drain'] : [])], {
      detached: true,
      stdio: ['ignore', out, out],
      env: { ...(options.env ?? process.env), ...SERVER_ENV, ENGRAM_HOME: options.home },
    });
    closeSync(out);
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
