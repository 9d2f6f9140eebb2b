/**
 * The server's request check (server/protocol.ts parseServerRequest): the hook call launchers send is checked by hand,
 * without the zod schema; it must give exactly the schema's verdict — same requests accepted, same data — and leave
 * everything else to the schema.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseServerRequest, ServerRequestSchema } from '../../src/server/protocol.js';

const call = { event: 'PreToolUse', stdin: '{"session_id":"s"}', agentFlag: 'claude', envHints: { codex: false, claude: true } };
const valid: unknown[] = [
  { v: 1, op: 'hook', root: '/plugin/root', call },
  { v: 1, op: 'hook', root: '/plugin/root', pluginData: '/data', call },
  { v: 1, op: 'hook', version: '0.1.0', call },
  { v: 1, op: 'hook', call: { event: 'Stop', stdin: '', envHints: { codex: true, claude: false } } },
  { v: 1, op: 'hook', version: '', call: { ...call, stdinProblem: 'too-large' } },
  { v: 1, op: 'hook', root: 'x'.repeat(4096), call: { ...call, stdinProblem: 'timeout', agentFlag: 'a'.repeat(32) } },
];
const invalid: unknown[] = [
  null,
  [],
  'hook',
  { v: 2, op: 'hook', call },
  { v: 1, op: 'hook' },
  { v: 1, op: 'hook', call, extra: 1 },
  { v: 1, op: 'hook', root: '', call },
  { v: 1, op: 'hook', root: 'x'.repeat(4097), call },
  { v: 1, op: 'hook', version: 'v'.repeat(65), call },
  { v: 1, op: 'hook', version: 1, call },
  { v: 1, op: 'hook', pluginData: null, call },
  { v: 1, op: 'hook', call: { ...call, event: 'Nope' } },
  { v: 1, op: 'hook', call: { ...call, stdin: 1 } },
  { v: 1, op: 'hook', call: { ...call, stdinProblem: 'other' } },
  { v: 1, op: 'hook', call: { ...call, agentFlag: 'a'.repeat(33) } },
  { v: 1, op: 'hook', call: { ...call, extra: true } },
  { v: 1, op: 'hook', call: { ...call, envHints: { codex: false } } },
  { v: 1, op: 'hook', call: { ...call, envHints: { codex: false, claude: true, other: true } } },
  { v: 1, op: 'hook', call: { ...call, envHints: { codex: 'no', claude: true } } },
  { v: 1, op: 'hook', call: [] },
  JSON.parse('{"v":1,"op":"hook","call":{"event":"Stop","stdin":"","envHints":{"codex":true,"claude":false}},"__proto__":{}}'),
];

afterEach(() => vi.restoreAllMocks());

describe('parseServerRequest', () => {
  it('gives the schema’s verdict and data for hook calls, valid and not', () => {
    for (const request of [...valid, ...invalid]) {
      const schema = ServerRequestSchema.safeParse(request);
      expect(parseServerRequest(request), JSON.stringify(request)).toEqual(schema.success ? schema.data : null);
    }
    for (const request of valid) expect(parseServerRequest(request), JSON.stringify(request)).not.toBeNull();
  });

  it('checks a launcher’s hook call without the schema, and leaves other requests to it', () => {
    const parse = vi.spyOn(ServerRequestSchema, 'safeParse');
    for (const request of valid) parseServerRequest(request);
    expect(parse).not.toHaveBeenCalled();
    expect(parseServerRequest({ v: 1, op: 'ping' })).toEqual({ v: 1, op: 'ping' });
    expect(parseServerRequest({ v: 1, op: 'hook', call, extra: 1 })).toBeNull();
    expect(parse).toHaveBeenCalledTimes(2);
  });
});
