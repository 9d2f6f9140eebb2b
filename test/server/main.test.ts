/**
 * The server's request loop (src/server/main.ts), driven over its real socket by a raw client so the test decides
 * exactly what the server sees: a hook call whose hook closed its end before the server read it is dropped, not
 * handled a second time, while a call whose hook is still waiting is answered. The server is stopped (SIGSTOP) while
 * both clients send, so both requests are in the kernel's queue when it resumes: no race with a hook's wait budget.
 * A shell front's call (hooks/run.sh's files, written here) whose hook stopped waiting before the answer could be
 * written records nothing as shown — its payload file's time says the wait is over, as a busy server finds it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createConnection, type Socket } from 'node:net';
import { closeSync, constants, existsSync, openSync, readFileSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { serverPaths } from '../../src/server/address.js';
import { PROTOCOL_VERSION } from '../../src/server/protocol.js';
import { shellMailboxOf } from '../../hooks/run.cjs';
import { hookProcess, ROOT, seed, stopServer, tempDir, until, waitForServer } from '../_helpers.js';

const stopCall = (session: string) => ({
  v: PROTOCOL_VERSION,
  op: 'hook',
  call: {
    event: 'Stop',
    stdin: JSON.stringify({ session_id: session, transcript_path: '/tmp/t.jsonl', cwd: '/tmp', hook_event_name: 'Stop', stop_hook_active: false }),
    agentFlag: 'claude',
    envHints: { codex: false, claude: true },
  },
});

const hookLog = (home: string): Array<Record<string, unknown>> =>
  readFileSync(join(home, 'logs', 'hooks.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));

/** Connects and sends one request line; resolves once the kernel has accepted the connection and the line. */
function send(socket: string, request: unknown): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const connection = createConnection(socket);
    connection.setEncoding('utf8');
    connection.once('error', reject);
    connection.once('connect', () => connection.write(`${JSON.stringify(request)}\n`, () => resolve(connection)));
  });
}

/** The first line the server answers on a connection. */
function answer(connection: Socket): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    connection.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end >= 0) resolve(JSON.parse(buffer.slice(0, end)) as Record<string, unknown>);
    });
    connection.once('close', () => reject(new Error(`closed without an answer: ${JSON.stringify(buffer)}`)));
  });
}

describe.skipIf(process.platform !== 'linux')('the server request loop', () => {
  it('drops a hook call whose hook already closed its end, and answers one whose hook still waits', async () => {
    const home = tempDir();
    seed(home, [{ text: 'Docker builds need BuildKit: set DOCKER_BUILDKIT=1 before docker build in CI.', category: 'ops' }]);
    // A first hook starts the server (and records the sessions table's schema).
    await hookProcess('user-prompt-submit', JSON.stringify({ session_id: 'start', transcript_path: '/tmp/t.jsonl', cwd: '/tmp', hook_event_name: 'UserPromptSubmit', prompt: 'docker' }), { home, server: true });
    const pid = await waitForServer(home);
    const { socket } = serverPaths(home);

    // Busy past the hooks' wait (a model loading, an index building): the kernel still queues what clients send.
    process.kill(pid, 'SIGSTOP');
    let waiting: Socket;
    try {
      const gaveUp = await send(socket, stopCall('gave-up'));
      gaveUp.destroy(); // the hook's wait ran out: it answered by itself and closed its end
      waiting = await send(socket, stopCall('waiting'));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const reply = await answer(waiting);
    waiting.destroy();
    expect(reply).toMatchObject({ ok: true, op: 'hook', outcome: expect.any(String) });

    await until(() => hookLog(home).some((line) => String(line.msg).startsWith('hook gave up waiting')), 'the server to read the abandoned call');
    // The server writes a hook's log line once its answer is sent.
    await until(() => hookLog(home).some((line) => line.msg === 'hook done' && line.event === 'Stop'), 'the answered call’s log line');
    const stops = hookLog(home).filter((line) => line.event === 'Stop');
    expect(stops.map(({ msg, path }) => ({ msg, path }))).toEqual([
      { msg: 'hook gave up waiting before the server read it; not handled twice', path: 'server' },
      { msg: 'hook done', path: 'server' },
    ]);
    await stopServer(home);
    const store = openStore({ path: join(home, 'engram.db'), readonly: true });
    expect(store.sessions.get('waiting')?.turns).toBe(1);
    expect(store.sessions.get('gave-up')?.turns ?? 0).toBe(0);
    store.close();
  }, 60_000);

  it('a shell front call answered after its hook stopped waiting records nothing as shown; one answered in time does', async () => {
    const home = tempDir();
    seed(home, [{ text: 'Docker builds need BuildKit: set DOCKER_BUILDKIT=1 before docker build in CI.', category: 'ops' }]);
    await hookProcess('stop', JSON.stringify({ session_id: 'start', transcript_path: '/tmp/t.jsonl', cwd: '/tmp', hook_event_name: 'Stop', stop_hook_active: false }), { home, server: true });
    await waitForServer(home);
    const { fifo } = shellMailboxOf(home);
    await until(() => existsSync(fifo), 'the shell front pipe');
    const box = join(home, 'run', 'hooks');

    /** What hooks/run.sh does for one pre-tool-use call, its payload file `ageMs` old; resolves with what its `cat` read. */
    const post = (id: string, session: string, ageMs: number): Promise<string> => {
      const payload = { session_id: session, transcript_path: '/tmp/t.jsonl', cwd: '/tmp', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'docker build .' } };
      writeFileSync(join(box, `${id}.req`), JSON.stringify(payload));
      const past = (Date.now() - ageMs) / 1000;
      utimesSync(join(box, `${id}.req`), past, past);
      spawnSync('mkfifo', [join(box, `${id}.out`)]);
      const reader = spawn('timeout', ['5', 'cat', join(box, `${id}.out`)], { stdio: ['ignore', 'pipe', 'ignore'] });
      let read = '';
      reader.stdout.on('data', (chunk) => (read += chunk));
      const done = new Promise<string>((resolve) => reader.on('close', () => resolve(read)));
      const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
      writeSync(fd, `${id}\tpre-tool-use\tclaude\t01\t${ROOT}\t\n`);
      closeSync(fd);
      return done;
    };
    const doneLines = () => hookLog(home).filter((line) => line.msg === 'hook done' && line.event === 'PreToolUse');

    // Its hook's wait (800 ms) was over 10 s ago: the server answers nothing into the pipe.
    const late = post('s1-0', 'late', 10_000);
    await until(() => doneLines().length === 1, 'the late call handled');
    expect(doneLines()[0]).toMatchObject({ path: 'server', front: 'sh', injected: [1], delivered: false });
    // Just posted: answered, and recorded.
    expect(await post('s1-1', 'on-time', 0)).toContain('DOCKER_BUILDKIT=1');
    await until(() => doneLines().length === 2, 'the call in time handled');
    expect(doneLines()[1]).toMatchObject({ path: 'server', front: 'sh', injected: [1] });
    expect(doneLines()[1]).not.toHaveProperty('delivered');
    await stopServer(home);
    expect(await late).toBe('');
    const store = openStore({ path: join(home, 'engram.db'), readonly: true });
    try {
      expect(store.activity.shown('late')).toEqual([]);
      expect(store.activity.shown('on-time').map((row) => row.engram_id)).toEqual([1]);
    } finally {
      store.close();
    }
  }, 60_000);
});
