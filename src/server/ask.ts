// Asking the background server over its socket (the CLI, the MCP server, and hooks when the server has no mailbox:
// hooks/run.cjs postToMailbox). Deliberately small: node:net only, and loaded when first used, so a hook that posts
// to the mailbox never loads it.

/**
 * Why a request got no answer: `no-server` (no socket file), `refused` (a socket nobody listens on: a dead server's),
 * `lost` (connected, then closed before answering: the server died or dropped the request mid-query), `timeout`
 * (no answer in time), `bad-reply` (not a JSON line).
 */
export type AskFailure = 'no-server' | 'refused' | 'lost' | 'timeout' | 'bad-reply';

/** The outcome of one request. */
export type AskAnswer<T> = { reply: T } | { failure: AskFailure };

/** Sends one request (a JSON line) and waits up to `timeoutMs` for one JSON line back; says why when there is none. */
export function askServer<T>(socket: string, request: unknown, timeoutMs: number): Promise<AskAnswer<T>> {
  return new Promise((resolve) => {
    let settled = false;
    let buffer = '';
    const connection = process.getBuiltinModule('node:net').createConnection(socket);
    const finish = (value: AskAnswer<T>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      connection.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => finish({ failure: 'timeout' }), timeoutMs);
    connection.setEncoding('utf8');
    connection.on('connect', () => connection.write(`${JSON.stringify(request)}\n`));
    connection.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      try {
        finish({ reply: JSON.parse(buffer.slice(0, end)) as T });
      } catch {
        finish({ failure: 'bad-reply' });
      }
    });
    connection.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code;
      finish({ failure: code === 'ENOENT' ? 'no-server' : code === 'ECONNREFUSED' ? 'refused' : 'lost' });
    });
    connection.on('close', () => finish({ failure: 'lost' }));
  });
}

/** {@link askServer} without the reason: the reply, or null. */
export async function ask<T>(socket: string, request: unknown, timeoutMs: number): Promise<T | null> {
  const answer = await askServer<T>(socket, request, timeoutMs);
  return 'reply' in answer ? answer.reply : null;
}
