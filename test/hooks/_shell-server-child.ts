/**
 * A stand-in for the warm server, for test/hooks/run-sh.test.ts: the real mailbox (server/mailbox-server.ts) in a
 * child process, with the shell front's pipe or without it (a server from before the shell front):
 *   _shell-server-child <home> echo|decline|slow|old
 * `echo` answers a shell front's call with what it got (entry, agent, hints, root, plugin data, the payload's length
 * and its first bytes); `decline` declines it (the hook runs the Node launcher); `slow` claims it and answers only
 * after 3 s (past the hook's wait); `old` opens no shell pipe. Every mode answers the Node launcher's calls (the other
 * pipe) with `node: <event> <mailbox form>`. Prints {ready}, {shell}, {delivered} (whether a shell answer reached its
 * hook), {call}, {withdrawn}, {error}; exits on SIGTERM.
 * (A stand-in for the server's handler, to steer each case; test/e2e/hooks.test.ts runs the real server.)
 */
import { mailboxOf, shellMailboxOf } from '../../hooks/run.cjs';
import { say, serve } from '../server/_mailbox-serve.js';

const [home, mode] = process.argv.slice(2) as [string, string];

const { mailbox, ready } = serve(
  { ...mailboxOf(home), ...(mode === 'old' ? {} : { shell: shellMailboxOf(home) }) },
  {
    onCall(call) {
      const request = JSON.parse(call.line) as { root?: string; version?: string; call: { event: string; stdin: string } };
      say({ call: { event: request.call.event, stdinLength: request.call.stdin.length } });
      const form = request.version !== undefined ? 'version' : 'root';
      call.answer(`${JSON.stringify({ ok: true, op: 'hook', stdout: `node: ${request.call.event} ${form}\n`, outcome: 'test', ms: 0 })}\n`);
    },
    onShellCall(call) {
      const got = { entry: call.entry, agent: call.agent, envHints: call.envHints, root: call.root, pluginData: call.pluginData, stdinLength: call.stdin?.length ?? null, stdinHead: call.stdin?.slice(0, 40) ?? null };
      say({ shell: got });
      // Whether each answer reached its hook, as the server's recording is told.
      const answer = (text: string) => void Promise.resolve(call.answer(text)).then((delivered) => say({ delivered }));
      if (mode === 'decline') call.decline();
      else if (mode === 'slow') setTimeout(() => answer('late\n'), 3_000);
      else answer(`${JSON.stringify(got)}\n`);
    },
    onWithdrawn: (event) => say({ withdrawn: event }),
  },
);
process.on('SIGUSR1', () => mailbox.sweep());
ready();
