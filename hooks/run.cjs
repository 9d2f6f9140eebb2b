#!/usr/bin/env node
// Entry point of every Engram hook: `node hooks/run.cjs <entry> --agent claude|codex`, registered in hooks.json and
// codex-hooks.json. It finds the runtime of this install folder — the folder itself when it was built in place, else
// the runtime folder the first-run bootstrap built outside it — reads the event from stdin and hands it to the warm
// server through its mailbox; the server's answer is printed as it is. Only when the server does not answer (none
// running, another version, no mailbox, a terminal for stdin, ENGRAM_SERVER=off) does it load that runtime's bundled
// fast path (dist/hooks/fast.cjs), which asks over the socket or answers in-process. When there is no runtime yet, it
// looks for one another install of the same version built, and otherwise starts the bootstrap in the background and
// exits 0 with no output, so a fresh install never slows down or disturbs the agent. Nothing is ever written into
// this folder.
//
// What runs on every agent event lives in this one file, not in modules of its own, because loading one more
// CommonJS module costs a hook process 0.25–0.9 ms on a busy 2-core machine (resolving, realpath, the package scope,
// compiling), and loading the fast path cost more than the mailbox round trip (docs/PERFORMANCE.md, section 6): the
// runtime lookup (findRuntime: two stat calls, or one stat and one small read; the warm server makes it for a hook
// it answers, from the install folder the call names), the home rule (engramHome; re-exported
// by scripts/home.cjs), the stdin reader (readStdinSync) and the hook side of the server's mailbox (postToMailbox). For
// the same reason the hot path uses few distinct fs functions: Node compiles each one's JavaScript on its first call
// in a process (0.1–0.25 ms each), so the request is written with the open/write/close already used for the pipe,
// and the answer read with the open/read/close already used for stdin. Required as a module, this file only exports
// its functions (the hook runs only when it is the main script); scripts/install-state.mjs re-exports them for
// bin/engram and every other launcher, and the fast path and the server bundle them. CommonJS on purpose: Node starts
// an ES module main script ~6 ms slower.
'use strict';
const fs = require('node:fs');
const { dirname, isAbsolute, join, resolve } = require('node:path');

/** The compiled better-sqlite3 addon, relative to a runtime folder. */
const NATIVE_BINDING = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
/** The hook fast path, relative to a runtime folder. */
const FAST_PATH = 'dist/hooks/fast.cjs';
/** What the build writes beside the bundles: `{version, built_at}` (the version a hook tells the server). */
const BUILD_INFO = 'dist/build.json';

/**
 * The hook entries (`node hooks/run.cjs <entry>`, one per event Engram handles; plugin.json registers them), the
 * event each handles, and how long its hook waits for the server's answer before answering itself (ms) — under each
 * event's registered timeout, and Claude Code's 1.5 s SessionEnd budget.
 */
const HOOK_ENTRIES = {
  'session-start': { event: 'SessionStart', waitMs: 1_500 },
  'user-prompt-submit': { event: 'UserPromptSubmit', waitMs: 1_500 },
  'pre-tool-use': { event: 'PreToolUse', waitMs: 800 },
  'post-tool-use': { event: 'PostToolUse', waitMs: 800 },
  'post-tool-use-failure': { event: 'PostToolUseFailure', waitMs: 800 },
  stop: { event: 'Stop', waitMs: 800 },
  'session-end': { event: 'SessionEnd', waitMs: 400 },
};

/** Upper bound on stdin: Claude Code's PostToolUse can carry whole files; beyond this we do not even try. */
const MAX_STDIN_BYTES = 16 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------------------------
// Where Engram's data lives

/**
 * `join(folder, name)` for a clean absolute POSIX folder (no trailing slash, no `//`, `.` or `..` part) and a plain
 * relative name, where it is just the two with a slash between: the hot path then never calls `path.join`, whose first
 * call costs a hook process ~0.07 ms (compiling its normalisation). Anything else goes through `path.join`.
 */
function joinPath(folder, name) {
  return process.platform !== 'win32' && folder.startsWith('/') && !folder.endsWith('/') && !folder.includes('//') && !folder.includes('/.')
    ? `${folder}/${name}`
    : join(folder, name);
}

/**
 * The one rule for where Engram's data lives: `$ENGRAM_HOME` (a leading `~` expanded, relative paths against `cwd`),
 * default `~/.engram`. src/core/env.ts, this launcher, the fast path and the bootstrap all call it (through
 * scripts/home.cjs and home.mjs, which re-export it).
 * @param {Record<string, string | undefined>} [env]
 * @param {{ userHome?: string, cwd?: string }} [options]
 * @returns {string}
 */
function engramHome(env = process.env, options = {}) {
  // node:os only when HOME is unset: it is not loaded at Node's start-up, and every hook process computes this.
  const userHome = options.userHome ?? (env.HOME && env.HOME.trim() ? env.HOME : require('node:os').homedir());
  const raw = env.ENGRAM_HOME && env.ENGRAM_HOME.trim() ? env.ENGRAM_HOME : '';
  if (!raw) return joinPath(userHome, '.engram');
  const expanded = raw === '~' ? userHome : raw.startsWith('~/') ? join(userHome, raw.slice(2)) : raw;
  return isAbsolute(expanded) ? expanded : resolve(options.cwd ?? process.cwd(), expanded);
}

// ---------------------------------------------------------------------------------------------------------------
// Finding the runtime

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
  const base = data ? join(data, 'runtime') : join(engramHome(env), 'runtime');
  return join(base, 'roots', `${folderKey(root)}.json`);
}

/**
 * The install folder's package-lock.json as size and mtime: a pointer is valid while they are unchanged (a folder
 * marketplace's source folder can be pulled to another version; an agent's plugin copy never changes). `none` when
 * the folder has no lockfile.
 */
function lockStamp(root) {
  try {
    const stats = fs.statSync(join(root, 'package-lock.json'));
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
  if (fs.existsSync(joinPath(root, FAST_PATH)) && fs.existsSync(joinPath(root, NATIVE_BINDING))) return { dir: root, kind: 'in-place' };
  try {
    const pointer = JSON.parse(fs.readFileSync(pointerFile(root, env), 'utf8'));
    if (pointer.root === root && pointer.lock === lockStamp(root) && typeof pointer.dir === 'string') {
      return { dir: pointer.dir, kind: 'runtime', key: pointer.key };
    }
  } catch {
    // No pointer yet, or a damaged one: the slow half looks again and rewrites it.
  }
  return null;
}

// ---------------------------------------------------------------------------------------------------------------
// Reading stdin

/**
 * Bytes as UTF-8 text. `utf8Slice` is the native method `toString('utf8')` ends in: the JavaScript around it costs a
 * hook process ~0.08 ms to compile on its first call, more than the decoding.
 */
const utf8 = (bytes) => (typeof bytes.utf8Slice === 'function' ? bytes.utf8Slice(0, bytes.length) : bytes.toString('utf8'));

/** Reads a whole small file with the open/read/close a hook already uses; null when it cannot be read. */
function readSmallFile(file, buffer) {
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY);
  } catch {
    return null;
  }
  try {
    const parts = [];
    for (;;) {
      const read = fs.readSync(fd, buffer, 0, buffer.length, null);
      if (read === 0) break;
      parts.push(Buffer.from(buffer.subarray(0, read)));
    }
    return utf8(parts.length === 1 ? parts[0] : Buffer.concat(parts));
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/** The last byte of `chunks` that is not JSON whitespace (space, tab, CR, LF), or -1 when there is none. */
function lastSignificantByte(chunks) {
  for (let c = chunks.length - 1; c >= 0; c--) {
    const chunk = chunks[c];
    for (let i = chunk.length - 1; i >= 0; i--) {
      const byte = chunk[i];
      if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d && byte !== 0x0a) return byte;
    }
  }
  return -1;
}

/**
 * Whether `fd` is a pipe, a socket or a file (what blocking reads suit), not a terminal or anything else. On Linux the
 * descriptor's /proc link says `pipe:[…]` or `socket:[…]` for what agents give a hook, without `fstatSync`, whose
 * Stats object costs a hook process ~0.1 ms on its first call; anything else (a file, a terminal, no /proc) is
 * `fstat`ed.
 */
function readsBlocking(fd) {
  try {
    const target = fs.readlinkSync(`/proc/self/fd/${fd}`);
    if (target.startsWith('pipe:[') || target.startsWith('socket:[')) return true;
  } catch {
    // No /proc (macOS), or no such descriptor: fstat says.
  }
  try {
    const stats = fs.fstatSync(fd);
    return stats.isFIFO() || stats.isSocket() || stats.isFile();
  } catch {
    return false;
  }
}

/** The read buffer, shared by stdin and the files a hook reads (one allocation per process). */
let shared = null;
const readBuffer = () => (shared ??= Buffer.allocUnsafe(64 * 1024));

/**
 * Reads stdin with blocking reads when it is a pipe, a socket or a file — what agents give a hook — so the process
 * needs no stream machinery (node:net and node:stream cost a hook more than everything else it does). It stops at the
 * end of input, or as soon as what arrived is one complete JSON value and nothing more is waiting (an agent that
 * writes its payload and keeps stdin open does not hold the hook). Agents always send the payload before the hook
 * reads; one that sent nothing and never closed stdin would hold the hook until its own timeout. Returns
 * `{ rest }` for a terminal or anything else (and for a descriptor that turns out to be non-blocking), to be read
 * as a stream with a time limit (the fast path), after the bytes already read. Bytes past `maxBytes` are read and
 * dropped (the agent sees no broken pipe) and the text is '' with `tooLarge`.
 * @returns {{ text: string, tooLarge: boolean, timedOut: boolean } | { rest: Buffer[] }}
 */
function readStdinSync(fd = 0, maxBytes = MAX_STDIN_BYTES) {
  if (!readsBlocking(fd)) return { rest: [] };
  const chunks = [];
  let size = 0;
  let tooLarge = false;
  const result = () => ({ text: tooLarge ? '' : utf8(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)), tooLarge, timedOut: false });
  const buffer = readBuffer();
  for (;;) {
    let read;
    try {
      read = fs.readSync(fd, buffer, 0, buffer.length, null);
    } catch (error) {
      if (error.code === 'EAGAIN') return { rest: tooLarge ? [] : chunks };
      if (error.code === 'EINTR') continue;
      return result(); // EOF by another name (the agent went away): what arrived is all there is
    }
    if (read === 0) return result();
    size += read;
    if (size > maxBytes) {
      tooLarge = true;
      chunks.length = 0;
    } else if (!tooLarge) {
      chunks.push(Buffer.from(buffer.subarray(0, read)));
    }
    // A short read means nothing more is waiting: if what arrived is already the whole payload, stop here (a payload
    // followed by a newline, as most writers send one, included).
    if (read < buffer.length && !tooLarge && lastSignificantByte(chunks) === 0x7d /* } */) {
      const done = result();
      try {
        JSON.parse(done.text);
        return done;
      } catch {
        // Not complete yet: read on.
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The server's mailbox, hook side (the server's side is src/server/mailbox-server.ts)
//
// How a hook hands its call to the warm server without node:net. Loading node:net and node:stream, and driving a
// socket through them, was most of what a hook cost over a bare `node -e ''` (docs/PERFORMANCE.md); here everything
// is a few synchronous file-system calls:
//
// 1. the call (one JSON line, as on the socket) goes down the named pipe `run/hook-calls.fifo` as `<id> <call>\n`
//    when that fits in one atomic pipe write (PIPE_BUF, 4 KiB on Linux: a PreToolUse call is ~0.8 KiB), else it is
//    written to `run/hooks/<id>.req` and `<id>\n` goes down the pipe. The pipe is opened without blocking — no
//    reader means no server (`refused`), no pipe means none was ever started here or it runs without a mailbox (the
//    socket is asked);
// 2. the hook waits for `run/hooks/<id>.rep` (complete when it appears: the server writes its answer into the call's
//    claimed file and renames that), looking every ~0.1 ms at first, then less often (`Atomics.wait` sleeps), and
//    reads it. It leaves the file: the server's sweep removes answers a few seconds old (an unlink cost the hook
//    ~0.1 ms between the answer and its exit, most of it Node compiling `unlinkSync` for its one call).
//
// The server claims a call by making `<id>.work` (a call in the pipe: created, failing if it exists) or by renaming
// `<id>.req` to it (a call in a file); a hook that stops waiting makes `<id>.work` itself, or renames its `.req` to
// `.gone`. Either way exactly one of them wins: a call whose hook gave up is never handled. A hook that waits more
// than a few milliseconds also checks that the server still holds the pipe, so a server killed under it is noticed
// within 10 ms (`lost`), as a closed socket would be.

/**
 * PIPE_BUF, the most bytes one pipe write is atomic in (Linux 4 KiB; POSIX's minimum, macOS's, 512): a call line up to
 * this goes down the pipe whole, and lines written at once by several hooks never interleave.
 */
const PIPE_BUF = process.platform === 'linux' ? 4096 : 512;

/** A call id: the hook's pid, the time and a random part (names files; never reused while one may be pending). */
const MAILBOX_ID = /^[a-z0-9-]{1,64}$/;

/** The files of one call in the mailbox folder. */
function mailboxFiles(dir, id) {
  return {
    request: joinPath(dir, `${id}.req`),
    claimed: joinPath(dir, `${id}.work`),
    withdrawn: joinPath(dir, `${id}.gone`),
    reply: joinPath(dir, `${id}.rep`),
  };
}

/**
 * The mailbox of a home: the pipe calls (or call ids) go down and the folder calls and answers are written to. The pipe
 * is not `run/hooks.fifo`, which servers before calls went down the pipe read: such a server would drop a call line it
 * does not know, and the hook would wait out its whole timeout; with no pipe of this name the hook asks the socket,
 * where an older server declines the call and steps aside for this version.
 */
function mailboxOf(home) {
  return { fifo: joinPath(home, 'run/hook-calls.fifo'), dir: joinPath(home, 'run/hooks') };
}

/**
 * The shell front's side door into the same mailbox (hooks/run.sh; the server's side is src/server/mailbox-server.ts):
 * a pipe of its own, which only servers that read its lines make (an older server never sees one), and the file
 * that holds the pid of the server reading it (a shell cannot open a pipe without blocking, so it checks the reader
 * is alive first). The call's files are in the mailbox folder (`mailboxOf(home).dir`).
 */
function shellMailboxOf(home) {
  return { fifo: joinPath(home, 'run/hook-calls-sh.fifo'), pid: joinPath(home, 'run/hook-calls-sh.pid') };
}

/**
 * What the shell front (hooks/run.sh) already learnt from the mailbox when it hands a hook to this launcher:
 * `--mailbox timeout` after it waited out the call's whole wait and took the call back, `--mailbox lost` when the
 * server died meanwhile. The launcher then does not ask the server again (the agent's budget is for one wait) and
 * goes on as after its own timeout or loss: the fast path answers in-process.
 */
const HANDED_FAILURES = new Set(['timeout', 'lost']);

/** How often a hook that has waited a while checks that the server it posted to is still there (ms). */
const ALIVE_EVERY_MS = 10;

/**
 * How long to sleep before looking for the answer again, `waited` ms into the wait: a warm server answers a hook in
 * a few milliseconds, so the first looks are close together (each costs one stat call; a requested 0.02 ms sleep
 * lasts ~0.1 ms, Linux's timer slack included), later ones further apart.
 */
function nextSleep(waited) {
  if (waited < 4) return 0.02;
  if (waited < 20) return 0.25;
  return Math.min(4, waited / 8);
}

/** Removes a file if it is there (unlinkSync alone: rmSync's checks cost a hook more). */
function unlink(file) {
  try {
    fs.unlinkSync(file);
  } catch {
    // Already gone.
  }
}

/**
 * Takes a call back from the mailbox, unless the server claimed it first: a call in the pipe by making its `.work`
 * before the server does (the server, finding it there, logs that the hook gave up and removes it), a call in a file
 * by renaming it to `.gone` (the server, finding that instead of the call, logs which event gave up).
 */
function withdraw(files, inPipe) {
  try {
    if (inPipe) fs.closeSync(fs.openSync(files.claimed, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600));
    else fs.renameSync(files.request, files.withdrawn);
  } catch {
    // Claimed by the server.
  }
}

/**
 * Whether the server still holds the pipe open: opening it for writing without blocking fails (ENXIO) once no process
 * has it open for reading — a server that died (even one not yet reaped) closed it.
 */
function readerAlive(fifo) {
  try {
    fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    return true;
  } catch (error) {
    return error.code !== 'ENXIO' && error.code !== 'ENOENT';
  }
}

/**
 * Opens the mailbox's pipe for writing: `{ fd }`, or `{ error }` with the code (`ENOENT`: no pipe; `ENXIO`: nobody
 * reads it, a dead server's). Non-blocking: with no reader this fails at once instead of waiting for one.
 */
function openPipe(mailbox) {
  try {
    return { fd: fs.openSync(mailbox.fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK) };
  } catch (error) {
    return { error: error.code };
  }
}

/**
 * Opens the pipe and writes an empty line down it, before the hook reads stdin and builds its call: the server wakes
 * (every server reading this pipe skips a line that is not `<id>…`) while the hook is still busy, so the call that
 * follows ~0.5 ms later finds it awake. A server idle between calls — most of the time, on an agent's machine — is
 * otherwise woken by the call itself, and that wake-up (an idle core, the server's code out of the caches) was half
 * of a mailbox round trip with no work in it (docs/PERFORMANCE.md, wave 10). Returns the open pipe for the post.
 */
function wakeServer(mailbox) {
  const opened = openPipe(mailbox);
  if ('fd' in opened) {
    try {
      // A Buffer, as the post writes: a string write is another function for Node to compile on its first call.
      fs.writeSync(opened.fd, Buffer.from('\n'));
    } catch {
      // A full pipe (a server that stopped reading): the post says so.
    }
  }
  return opened;
}

/**
 * Posts `request` to `mailbox` and waits up to `timeoutMs` for the answer: `{ reply }`, or `{ failure }` saying why
 * there is none (`refused`: a pipe nobody reads, a dead server's; `lost`: the server died while the hook waited, or
 * the folder is unwritable; `timeout`; `bad-reply`). Returns null when this home has no usable mailbox (the server
 * runs without one, none was ever started here, or its folder was removed under it): the caller asks over the socket
 * instead. Synchronous: it blocks the hook process, which has nothing else to do. Never throws.
 * @template T
 * @param {{ fifo: string, dir: string }} mailbox
 * @param {unknown} request
 * @param {number} timeoutMs
 * @param {ReturnType<typeof openPipe>} [opened] the pipe, opened (and the server woken) earlier by {@link wakeServer};
 *   closed here
 * @returns {{ reply: T } | { failure: 'refused' | 'lost' | 'timeout' | 'bad-reply' } | null}
 */
function postToMailbox(mailbox, request, timeoutMs, opened = openPipe(mailbox)) {
  const { O_WRONLY, O_CREAT, O_EXCL } = fs.constants;
  const id = `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const files = mailboxFiles(mailbox.dir, id);
  if ('error' in opened) {
    if (opened.error === 'ENOENT') return null;
    return { failure: opened.error === 'ENXIO' ? 'refused' : 'lost' };
  }
  const pipe = opened.fd;
  const line = `${JSON.stringify(request)}\n`;
  // The call itself down the pipe when it fits in one atomic write: no file for the hook to create, write and close,
  // none for the server to rename, open and read (~0.2 ms of a hook's wait).
  const inline = Buffer.from(`${id} ${line}`);
  const inPipe = inline.length <= PIPE_BUF;
  try {
    let file;
    try {
      if (inPipe) {
        fs.writeSync(pipe, inline);
      } else {
        file = fs.openSync(files.request, O_WRONLY | O_CREAT | O_EXCL, 0o600);
        try {
          fs.writeSync(file, line);
        } finally {
          fs.closeSync(file);
        }
        // One short line: a write under PIPE_BUF is atomic, so calls posted at once never interleave.
        fs.writeSync(pipe, `${id}\n`);
      }
    } catch (error) {
      if (file !== undefined) unlink(files.request);
      // No folder (removed under a running server, which makes it again on its next watch): the server is there, so
      // the caller asks it over the socket rather than answering in-process.
      if (file === undefined && error.code === 'ENOENT') return null;
      // EAGAIN: the pipe is full (a server that stopped reading); anything else: the folder is unwritable.
      return { failure: error.code === 'EAGAIN' ? 'timeout' : 'lost' };
    }
  } finally {
    fs.closeSync(pipe);
  }
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  // Date.now, not performance.now: the global `performance` loads perf_hooks, a millisecond of a hook's time.
  const started = Date.now();
  let lastAliveCheck = started;
  for (;;) {
    // existsSync first: a failed open throws, and building that error each time costs more than the look itself.
    const text = fs.existsSync(files.reply) ? readSmallFile(files.reply, readBuffer()) : null;
    if (text !== null) {
      try {
        return { reply: JSON.parse(text) };
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
        withdraw(files, inPipe);
        return { failure: 'lost' };
      }
    }
    Atomics.wait(sleeper, 0, 0, Math.min(nextSleep(waited), timeoutMs - waited));
  }
  // If the server claimed the call already, it is being handled (what it records is idempotent) and its late answer
  // is swept away unread.
  withdraw(files, inPipe);
  return { failure: 'timeout' };
}

// ---------------------------------------------------------------------------------------------------------------
// The hook

/**
 * Exits 0 at once. Through `process.reallyExit` (the native exit `process.exit` ends in) when nothing listens for
 * 'exit' — a hook the server answered: `process.exit`'s JavaScript (an internal module it loads, the exit code's
 * validation, the event) costs a hook process ~0.1 ms on its only call. With listeners (the fast path may have
 * some), `process.exit` runs them.
 */
function exitNow() {
  if (typeof process.reallyExit === 'function' && process.listenerCount('exit') === 0) process.reallyExit(0);
  process.exit(0);
}

/**
 * Writes the answer and exits 0 once it is written; `after` runs between the two. The answer goes straight to fd 1:
 * constructing `process.stdout` (a stream over the agent's pipe) costs a hook process more than the write. A
 * descriptor that would block (set non-blocking by someone else, full) gets the stream.
 * @param {string} stdout
 * @param {() => void} [after]
 */
function answerAndExit(stdout, after) {
  const exit = () => {
    after?.();
    exitNow();
  };
  if (stdout === '') exit();
  const bytes = Buffer.from(stdout);
  let written = 0;
  try {
    while (written < bytes.length) written += fs.writeSync(1, bytes, written);
  } catch (error) {
    // EAGAIN: a non-blocking descriptor that is full; the rest goes through the stream, which waits for it. Anything
    // else (EPIPE: the agent stopped reading; EBADF: no fd 1) has nowhere to go.
    if (error.code !== 'EAGAIN') exit();
  }
  if (written >= bytes.length) exit();
  process.stdout.write(bytes.subarray(written), exit);
}

const OFF = new Set(['off', '0', 'false', 'no']);

/** The Engram version a runtime was built as (its dist/build.json), or null when it cannot be read. */
function runtimeVersion(dir) {
  try {
    const version = JSON.parse(readSmallFile(joinPath(dir, BUILD_INFO), readBuffer()) ?? 'null')?.version;
    return typeof version === 'string' ? version : null;
  } catch {
    return null;
  }
}

/**
 * The hot path of a hook the launcher knows: read stdin, hand the call to the warm server through its mailbox, print
 * its answer, exit 0. The call says which Engram is asking by the install folder `root` (and the agent's plugin data
 * folder): the server finds that folder's runtime and its version (src/server/hook-version.ts), so this process
 * neither looks for the runtime nor reads its build.json before posting (~0.3 ms of a hook: Node compiling the
 * functions those call once). Only when the server did not take that form — one older than it (its strict schema
 * calls it invalid) or one that found no runtime — does the hook look the runtime up and ask again with the version
 * its build.json says, as hooks did before. Returns what was done when the server did not answer, for the fast path to
 * go on from (the socket, a stream for a terminal's stdin, the in-process answer), with the runtime when it was
 * looked up (undefined: not yet), or null once the answer is out. Never throws.
 * @param {string} entry a key of HOOK_ENTRIES
 * @param {string} root the install folder (hooks/run.cjs's parent)
 * @returns {{ stdin: ReturnType<typeof readStdinSync>, mailbox: 'not-asked' | 'absent' | 'refused' | 'lost' | 'timeout' | 'bad-reply' | 'declined', runtime?: ReturnType<typeof findRuntime> } | null}
 */
function askWarmServer(entry, root) {
  const { event, waitMs } = HOOK_ENTRIES[entry];
  const env = process.env;
  const off = OFF.has((env.ENGRAM_SERVER ?? '').trim().toLowerCase());
  const mailbox = mailboxOf(engramHome(env));
  // The server woken first: it comes to while this process reads stdin and builds the call.
  const opened = off ? null : wakeServer(mailbox);
  const stdin = readStdinSync();
  // A server switched off or an unusable payload: the fast path decides.
  if (opened === null || 'rest' in stdin || stdin.tooLarge) {
    if (opened && 'fd' in opened) fs.closeSync(opened.fd);
    return { stdin, mailbox: 'not-asked' };
  }
  const call = {
    event,
    stdin: stdin.text,
    agentFlag: argvValue('--agent'),
    envHints: { codex: Boolean(env.PLUGIN_ROOT || env.CODEX_HOME), claude: Boolean(env.CLAUDE_PROJECT_DIR) },
  };
  const data = pluginData(env);
  let answer = postToMailbox(mailbox, data ? { v: 1, op: 'hook', root, pluginData: data, call } : { v: 1, op: 'hook', root, call }, waitMs, opened);
  let runtime;
  const declined = (reply) => !(reply && reply.ok === true && reply.op === 'hook' && typeof reply.stdout === 'string');
  if (answer !== null && 'reply' in answer && declined(answer.reply) && answer.reply?.error !== 'version') {
    // Not a version the server will not serve: a server older than the install-folder form (`invalid request`), or
    // one that found no runtime where this hook does. Asked again as hooks always could, with the runtime's version.
    runtime = findRuntime(root);
    const version = runtime && runtimeVersion(runtime.dir);
    // No runtime or no version here either: the fast path, when there is one, asks with the version it was built as.
    if (!version) return { stdin, mailbox: 'not-asked', runtime };
    answer = postToMailbox(mailbox, { v: 1, op: 'hook', version, call }, waitMs);
  }
  if (answer === null) return { stdin, mailbox: 'absent', runtime };
  if ('failure' in answer) return { stdin, mailbox: answer.failure, runtime };
  if (!declined(answer.reply)) {
    answerAndExit(answer.reply.stdout);
    return null; // Only reached while a full stdout drains through its stream, which then exits.
  }
  // The server answered but not this call (another Engram version, an invalid request).
  return { stdin, mailbox: 'declined', runtime };
}

/** The value after `name` on the command line, or undefined. */
function argvValue(name) {
  const at = process.argv.indexOf(name, 3);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

/** The launcher: run the hook through the warm server, else the runtime's fast path, or see to a runtime and say nothing. */
function main() {
  const root = dirname(__dirname);
  const entry = process.argv[2] || '';
  /** The fast path of a runtime folder, or null when it cannot be loaded (deleted, half-removed). */
  const fastPath = (runtime) => {
    try {
      return runtime && require(join(runtime.dir, FAST_PATH));
    } catch {
      return null;
    }
  };
  const known = Object.hasOwn(HOOK_ENTRIES, entry);
  let runtime;
  let handed;
  if (!known || process.env.ENGRAM_LLM_CHILD === '1') {
    runtime = known || /^[a-z-]+$/.test(entry) ? findRuntime(root) : null;
    // An entry this version does not know (a newer hooks.json, a typo), or an agent Engram itself runs as its LLM
    // (`claude -p` for evaluation), which must not record or evaluate its own session: read stdin so the agent sees
    // no broken pipe, and say nothing (a terminal: the fast path drains it).
    const stdin = readStdinSync();
    if (!('rest' in stdin)) process.exit(0);
    handed = { stdin, mailbox: 'not-asked' };
  } else if (HANDED_FAILURES.has(argvValue('--mailbox'))) {
    // The shell front waited for the server already (stdin is the file it saved the payload to).
    handed = { stdin: readStdinSync(), mailbox: argvValue('--mailbox') };
    runtime = findRuntime(root);
  } else {
    handed = askWarmServer(entry, root);
    if (handed === null) return;
    // Looked up only now that the server did not answer (or while asking it again with a version).
    runtime = handed.runtime === undefined ? findRuntime(root) : handed.runtime;
  }
  const fast = fastPath(runtime);
  if (fast) return fast.runHook(entry, root, runtime.dir, handed);
  const giveUp = setTimeout(() => process.exit(0), 1000);
  giveUp.unref();
  // Stdin the hot path already read is not read again.
  const drain = () =>
    handed && !('rest' in handed.stdin) ? process.exit(0) : process.stdin.on('data', () => {}).on('end', () => process.exit(0)).on('error', () => process.exit(0));
  // A name in a variable: the bundles that include this file (the fast path, the server) must not pull the slow half in.
  const slowHalf = '../scripts/install-state.mjs';
  import(slowHalf)
    .then(({ locateRuntime, startBootstrap }) => {
      // An event this version does not handle (a newer hooks.json, a typo) is not a reason to install anything.
      if (!known) return drain();
      // A runtime another install folder of this version built (the plugin copy, the other agent, the CLI): linked
      // now, and this hook runs as usual.
      const found = locateRuntime(root);
      const loaded = found && fastPath(found);
      if (loaded) {
        clearTimeout(giveUp);
        return loaded.runHook(entry, root, found.dir, handed);
      }
      startBootstrap(root, { reason: `hook ${entry}` });
      drain();
    })
    .catch(() => drain()); // Nothing useful to do: the agent must not notice.
}

// Exported whether this file runs as the launcher or is required: the slow path's install-state.mjs imports it from
// the module cache, where the launcher is this same module.
module.exports = {
  NATIVE_BINDING,
  FAST_PATH,
  BUILD_INFO,
  HOOK_ENTRIES,
  MAX_STDIN_BYTES,
  MAILBOX_ID,
  PIPE_BUF,
  engramHome,
  folderKey,
  pointerFile,
  lockStamp,
  findRuntime,
  readStdinSync,
  mailboxFiles,
  mailboxOf,
  shellMailboxOf,
  postToMailbox,
  wakeServer,
  answerAndExit,
};
if (require.main === module) {
  try {
    main();
  } catch {
    // Nothing here is expected to throw (each step catches its own failures); if something does, the agent must still
    // see a hook that exits 0 and prints nothing, not a stack trace.
    process.exit(0);
  }
}
