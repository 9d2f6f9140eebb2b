import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

/**
 * One server per home: the lock file is created exclusively (O_EXCL) and holds the owner's pid. A lock whose pid
 * no longer runs is stale (the server was killed) and is taken over.
 */
export function acquireLock(lockFile: string, runDir: string): boolean {
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = lockOwner(lockFile);
      if (owner !== null && owner !== process.pid && processAlive(owner)) return false;
      // Stale (its owner died) or unreadable half-written: take it over. Only the lock holder touches the socket.
      rmSync(lockFile, { force: true });
    }
  }
  return false;
}

/** The pid in a lock file, or null. */
export function lockOwner(lockFile: string): number | null {
  try {
    const pid = Number(readFileSync(lockFile, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** True when a process with this pid exists (EPERM: it exists but is someone else's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the lock if it is still ours. */
export function releaseLock(lockFile: string): void {
  if (lockOwner(lockFile) === process.pid) rmSync(lockFile, { force: true });
}
