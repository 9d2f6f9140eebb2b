/**
 * What the mailbox children (test/server/_mailbox-child.ts, test/hooks/_version-server-child.ts) share: the real
 * server side of the mailbox opened on `<fifo> <dir>` from argv, one JSON line printed per happening, an exit on
 * SIGTERM, and {ready} once it listens.
 */
import { openMailbox, type Mailbox, type MailboxCall } from '../../src/server/mailbox-server.js';

export const [fifo, dir, mode] = process.argv.slice(2) as [string, string, string];
export const say = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`);

/**
 * Opens `mailbox` with `handlers` (errors printed), or prints the error and exits 1; closes it on SIGTERM. Call
 * `ready()` last.
 */
export function serve(
  mailbox: Parameters<typeof openMailbox>[0],
  handlers: Omit<Parameters<typeof openMailbox>[1], 'onError'>,
): { mailbox: Mailbox; ready(): void } {
  const opened = openMailbox(mailbox, { ...handlers, onError: (error) => say({ error: String(error) }) });
  if ('error' in opened) {
    say({ error: String(opened.error) });
    process.exit(1);
  }
  process.on('SIGTERM', () => {
    opened.close();
    process.exit(0);
  });
  return { mailbox: opened, ready: () => say({ ready: true }) };
}

/** Opens the mailbox of argv's `<fifo> <dir>` with `onCall` (and `onWithdrawn`). Call `ready()` last. */
export function serveMailbox(onCall: (call: MailboxCall) => void, onWithdrawn: (event: string | null) => void = () => {}): { mailbox: Mailbox; ready(): void } {
  return serve({ fifo, dir }, { onCall, onWithdrawn });
}
