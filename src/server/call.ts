// Asking the background server from a long-lived surface (the MCP server): like ask.ts, but it tells "never reached"
// apart from "reached, no answer in time", because a write that reached the server may have been applied and must not
// be run a second time elsewhere.
import { createConnection } from 'node:net';

/** What became of one request. */
export type CallOutcome<T> =
  /** The server answered. */
  | { kind: 'answer'; answer: T }
  /** No server listens (no socket, refused): the request was never delivered. */
  | { kind: 'unreachable'; reason: string }
  /** The request was written but no answer came within the time limit (or the connection broke after it). */
  | { kind: 'no-answer'; reason: string };

/** Sends one request line and waits up to `timeoutMs` for one answer line. Never throws. */
export function callServer<T>(socket: string, request: unknown, timeoutMs: number): Promise<CallOutcome<T>> {
  return new Promise((resolve) => {
    let settled = false;
    let written = false;
    let buffer = '';
    const connection = createConnection(socket);
    const finish = (outcome: CallOutcome<T>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      connection.destroy();
      resolve(outcome);
    };
    const lost = (reason: string): CallOutcome<T> => (written ? { kind: 'no-answer', reason } : { kind: 'unreachable', reason });
    const timer = setTimeout(() => finish(lost(`no answer within ${timeoutMs} ms`)), timeoutMs);
    connection.setEncoding('utf8');
    connection.on('connect', () => {
      written = true;
      connection.write(`${JSON.stringify(request)}\n`);
    });
    connection.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      try {
        finish({ kind: 'answer', answer: JSON.parse(buffer.slice(0, end)) as T });
      } catch {
        finish({ kind: 'no-answer', reason: 'the answer was not JSON' });
      }
    });
    connection.on('error', (error: NodeJS.ErrnoException) => finish(lost(error.code ?? error.message)));
    connection.on('close', () => finish(lost('connection closed')));
  });
}
