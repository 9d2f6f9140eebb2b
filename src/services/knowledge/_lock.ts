import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { EngramError } from '../../core/index.js';

/** The one-writer lock of a repository's knowledge server: `engram run`, `engram fold` and bootstrap take it. */
export const LOCK_FILE = join('.engram', 'run.lock');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** A held lock. */
export interface RunLock {
  path: string;
  release(): void;
}

/**
 * Takes `<root>/.engram/run.lock` (created exclusively, holding pid and host). A lock whose process is gone on this
 * host is taken over; a live one makes this call fail with STORE_LOCKED naming the holder — two writers would
 * reserve ids and edit the docs under each other.
 */
export function acquireRunLock(root: string, what: string): RunLock {
  const path = join(root, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), what, since: new Date().toISOString() }));
      closeSync(fd);
      let released = false;
      return {
        path,
        release() {
          if (released) return;
          released = true;
          try {
            const holder = JSON.parse(readFileSync(path, 'utf8')) as { pid?: number };
            if (holder.pid === process.pid) rmSync(path, { force: true });
          } catch {
            // Already gone.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new EngramError('IO', `cannot create ${path}: ${(error as Error).message}`, { cause: error });
      }
    }
    let holder: { pid?: number; host?: string; what?: string; since?: string } = {};
    try {
      holder = JSON.parse(readFileSync(path, 'utf8')) as typeof holder;
    } catch {
      // Half-written by a holder that is starting right now, or damaged: a damaged lock of a dead holder is taken over below.
    }
    const sameHost = holder.host === undefined || holder.host === hostname();
    if (typeof holder.pid === 'number' && (!sameHost || alive(holder.pid))) {
      throw new EngramError(
        'STORE_LOCKED',
        `another knowledge server holds ${path} (${holder.what ?? 'engram run'}, pid ${holder.pid}${sameHost ? '' : ` on ${holder.host}`}, since ${holder.since ?? '?'}); one writer at a time`,
        { details: { pid: holder.pid, host: holder.host } },
      );
    }
    if (typeof holder.pid !== 'number' && attempt === 0) {
      // A holder that is starting right now has created the file and not yet written it: give it a moment.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
      continue;
    }
    rmSync(path, { force: true });
  }
  throw new EngramError('STORE_LOCKED', `could not take ${path}`);
}
