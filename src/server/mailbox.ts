/**
 * The hooks' mailbox, hook side: how a hook process hands its call to the warm server without node:net. Loading
 * node:net and node:stream, and driving a socket through them, was most of what a hook cost over a bare `node -e ''`
 * (docs/PERFORMANCE.md); here everything is a few synchronous file-system calls:
 *
 * 1. the call (one JSON line, as on the socket) is written to `run/hooks/<id>.req`;
 * 2. `<id>\n` is written to the named pipe `run/hooks.fifo`, opened without blocking — no reader means no server
 *    (`refused`), no pipe means none was ever started here or it runs without a mailbox (the socket is asked);
 * 3. the hook waits for `run/hooks/<id>.rep` (written under a temporary name and renamed, so never read half-written),
 *    looking every 0.1 ms at first, then less often (`Atomics.wait` sleeps), reads it and removes it.
 *
 * A hook that stops waiting renames its `.req` to `.gone`; the server claims a call by renaming it to `.work`, so
 * exactly one of them wins: a call whose hook gave up is never handled (server/mailbox-server.ts). A hook that waits
 * more than a few milliseconds also checks that the server still holds the pipe, so a server killed under it is
 * noticed within 10 ms (`lost`), as a closed socket would be. Node built-ins only: this is part of the fast path's
 * bundle.
 * @module
 */
import { join } from 'node:path';
import type { AskAnswer } from './ask.js';

/** A call id: the hook's pid, the time and a random part (names files; never reused while one may be pending). */
export const MAILBOX_ID = /^[a-z0-9-]{1,64}$/;

/** The files of one call in the mailbox folder. */
export function mailboxFiles(dir: string, id: string): { request: string; claimed: string; withdrawn: string; reply: string; partial: string } {
  return {
    request: join(dir, `${id}.req`),
    claimed: join(dir, `${id}.work`),
    withdrawn: join(dir, `${id}.gone`),
    reply: join(dir, `${id}.rep`),
    partial: join(dir, `${id}.rep.partial`),
  };
}

/** How often a hook that has waited a while checks that the server it posted to is still there (ms). */
const ALIVE_EVERY_MS = 10;

/**
 * How long to sleep before looking for the answer again, `waited` ms into the wait: a warm server answers a hook in
 * a few milliseconds, so the first looks are close together (each costs one stat call), later ones further apart.
 */
function nextSleep(waited: number): number {
  if (waited < 4) return 0.1;
  if (waited < 20) return 0.25;
  return Math.min(4, waited / 8);
}

/**
 * Posts `request` and waits up to `timeoutMs` for the answer. Returns null when this home has no mailbox (the server
 * runs without one, or none was ever started here): the caller asks over the socket instead. Synchronous: it blocks
 * the hook process, which has nothing else to do. Never throws.
 */
export function postToMailbox<T>(mailbox: { fifo: string; dir: string }, request: unknown, timeoutMs: number): AskAnswer<T> | null {
  const fs = process.getBuiltinModule('node:fs');
  const id = `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const files = mailboxFiles(mailbox.dir, id);
  let pipe: number;
  try {
    // Non-blocking: with no reader (a dead server's pipe) this fails at once instead of waiting for one.
    pipe = fs.openSync(mailbox.fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    return { failure: code === 'ENXIO' ? 'refused' : 'lost' };
  }
  try {
    try {
      fs.writeFileSync(files.request, `${JSON.stringify(request)}\n`, { mode: 0o600 });
      // One short line: a write under PIPE_BUF is atomic, so calls posted at once never interleave.
      fs.writeSync(pipe, `${id}\n`);
    } catch (error) {
      unlink(files.request);
      // EAGAIN: the pipe is full (a server that stopped reading); anything else: the folder is gone or unwritable.
      return { failure: (error as NodeJS.ErrnoException).code === 'EAGAIN' ? 'timeout' : 'lost' };
    }
  } finally {
    fs.closeSync(pipe);
  }
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  // Date.now, not performance.now: the global `performance` loads perf_hooks, a millisecond of a hook's time.
  const started = Date.now();
  let lastAliveCheck = started;
  for (;;) {
    let text: string | null = null;
    // existsSync first: a failed read throws, and building that error each time costs more than the look itself.
    if (fs.existsSync(files.reply)) {
      try {
        text = fs.readFileSync(files.reply, 'utf8');
      } catch {
        // Not there after all.
      }
    }
    if (text !== null) {
      unlink(files.reply);
      try {
        return { reply: JSON.parse(text) as T };
      } catch {
        return { failure: 'bad-reply' };
      }
    }
    const now = Date.now();
    const waited = now - started;
    if (waited >= timeoutMs) break;
    if (now - lastAliveCheck >= ALIVE_EVERY_MS) {
      // Only a slow answer gets here (a warm server answers in a few ms): is the server still there at all?
      lastAliveCheck = now;
      if (!readerAlive(mailbox.fifo)) {
        withdraw(files);
        return { failure: 'lost' };
      }
    }
    Atomics.wait(sleeper, 0, 0, Math.min(nextSleep(waited), timeoutMs - waited));
  }
  // If the server claimed the call already, it is being handled (what it records is idempotent) and its late answer
  // is swept away unread.
  withdraw(files);
  return { failure: 'timeout' };
}

/**
 * Takes a call back from the mailbox by renaming it to `.gone` (the server, finding it there instead of the call,
 * logs that the hook gave up and with which event); does nothing when the server claimed it first.
 */
function withdraw(files: ReturnType<typeof mailboxFiles>): void {
  try {
    process.getBuiltinModule('node:fs').renameSync(files.request, files.withdrawn);
  } catch {
    // Claimed by the server.
  }
}

/**
 * Whether the server still holds the pipe open: opening it for writing without blocking fails (ENXIO) once no process
 * has it open for reading — a server that died (even one not yet reaped) closed it.
 */
function readerAlive(fifo: string): boolean {
  const fs = process.getBuiltinModule('node:fs');
  try {
    fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENXIO' && (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** Removes a file if it is there (unlinkSync alone: rmSync's checks cost a hook more). */
function unlink(file: string): void {
  try {
    process.getBuiltinModule('node:fs').unlinkSync(file);
  } catch {
    // Already gone.
  }
}
