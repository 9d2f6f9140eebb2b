import { join } from 'node:path';
// The hooks' own rule for the mailbox's paths (bundled): one spelling for the hook and the server.
import { mailboxOf, shellMailboxOf } from '../../hooks/run.cjs';

/** Unix socket paths are limited to ~108 bytes (104 on macOS); past this a home's socket moves to the temp folder. */
const MAX_SOCKET_PATH = 100;

/** Where the background server of one Engram home lives. */
export interface ServerPaths {
  /** `$ENGRAM_HOME/run`: the lock, the socket, the server's self-description. */
  run: string;
  socket: string;
  /** Created exclusively by the one running server; holds its pid. */
  lock: string;
  /** `{pid, version, socket, started_at}` of the running server. */
  info: string;
  /** Touched when a hook starts a server, so eight hooks at once start one, not eight. */
  spawnStamp: string;
  /**
   * The hooks' mailbox (hooks/run.cjs, server/mailbox-server.ts): a named pipe the server reads calls (or the ids of
   * calls written to files) from, and the folder the claimed calls and their answers are written to. Hooks use it instead of the socket: it needs no node:net in the hook process.
   * `shell`: the shell front's pipe and the file naming the server that reads it (hooks/run.sh).
   */
  mailbox: { fifo: string; dir: string; shell: { fifo: string; pid: string } };
}

/** FNV-1a (64-bit) in hex: names a long home's socket without loading node:crypto into every hook process. */
function fnv1a(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text)) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  return hash.toString(16).padStart(16, '0');
}

/** The server paths of a home. Kept free of heavy imports: every hook process computes them. */
export function serverPaths(home: string): ServerPaths {
  const run = join(home, 'run');
  let socket = join(run, 'server.sock');
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    // node:os only here: it is not loaded at Node's start-up (~0.4 ms), and a home's socket rarely moves.
    socket = join(process.getBuiltinModule('node:os').tmpdir(), `engram-${process.getuid?.() ?? 0}-${fnv1a(home)}.sock`);
  }
  return {
    run,
    socket,
    lock: join(run, 'server.lock'),
    info: join(run, 'server.json'),
    spawnStamp: join(run, 'spawn.stamp'),
    mailbox: { ...mailboxOf(home), shell: shellMailboxOf(home) },
  };
}
