/**
 * The hooks' mailbox, server side (the hook side and the protocol are in hooks/run.cjs, which every hook runs): the
 * server makes the named pipe `run/hook-calls.fifo` (with `mkfifo`: Node has no call for it), reads calls from it (a
 * call line after its id, or the id of a call written to a file), claims each call by making its `.work` file (or
 * renaming the call's file to it), and writes the answer into that file, renamed `.rep` once complete. Without
 * `mkfifo` there is no mailbox and hooks use the socket. On Linux the folder `run/hooks` is a link to a private
 * folder on a tmpfs (`$XDG_RUNTIME_DIR` or `/dev/shm`): hooks use the same paths, and the files live in memory.
 * @module
 */
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  renameSync,
  rmSync,
  fstatSync,
  statfsSync,
  statSync,
  symlinkSync,
  type Stats,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { Socket } from 'node:net';
import { basename, dirname, isAbsolute, join } from 'node:path';
// The launcher's own definitions (bundled into the server): one spelling of the protocol for both sides.
import { HOOK_ENTRIES, MAILBOX_ID, MAX_STDIN_BYTES, PIPE_BUF, mailboxFiles } from '../../hooks/run.cjs';

/** Calls older than this are nobody's any more (a hook that died, a call claimed and never answered). */
const ORPHAN_MS = 60_000;

/**
 * Answers are read by their hook within its wait (hooks/run.cjs HOOK_ENTRIES: at most 1.5 s) and left there (an
 * unlink would cost the hook's way out ~0.1 ms): the sweep removes them once they are older than this.
 */
export const ANSWER_KEEP_MS = 5_000;

/** statfs's `f_type` of a tmpfs (Linux's TMPFS_MAGIC). */
const TMPFS_MAGIC = 0x01021994;

/** The name of a call folder this server made on a tmpfs (mkdtemp's six characters after the prefix). */
const MEMORY_FOLDER = /^engram-\d+-[A-Za-z0-9]{6}$/;

/** In a call folder on a tmpfs: the path of the link to it (a dot name: no call's, and the sweep leaves it). */
const LINK_NOTE = '.link';

/**
 * Where the mailbox's files should live: a tmpfs the user can write to — `$XDG_RUNTIME_DIR` (per user, 0700) or
 * `/dev/shm` — or null (another system, no tmpfs: `run/hooks` is a plain folder). On the build machine's ext4 a call
 * file's create took 0.2–0.35 ms of the hook's wait when the server had been idle, 0.07–0.09 ms on tmpfs
 * (docs/PERFORMANCE.md, wave 10): the claim is a create, and ext4 journals it.
 */
export function memoryFolderBase(env: NodeJS.ProcessEnv = process.env): string | null {
  if (process.platform !== 'linux') return null;
  for (const base of [env.XDG_RUNTIME_DIR, '/dev/shm']) {
    if (!base || !isAbsolute(base)) continue;
    try {
      if (statfsSync(base).type === TMPFS_MAGIC) return base;
    } catch {
      // Not there.
    }
  }
  return null;
}

/**
 * Removes this user's call folders in `memoryBase` that no link names any more (their server was killed and its home
 * removed, e.g. a test's) and that `consider` accepts: the server takes those older than a minute (one starting now
 * has made its folder but not yet its link), the tests' teardown those made during the run.
 */
export function removeOrphanMailboxFolders(memoryBase: string, consider: (folder: Stats) => boolean): void {
  const prefix = `engram-${process.getuid?.() ?? 0}-`;
  let names: string[];
  try {
    names = readdirSync(memoryBase);
  } catch {
    // No base to look in: the folder is made elsewhere (openMailbox falls back to a plain one).
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !MEMORY_FOLDER.test(name)) continue;
    const folder = join(memoryBase, name);
    try {
      if (!consider(statSync(folder))) continue;
      const link = readFileSync(join(folder, LINK_NOTE), 'utf8');
      let linked = false;
      try {
        linked = readlinkSync(link) === folder;
      } catch {
        // No link there any more.
      }
      if (!linked) rmSync(folder, { recursive: true, force: true });
    } catch {
      // Another user's, or removed meanwhile.
    }
  }
}

/** One call taken out of the mailbox. */
export interface MailboxCall {
  /** The call's JSON line, as a hook would send it on the socket. */
  line: string;
  /** Writes the answer for the waiting hook. Never throws. */
  answer(text: string): void;
}

/**
 * One call the shell front posted (hooks/run.sh): the hook's own words, its stdin as the agent gave it (null when it
 * is over the hooks' 16 MiB cap), and how to answer it. The server builds the same hook request a Node hook sends.
 */
export interface ShellCall {
  /** The hook entry (`pre-tool-use`, …), a key of hooks/run.cjs HOOK_ENTRIES. */
  entry: string;
  /** The `--agent` value of the hook's command line. */
  agent: string;
  envHints: { codex: boolean; claude: boolean };
  /** The install folder the hook runs from, and the agent's plugin data folder ('' without one). */
  root: string;
  pluginData: string;
  stdin: string | null;
  /**
   * Writes the hook's stdout to it, whole, and closes. Says whether the answer reached the hook: false when the hook
   * had stopped waiting before writing could start (or the write failed) — a promise only while the hook has not
   * opened its pipe yet. Never throws.
   */
  answer(stdout: string): boolean | Promise<boolean>;
  /** Tells the hook this server does not answer this call (it runs the Node launcher, which asks again). Never throws. */
  decline(): void;
}

/** The shell front's line: `<id> TAB <entry> TAB <agent> TAB <hints: two 0/1> TAB <root> TAB <plugin data>`. */
const SHELL_LINE = /^(s[0-9]+-[0-9]+)\t([a-z-]+)\t([a-z]+)\t([01])([01])\t([^\t]+)\t([^\t]*)$/;

/** How long before its hook's wait ends the server stops trying to start writing an answer to the shell front (ms). */
export const SHELL_ANSWER_MARGIN_MS = 150;

/** An open mailbox. */
export interface Mailbox {
  /**
   * Removes answers their hook read (or gave up on) and calls nobody will handle, and makes the pipe or the folder
   * again if either was removed.
   */
  sweep(now?: number): void;
  /** Stops reading and removes the pipe and the folder. */
  close(): void;
}

/**
 * Opens the mailbox of a server that holds the lock: a fresh pipe and an empty folder (whatever a dead server left is
 * removed), then `onCall` for every call a hook posts, or `onWithdrawn` for one whose hook stopped waiting before it
 * was read. Returns null (with the reason) when the pipe cannot be made: hooks then use the socket.
 */
export function openMailbox(
  mailbox: { fifo: string; dir: string; shell?: { fifo: string; pid: string } },
  handlers: {
    onCall(call: MailboxCall): void;
    /** A call of the shell front (only with `mailbox.shell`). */
    onShellCall?(call: ShellCall): void;
    onWithdrawn(event: string | null): void;
    onError(error: unknown): void;
  },
  /** Where the call folder is made, linked from `mailbox.dir`; null: `mailbox.dir` itself. */
  memoryBase: string | null = memoryFolderBase(),
): Mailbox | { error: unknown } {
  /** The folder on the tmpfs this server made (removed with the link, or without it when the home went first). */
  let memoryFolder: string | null = null;

  /** Removes the call folder: the link and the folder it names (if this server's kind), or the plain folder. */
  function removeFolder(): void {
    if (memoryFolder !== null) {
      rmSync(memoryFolder, { recursive: true, force: true });
      memoryFolder = null;
    }
    try {
      if (lstatSync(mailbox.dir).isSymbolicLink()) {
        const target = readlinkSync(mailbox.dir);
        rmSync(mailbox.dir, { force: true });
        // Only a folder of this kind (a link in the 0700 run folder is this user's servers' own).
        if (isAbsolute(target) && MEMORY_FOLDER.test(basename(target))) rmSync(target, { recursive: true, force: true });
        return;
      }
    } catch {
      // No folder, or nothing readable there: nothing to remove.
    }
    rmSync(mailbox.dir, { recursive: true, force: true });
  }

  /**
   * Makes the call folder (0700): a private folder in `memoryBase` linked from `mailbox.dir`, else a plain folder. The
   * run folder itself is made only at start (`parents`): one removed under the running server is not made again.
   */
  function makeFolder(parents: boolean): void {
    if (parents) mkdirSync(dirname(mailbox.dir), { recursive: true, mode: 0o700 });
    if (memoryBase !== null) {
      let made: string | undefined;
      try {
        // mkdtemp: a name nobody could have made first in a shared /dev/shm, created 0700.
        made = mkdtempSync(join(memoryBase, `engram-${process.getuid?.() ?? 0}-`));
        writeFileSync(join(made, LINK_NOTE), mailbox.dir, { mode: 0o600 });
        symlinkSync(made, mailbox.dir);
        memoryFolder = made;
        return;
      } catch {
        if (made !== undefined) rmSync(made, { recursive: true, force: true });
      }
    }
    mkdirSync(mailbox.dir, { mode: 0o700 });
  }

  /**
   * Makes the named pipe `fifo` and hands each line written to it to `onLine`. Read and write: the pipe then never
   * reports end-of-file when the last hook closes it, and opening never waits. Throws when it cannot be made or opened.
   */
  function readLines(fifo: string, onLine: (line: string) => void): Socket {
    execFileSync('mkfifo', ['-m', '600', fifo], { stdio: 'ignore', timeout: 5_000 });
    const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    const socket = new Socket({ fd, readable: true, writable: false });
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('error', (error) => handlers.onError(error));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        onLine(line);
      }
      // A hook's line fits in one atomic pipe write: anything longer without a newline is not a hook's.
      if (buffer.length > PIPE_BUF) buffer = '';
    });
    return socket;
  }

  /** Makes the pipe and reads calls (or call ids) from it. Throws when the pipe cannot be made or opened. */
  function listen(): Socket {
    return readLines(mailbox.fifo, (line) => {
      // `<id> <call>` (the call in the pipe) or `<id>` (the call in `<id>.req`).
      const space = line.indexOf(' ');
      const id = space < 0 ? line : line.slice(0, space);
      // An empty line is a hook's wake-up (hooks/run.cjs wakeServer), sent before it reads stdin: being read is all
      // it asks. Every server reading this pipe skips it.
      if (MAILBOX_ID.test(id)) take(id, space < 0 ? null : line.slice(space + 1));
    });
  }

  /**
   * The shell front's pipe (hooks/run.sh): made, read, and then its pid file written (renamed into place whole), so a
   * shell hook that finds this server's pid finds its pipe read. Lines are parsed as in {@link SHELL_LINE}; an empty
   * line (a wake-up) and anything else are skipped.
   */
  function listenShell(shell: { fifo: string; pid: string }): Socket {
    rmSync(shell.fifo, { force: true });
    const socket = readLines(shell.fifo, (line) => {
      const fields = SHELL_LINE.exec(line);
      if (fields) takeShell(fields);
    });
    const staged = `${shell.pid}.${process.pid}`;
    writeFileSync(staged, `${process.pid}\n`, { mode: 0o600 });
    renameSync(staged, shell.pid);
    return socket;
  }

  let reader: Socket;
  let shellReader: Socket | null = null;
  try {
    rmSync(mailbox.fifo, { force: true });
    if (mailbox.shell) rmSync(mailbox.shell.pid, { force: true });
    removeFolder();
    if (memoryBase !== null) removeOrphanMailboxFolders(memoryBase, (folder) => Date.now() - folder.mtimeMs >= ORPHAN_MS);
    makeFolder(true);
    reader = listen();
  } catch (error) {
    rmSync(mailbox.fifo, { force: true });
    return { error };
  }
  if (mailbox.shell && handlers.onShellCall) {
    try {
      shellReader = listenShell(mailbox.shell);
    } catch (error) {
      // The shell front finds no pipe (or no pid) and runs the Node launcher, which uses the pipe above.
      removeShell();
      handlers.onError(error);
    }
  }

  /** Removes the shell front's pid file and pipe (the pid first: a shell hook that reads it finds the pipe read). */
  function removeShell(): void {
    if (!mailbox.shell) return;
    rmSync(mailbox.shell.pid, { force: true });
    rmSync(mailbox.shell.fifo, { force: true });
  }

  /**
   * Claims a shell front's call (its `.work` made, failing if its hook made it first: it gave up), reads the payload
   * it saved in `<id>.req`, and hands it to the server. The answer goes into the hook's own pipe `<id>.out`, which
   * the hook reads with a time limit: the server opens it without blocking (retrying while the hook has not opened
   * it yet) and starts writing only while the hook still waits — by the payload file's time (written just before the
   * call was posted) plus the entry's wait, less {@link SHELL_ANSWER_MARGIN_MS} — so the hook never prints half an
   * answer. A call declined is marked by `<id>.no` before its pipe is closed empty.
   */
  function takeShell(fields: RegExpExecArray): void {
    const [, id, entry, agent, codex, claude, root, pluginData] = fields as unknown as string[];
    const waitMs = (HOOK_ENTRIES as Record<string, { waitMs: number } | undefined>)[entry!]?.waitMs;
    const files = mailboxFiles(mailbox.dir, id!);
    const out = join(mailbox.dir, `${id}.out`);
    let fd: number;
    try {
      fd = openSync(files.claimed, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        rmSync(files.claimed, { force: true });
        handlers.onWithdrawn(waitMs === undefined ? null : (HOOK_ENTRIES as Record<string, { event: string }>)[entry!]!.event);
      } else {
        handlers.onError(error);
      }
      return;
    }
    closeSync(fd);
    let stdin: string | null = null;
    let deadline = Date.now() + (waitMs ?? 0) - SHELL_ANSWER_MARGIN_MS;
    let unreadable = false;
    try {
      const request = openSync(files.request, constants.O_RDONLY);
      try {
        const stats = fstatSync(request);
        deadline = stats.mtimeMs + (waitMs ?? 0) - SHELL_ANSWER_MARGIN_MS;
        stdin = stats.size > MAX_STDIN_BYTES ? null : readAll(request);
      } finally {
        closeSync(request);
      }
    } catch (error) {
      // Declined below: the hook still holds its payload (its stdin is that file) for the Node launcher.
      unreadable = true;
      handlers.onError(error);
    }
    let done = false;
    /**
     * Opens the hook's pipe and writes `text` to it whole; `marker` first (a decline). Gives up at the deadline. Whether
     * an answer reached the hook: at once, or (the hook not at its pipe yet) once it is known.
     */
    const reply = (text: string, marker: string | null): boolean | Promise<boolean> => {
      if (done) return false;
      done = true;
      const bytes = Buffer.from(text);
      let written = 0;
      let pipe: number | null = null;
      let tries = 0;
      let outcome: boolean | undefined;
      let settle: ((answered: boolean) => void) | undefined;
      const finish = (answered: boolean): void => {
        if (outcome === undefined) {
          outcome = answered;
          settle?.(answered);
        }
        if (pipe !== null) closeSync(pipe);
        // What the hook no longer needs, off its path (the sweep takes anything left).
        if (answered) for (const file of [files.request, out]) unlinkQuietly(file);
      };
      const step = (): void => {
        try {
          if (pipe === null) {
            if (Date.now() > deadline) return finish(false);
            try {
              pipe = openSync(out, constants.O_WRONLY | constants.O_NONBLOCK);
            } catch (error) {
              const code = (error as NodeJS.ErrnoException).code;
              // ENXIO: the hook has not opened its end yet (it is starting `timeout cat`).
              if (code !== 'ENXIO' && code !== 'ENOENT') throw error;
              tries++;
              if (tries < 200) setImmediate(step);
              else setTimeout(step, 1);
              return;
            }
            if (marker !== null) writeFileSync(marker, '', { mode: 0o600 });
          }
          while (written < bytes.length) {
            try {
              written += writeSync(pipe, bytes, written, bytes.length - written);
            } catch (error) {
              // A full pipe (an answer over 64 KiB): the hook's `cat` drains it.
              if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return void setTimeout(step, 1);
              throw error;
            }
          }
          finish(marker === null);
        } catch (error) {
          try {
            finish(false);
          } catch {
            // Closed already.
          }
          handlers.onError(error);
        }
      };
      step();
      return outcome ?? new Promise<boolean>((resolve) => (settle = resolve));
    };
    if (unreadable) return void reply('', join(mailbox.dir, `${id}.no`));
    try {
      handlers.onShellCall!({
        entry: entry!,
        agent: agent!,
        envHints: { codex: codex === '1', claude: claude === '1' },
        root: root!,
        pluginData: pluginData!,
        stdin,
        answer: (stdout) => reply(stdout, null),
        decline: () => void reply('', join(mailbox.dir, `${id}.no`)),
      });
    } catch (error) {
      void reply('', join(mailbox.dir, `${id}.no`));
      handlers.onError(error);
    }
  }

  /** Whether `file` is a named pipe (a shell hook racing a removal can leave a plain file by that name). */
  function isPipe(file: string): boolean {
    try {
      return lstatSync(file).isFIFO();
    } catch {
      return false;
    }
  }

  /** Removes a file if it is there. */
  function unlinkQuietly(file: string): void {
    try {
      unlinkSync(file);
    } catch {
      // Swept or never made.
    }
  }

  /**
   * Claims a call — one that came down the pipe (`pipedLine`) by making its `.work` file, failing if it exists; one in a
   * file by renaming that to `.work` — so that if its hook stopped waiting first (and made or renamed the file
   * itself), it is not handled at all. The answer is written into the claimed file (kept open) and the file renamed
   * `.rep`, so the hook never sees an answer half-written. A call never answered leaves its `.work` for the sweep.
   */
  function take(id: string, pipedLine: string | null): void {
    const files = mailboxFiles(mailbox.dir, id);
    const claimed = pipedLine === null ? claimFile(files) : claimNew(files.claimed, pipedLine);
    if (claimed === null) return;
    const { fd, line, fresh } = claimed;
    let open = true;
    const answer = (text: string): void => {
      if (!open) return;
      open = false;
      try {
        // Written over the call, then cut to the answer's length — not truncated to 0 first: ext4 flushes a file
        // truncated to 0 when it is closed (its auto_da_alloc rule), which made an answer ~3.7× slower to write
        // (bench/mailbox-answer.cjs: 57–63 → 15–17 µs at load 1.8; 0.17 ms per answer in the server's profile under
        // load). Renamed before it is closed: the written bytes are visible to the hook at once; the close is off its
        // path.
        const bytes = Buffer.from(text);
        writeSync(fd, bytes, 0, bytes.length, 0);
        // A claim file made empty needs no cut.
        if (!fresh) ftruncateSync(fd, bytes.length);
        renameSync(files.claimed, files.reply);
      } catch (error) {
        handlers.onError(error);
      }
      try {
        closeSync(fd);
      } catch (error) {
        handlers.onError(error);
      }
    };
    try {
      handlers.onCall({ line, answer });
    } catch (error) {
      // The handler never answers: free the descriptor (the hook gives up on its own).
      if (open) {
        open = false;
        closeSync(fd);
      }
      handlers.onError(error);
    }
  }

  /** Claims a call that came down the pipe by making its `.work` file (its hook made it first: it gave up). */
  function claimNew(file: string, line: string): { fd: number; line: string; fresh: boolean } | null {
    const make = (): number => openSync(file, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      return { fd: make(), line, fresh: true };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') {
        rmSync(file, { force: true });
        handlers.onWithdrawn(callEvent(line));
        return null;
      }
      if (code === 'ENOENT') {
        // The folder was removed under the running server (someone cleaning up): made again, and the call answered.
        try {
          // A removed run folder or home is not made again (the server stops when its home goes); a link whose folder
          // was removed (someone cleaning /dev/shm) is replaced.
          removeFolder();
          makeFolder(false);
          return { fd: make(), line, fresh: true };
        } catch (made) {
          handlers.onError(made);
          return null;
        }
      }
      handlers.onError(error);
      return null;
    }
  }

  /** Claims a call written to a file by renaming it to `.work`, and reads it (its hook renamed it first: it gave up). */
  function claimFile(files: ReturnType<typeof mailboxFiles>): { fd: number; line: string; fresh: boolean } | null {
    try {
      renameSync(files.request, files.claimed);
    } catch {
      handlers.onWithdrawn(withdrawnEvent(files.withdrawn));
      return null;
    }
    let fd: number;
    try {
      fd = openSync(files.claimed, constants.O_RDWR);
    } catch (error) {
      handlers.onError(error);
      return null;
    }
    try {
      return { fd, line: readAll(fd), fresh: false };
    } catch (error) {
      closeSync(fd);
      rmSync(files.claimed, { force: true });
      handlers.onError(error);
      return null;
    }
  }

  /** The event of a call line, or null. */
  function callEvent(line: string): string | null {
    try {
      const event = (JSON.parse(line) as { call?: { event?: unknown } }).call?.event;
      return typeof event === 'string' ? event : null;
    } catch {
      return null;
    }
  }

  /** The event of a call its hook took back (to say which one gave up), removing it; null when unreadable. */
  function withdrawnEvent(file: string): string | null {
    try {
      return callEvent(readFileSync(file, 'utf8'));
    } catch {
      return null;
    } finally {
      rmSync(file, { force: true });
    }
  }

  /** The whole of a small file from its descriptor. */
  function readAll(fd: number): string {
    const parts: Buffer[] = [];
    const buffer = Buffer.allocUnsafe(64 * 1024);
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) parts.push(Buffer.from(buffer.subarray(0, read)));
    return Buffer.concat(parts).toString('utf8');
  }

  return {
    sweep(now = Date.now()) {
      // The pipe removed under the running server (someone cleaning up): hooks ask over the socket meanwhile
      // (hooks/run.cjs postToMailbox); make a new one so they come back to the mailbox.
      if (!existsSync(mailbox.fifo)) {
        try {
          const next = listen();
          reader.destroy();
          reader = next;
        } catch (error) {
          handlers.onError(error);
        }
      }
      // The same for the shell front's pipe or pid file (the shell runs the Node launcher meanwhile).
      if (mailbox.shell && handlers.onShellCall && !(isPipe(mailbox.shell.fifo) && existsSync(mailbox.shell.pid))) {
        try {
          const next = listenShell(mailbox.shell);
          shellReader?.destroy();
          shellReader = next;
        } catch (error) {
          handlers.onError(error);
        }
      }
      try {
        for (const name of readdirSync(mailbox.dir)) {
          if (name === LINK_NOTE) continue;
          const file = join(mailbox.dir, name);
          try {
            // A shell front's call (`s<pid>-<n>.*`) is over once its hook's wait (at most 1.5 s) is.
            const keep = name.endsWith('.rep') || name.startsWith('s') ? ANSWER_KEEP_MS : ORPHAN_MS;
            if (now - statSync(file).mtimeMs > keep) rmSync(file, { force: true });
          } catch {
            // Taken or removed meanwhile.
          }
        }
      } catch (error) {
        // The folder was removed under the running server (someone cleaning up): hooks ask over the socket meanwhile
        // (hooks/run.cjs postToMailbox); make it again so they come back to the mailbox.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          try {
            removeFolder();
            makeFolder(false);
          } catch (made) {
            handlers.onError(made);
          }
        }
      }
    },
    close() {
      reader.destroy();
      shellReader?.destroy();
      removeShell();
      rmSync(mailbox.fifo, { force: true });
      removeFolder();
    },
  };
}
