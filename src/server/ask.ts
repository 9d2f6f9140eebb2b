// Asking the background server from a hook process. Deliberately small (node:net only): this is the code every hook
// runs before anything else, so it decides how fast the common case is.
import { createConnection } from 'node:net';

/** Sends one request (a JSON line) and waits up to `timeoutMs` for one JSON line back; null on any failure. */
export function ask<T>(socket: string, request: unknown, timeoutMs: number): Promise<T | null> {
  return new Promise((resolve) => {
    let settled = false;
    let buffer = '';
    const connection = createConnection(socket);
    const finish = (value: T | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      connection.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => finish(null), timeoutMs);
    connection.setEncoding('utf8');
    connection.on('connect', () => connection.write(`${JSON.stringify(request)}\n`));
    connection.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      try {
        finish(JSON.parse(buffer.slice(0, end)) as T);
      } catch {
        finish(null);
      }
    });
    connection.on('error', () => finish(null));
    connection.on('close', () => finish(null));
  });
}
