/**
 * The server's `call` request (src/server/protocol.ts): a real dist/server.mjs on a real store answers operations of
 * services/ops for other processes — a result, or the operation's own error as its answer — refuses malformed
 * requests, and does not answer another Engram version. Whoever calls, the operation runs as the agent through MCP:
 * a request cannot name its actor (one that tries is not a request), so a save over the socket waits for review.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { serverPaths } from '../../src/server/address.js';
import { callServer } from '../../src/server/call.js';
import { ROOT, stopServer, tempDir, until } from '../_helpers.js';

/** The version the built server answers to (the bundles are stamped from package.json). */
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe.skipIf(process.platform !== 'linux')('the server answers operation calls', () => {
  it('runs an operation, returns its errors as answers, refuses malformed requests and other versions', async () => {
    const home = tempDir();
    const server = spawn(process.execPath, [join(ROOT, 'dist', 'server.mjs')], {
      env: { ...process.env, HOME: home, ENGRAM_HOME: home, ENGRAM_EMBEDDER: 'none' },
      stdio: 'ignore',
      detached: true,
    });
    server.unref();
    const { socket } = serverPaths(home);
    try {
      await until(() => existsSync(socket), 'the server to listen');
      const caller = { cwd: home, agent: 'codex', session_id: 'mcp-test', project: 'shop' };
      const call = (method: string, params: unknown, extra: object = {}) =>
        callServer<any>(socket, { v: 1, op: 'call', version: VERSION, method, params, caller, ...extra }, 10_000);

      const saved = await call('obs.save', { title: 'Via the socket', content: 'Saved by a call request.' });
      expect(saved).toMatchObject({
        kind: 'answer',
        answer: { ok: true, op: 'call', result: { status: 'created', id: 1, observation: { project: 'shop', session_id: 'manual-save-shop' }, review: { status: 'pending' } } },
      });
      // A caller that names an actor — a person, to make its save active at once — is not a request at all.
      for (const actor of ['user', 'agent', { by: 'user', via: 'cli' }]) {
        const claimed = await callServer(socket, { v: 1, op: 'call', version: VERSION, method: 'obs.save', params: { title: 'Claimed', content: 'Saved as a person?' }, caller: { ...caller, actor } }, 10_000);
        expect(claimed).toEqual({ kind: 'answer', answer: { ok: false, error: 'invalid request' } });
      }
      const store = openStore({ path: join(home, 'engram.db'), readonly: true });
      try {
        expect(store.engrams.list({ statuses: ['pending', 'active'] }).engrams.map((e) => [e.id, e.status, e.learned_by])).toEqual([[1, 'pending', 'agent']]);
        expect(store.db.prepare('SELECT actor, via, op, engram_ids FROM audit_log').all()).toEqual([{ actor: 'agent', via: 'mcp', op: 'add', engram_ids: '[1]' }]);
      } finally {
        store.close();
      }
      expect((await call('obs.get', { id: 1 })).kind === 'answer').toBe(true);
      expect(await call('obs.get', { id: 9 })).toMatchObject({ answer: { ok: true, op: 'call', error: { code: 'NOT_FOUND', message: 'Observation #9 not found' } } });
      expect(await call('obs.get', { id: 'x' })).toMatchObject({ answer: { ok: true, error: { code: 'INVALID_INPUT', message: expect.stringContaining('id: ') } } });
      expect(await call('engram.approve', {})).toMatchObject({ answer: { ok: true, error: { code: 'INVALID_INPUT', message: "unknown operation 'engram.approve'" } } });
      expect(await call('toString', {})).toMatchObject({ answer: { ok: true, error: { code: 'INVALID_INPUT' } } });
      // A caller that says nothing of itself is not a request.
      expect(await callServer(socket, { v: 1, op: 'call', method: 'obs.stats', params: {} }, 10_000)).toEqual({ kind: 'answer', answer: { ok: false, error: 'invalid request' } });
      // Another version (an older one here) is not answered; the server keeps running.
      expect(await call('obs.stats', {}, { version: '0.0.1' })).toEqual({ kind: 'answer', answer: { ok: false, error: 'version' } });
      expect(await call('obs.stats', {})).toMatchObject({ answer: { ok: true, result: { total_observations: 1, total_sessions: 1 } } });
    } finally {
      await stopServer(home);
    }
    // Nothing listens any more: a request is known to be undelivered, not lost.
    expect(await callServer(socket, { v: 1, op: 'ping' }, 2_000)).toMatchObject({ kind: 'unreachable' });
  });
});
