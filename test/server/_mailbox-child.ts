/**
 * The server side of the hooks' mailbox in a child process, for test/server/mailbox.test.ts (the hook side posts
 * synchronously, so it cannot share a process with the server it waits for):
 *   _mailbox-child <fifo> <dir> echo|short|hold
 * `echo` answers every call with its own line; `short` with `{"ok":true}` (shorter than any call); `hold` claims
 * calls and never answers. SIGUSR1 runs the sweep (as the server's watch does). Prints one JSON line per happening:
 * {ready}, {call}, {withdrawn: event}, {swept}, {error}.
 */
import { mode, say, serveMailbox } from './_mailbox-serve.js';

const { mailbox, ready } = serveMailbox(
  (call) => {
    say({ call: JSON.parse(call.line) });
    if (mode === 'echo') call.answer(`${JSON.stringify({ ok: true, echo: JSON.parse(call.line) })}\n`);
    if (mode === 'short') call.answer('{"ok":true}\n');
  },
  (event) => say({ withdrawn: event }),
);
process.on('SIGUSR1', () => {
  mailbox.sweep();
  say({ swept: true });
});
ready();
