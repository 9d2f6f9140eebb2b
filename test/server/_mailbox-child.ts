/**
 * The server side of the hooks' mailbox in a child process, for test/server/mailbox.test.ts (the hook side posts
 * synchronously, so it cannot share a process with the server it waits for):
 *   _mailbox-child <fifo> <dir> echo|short|hold
 * `echo` answers every call with its own line; `short` with `{"ok":true}` (shorter than any call); `hold` claims
 * calls and never answers. SIGUSR1 runs the sweep (as the server's watch does). Prints one JSON line per happening:
 * {ready}, {call}, {withdrawn: event}, {swept}, {error}.
 */
import { openMailbox } from '../../src/server/mailbox-server.js';

const [fifo, dir, mode] = process.argv.slice(2) as [string, string, string];
const say = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`);
const mailbox = openMailbox(
  { fifo, dir },
  {
    onCall(call) {
      say({ call: JSON.parse(call.line) });
      if (mode === 'echo') call.answer(`${JSON.stringify({ ok: true, echo: JSON.parse(call.line) })}\n`);
      if (mode === 'short') call.answer('{"ok":true}\n');
    },
    onWithdrawn: (event) => say({ withdrawn: event }),
    onError: (error) => say({ error: String(error) }),
  },
);
if ('error' in mailbox) {
  say({ error: String(mailbox.error) });
  process.exit(1);
}
process.on('SIGTERM', () => {
  mailbox.close();
  process.exit(0);
});
process.on('SIGUSR1', () => {
  mailbox.sweep();
  say({ swept: true });
});
say({ ready: true });
