/**
 * What the mailbox children (test/server/_mailbox-child.ts, test/hooks/_version-server-child.ts) share: the real
 * server side of the mailbox opened on `<fifo> <dir>` from argv, one JSON line printed per happening, an exit on
 * SIGTERM, and {ready} once it listens.
 */
import { openMailbox, type Mailbox, type MailboxCall } from '../../src/server/mailbox-server.js';

export const [fifo, dir, mode] = process.argv.slice(2) as [string, string, string];
export const say = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`);

/** Opens the mailbox with `onCall` (and `onWithdrawn`), or prints the error and exits 1. Call `ready()` last. */
export function serveMailbox(onCall: (call: MailboxCall) => void, onWithdrawn: (event: string | null) => void = () => {}): { mailbox: Mailbox; ready(): void } {
  const mailbox = openMailbox({ fifo, dir }, { onCall, onWithdrawn, onError: (error) => say({ error: String(error) }) });
  if ('error' in mailbox) {
    say({ error: String(mailbox.error) });
    process.exit(1);
  }
  process.on('SIGTERM', () => {
    mailbox.close();
    process.exit(0);
  });
  return { mailbox, ready: () => say({ ready: true }) };
}
