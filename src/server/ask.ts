// Asking the background server from a hook process. Deliberately small (node:net only): this is the code every hook
// runs before anything else, so it decides how fast the common case is.
import { createConnection } from 'node:net';

/**
 * Why a request got no answer: `no-server` (no socket file), `refused` (a socket nobody listens on: a dead server's),
 * `lost` (connected, then closed before answering: the server died or dropped the request mid-query), `timeout`
 * (no answer in time), `bad-reply` (not a JSON line).
 */
export type AskFailure = 'no-server' | 'refused' | 'lost' | 'timeout' | 'bad-reply';

/** The outcome of one request. */
export type AskAnswer<T> = { reply: T } | { failure: AskFailure };

/** A connection to the server opened before its request is ready (see {@link connectServer}). */
export interface ServerConnection {
  /** Sends one request (a JSON line) and waits up to `timeoutMs` for one JSON line back. Call at most once. */
  ask<T>(request: unknown, timeoutMs: number): Promise<AskAnswer<T>>;
  /** Closes the connection without a request. */
  close(): void;
}

/**
 * Starts connecting to the server's socket now, for a request sent later: a hook connects while it still reads its
 * stdin, so the connection is ready when the payload is. Failing to connect is only reported by `ask`.
 */
export function connectServer(socket: string): ServerConnection {
  const connection = createConnection(socket);
  let connected = false;
  /** Set once the connection failed or closed before `ask`. */
  let early: AskFailure | null = null;
  /** The pending request's settle function, once `ask` was called. */
  let settle: ((value: AskAnswer<never>) => void) | null = null;
  let line: string | null = null;
  let buffer = '';
  connection.setEncoding('utf8');
  const fail = (failure: AskFailure): void => {
    if (settle) settle({ failure });
    else early ??= failure;
  };
  connection.on('connect', () => {
    connected = true;
    if (line !== null) connection.write(line);
  });
  connection.on('data', (chunk: string) => {
    buffer += chunk;
    const end = buffer.indexOf('\n');
    if (end < 0 || !settle) return;
    try {
      settle({ reply: JSON.parse(buffer.slice(0, end)) as never });
    } catch {
      settle({ failure: 'bad-reply' });
    }
  });
  connection.on('error', (error: NodeJS.ErrnoException) => {
    const code = error.code;
    fail(code === 'ENOENT' ? 'no-server' : code === 'ECONNREFUSED' ? 'refused' : 'lost');
  });
  connection.on('close', () => fail('lost'));
  return {
    ask<T>(request: unknown, timeoutMs: number): Promise<AskAnswer<T>> {
      return new Promise((resolve) => {
        if (early) {
          connection.destroy();
          resolve({ failure: early });
          return;
        }
        let settled = false;
        const timer = setTimeout(() => settle?.({ failure: 'timeout' }), timeoutMs);
        settle = (value) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          connection.destroy();
          resolve(value);
        };
        line = `${JSON.stringify(request)}\n`;
        if (connected) connection.write(line);
      });
    },
    close() {
      connection.destroy();
    },
  };
}

/** Sends one request (a JSON line) and waits up to `timeoutMs` for one JSON line back; says why when there is none. */
export function askServer<T>(socket: string, request: unknown, timeoutMs: number): Promise<AskAnswer<T>> {
  return connectServer(socket).ask<T>(request, timeoutMs);
}

/** {@link askServer} without the reason: the reply, or null. */
export async function ask<T>(socket: string, request: unknown, timeoutMs: number): Promise<T | null> {
  const answer = await askServer<T>(socket, request, timeoutMs);
  return 'reply' in answer ? answer.reply : null;
}
