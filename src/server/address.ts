import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
}

/** The server paths of a home. Kept free of heavy imports: every hook process computes them. */
export function serverPaths(home: string): ServerPaths {
  const run = join(home, 'run');
  let socket = join(run, 'server.sock');
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    const key = createHash('sha256').update(home).digest('hex').slice(0, 16);
    socket = join(tmpdir(), `engram-${process.getuid?.() ?? 0}-${key}.sock`);
  }
  return { run, socket, lock: join(run, 'server.lock'), info: join(run, 'server.json'), spawnStamp: join(run, 'spawn.stamp') };
}
