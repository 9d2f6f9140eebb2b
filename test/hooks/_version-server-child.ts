/**
 * A stand-in for the warm server's hook answers, for test/hooks/run-version.test.ts: the real mailbox
 * (server/mailbox-server.ts) in a child process, answering hook calls as servers of each kind do:
 *   _version-server-child <fifo> <dir> new|old|no-runtime|other-version
 * `new`: answers the install-folder form (`root`) and the version form, as this version's server does for a hook of
 * its own version; `old`: a server from before the install-folder form, whose strict schema (copied here as it was)
 * calls it an invalid request and answers the version form; `no-runtime`: finds no runtime for the folder;
 * `other-version`: a server of another version, which answers neither. Prints {ready} and each call it got as {call}.
 * The answer's stdout says which form was answered. (A stand-in, not the real server, because the old server's code is
 * not in this tree; test/e2e/server.test.ts runs the real one.)
 */
import * as z from 'zod';
import { mode, say, serveMailbox } from '../server/_mailbox-serve.js';

/** The hook request as servers before the install-folder form validated it (server/protocol.ts then). */
const OldHookRequest = z.strictObject({ v: z.literal(1), op: z.literal('hook'), version: z.string().max(64).optional(), call: z.unknown() });

function reply(request: Record<string, unknown>): unknown {
  const answered = (how: string) => ({ ok: true, op: 'hook', stdout: `answered ${how}`, outcome: 'test', ms: 0 });
  if (mode === 'other-version') return { ok: false, error: 'version' };
  if (mode === 'old') return OldHookRequest.safeParse(request).success ? answered(`version ${String(request.version)}`) : { ok: false, error: 'invalid request' };
  if (typeof request.version === 'string') return answered(`version ${request.version}`);
  if (mode === 'no-runtime') return { ok: false, error: 'no runtime' };
  return answered(`root ${String(request.root)}`);
}

serveMailbox((call) => {
  const request = JSON.parse(call.line) as Record<string, unknown>;
  say({ call: request });
  call.answer(`${JSON.stringify(reply(request))}\n`);
}).ready();
