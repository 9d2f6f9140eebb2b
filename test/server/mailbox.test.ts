/**
 * The hooks’ mailbox (hooks/run.cjs: the hook side; server/mailbox-server.ts: the server’s): a call posted to a
 * named pipe and a file, its answer read from a file. The hook side blocks, so the server side runs in a child
 * process (test/server/_mailbox-child.ts) with a real pipe made by mkfifo.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HOOK_ENTRIES, PIPE_BUF, mailboxOf, postToMailbox, shellMailboxOf } from '../../hooks/run.cjs';
import { ANSWER_KEEP_MS } from '../../src/server/mailbox-server.js';
import { serverPaths } from '../../src/server/address.js';
import { bundledScript, ROOT, spawnJsonLines, tempDir, until } from '../_helpers.js';

const childScript = bundledScript('server/_mailbox-child.ts', 'mailbox-child');

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
});

/** A mailbox served by a child process; `lines` is what it printed so far. */
async function serve(mode: 'echo' | 'short' | 'hold') {
  const run = tempDir();
  const mailbox = { fifo: join(run, 'hooks.fifo'), dir: join(run, 'hooks') };
  const { child, lines } = await spawnJsonLines(await childScript(), [mailbox.fifo, mailbox.dir, mode], children, 'the mailbox child to open its pipe');
  return { mailbox, child, lines };
}

const call = (event: string) => ({ v: 1, op: 'hook', call: { event, stdin: '{"x":1}', envHints: { codex: false, claude: true } } });
/** The mailbox folder's files (not its `.link` note, on a tmpfs: server/mailbox-server.ts). */
const listed = (dir: string): string[] => readdirSync(dir).filter((name) => !name.startsWith('.'));
/** What is left in the mailbox folder but answers (which the hook leaves for the sweep): calls, claims, withdrawals. */
const callFiles = (dir: string): string[] => listed(dir).filter((name) => !name.endsWith('.rep'));
/** A call too long for one atomic pipe write: it goes in a file, its id down the pipe. */
const longCall = (event: string) => ({ ...call(event), call: { ...call(event).call, stdin: JSON.stringify({ output: 'x'.repeat(PIPE_BUF) }) } });

describe.skipIf(process.platform === 'win32')('the hooks’ mailbox', () => {
  it('a posted call gets its answer; the hook leaves the answer and the sweep removes it once no hook can be reading it', async () => {
    const { mailbox, child, lines } = await serve('echo');
    const answer = postToMailbox<{ ok: boolean; echo: unknown }>(mailbox, call('PreToolUse'), 5_000);
    expect(answer).toEqual({ reply: { ok: true, echo: call('PreToolUse') } });
    await until(() => lines.some((line) => line.call), 'the child to report the call');
    // No unlink on the hook's way out: the answer stays (nothing else: no call file, no claim file).
    const [left, ...none] = listed(mailbox.dir);
    expect(none).toEqual([]);
    expect(left).toMatch(/\.rep$/);
    // Kept by a sweep while a hook could still be reading it (longer than any hook waits)…
    expect(ANSWER_KEEP_MS).toBeGreaterThan(2 * Math.max(...Object.values(HOOK_ENTRIES).map((entry) => entry.waitMs)));
    child.kill('SIGUSR1');
    await until(() => lines.filter((line) => line.swept).length === 1, 'the child to sweep');
    expect(listed(mailbox.dir)).toEqual([left]);
    // …and removed by the next one once older than that.
    const old = (Date.now() - ANSWER_KEEP_MS - 1_000) / 1000;
    utimesSync(join(mailbox.dir, left as string), old, old);
    child.kill('SIGUSR1');
    await until(() => lines.filter((line) => line.swept).length === 2, 'the child to sweep again');
    expect(listed(mailbox.dir)).toEqual([]);
  });

  it('an answer shorter than its call is read whole and alone (the server writes it over the call file)', async () => {
    const { mailbox } = await serve('short');
    expect(postToMailbox(mailbox, longCall('PostToolUse'), 5_000)).toEqual({ reply: { ok: true } });
    expect(callFiles(mailbox.dir)).toEqual([]);
  });

  it('a call too long for the pipe goes in a file and gets its answer like one in the pipe', async () => {
    const { mailbox } = await serve('echo');
    expect(postToMailbox(mailbox, longCall('PostToolUse'), 5_000)).toEqual({ reply: { ok: true, echo: longCall('PostToolUse') } });
    expect(postToMailbox(mailbox, call('PostToolUse'), 5_000)).toEqual({ reply: { ok: true, echo: call('PostToolUse') } });
    expect(callFiles(mailbox.dir)).toEqual([]);
  });

  it('a call in the pipe holding multi-byte characters reaches the server whole', async () => {
    const { mailbox } = await serve('echo');
    const accented = { ...call('UserPromptSubmit'), call: { ...call('UserPromptSubmit').call, stdin: JSON.stringify({ prompt: 'café 🧠 ü — 日本語 '.repeat(40) }) } };
    expect(Buffer.byteLength(JSON.stringify(accented))).toBeLessThan(PIPE_BUF);
    expect(postToMailbox(mailbox, accented, 5_000)).toEqual({ reply: { ok: true, echo: accented } });
  });

  it('calls one after another each get their own answer', async () => {
    const { mailbox } = await serve('echo');
    const events = ['SessionStart', 'PreToolUse', 'Stop', 'UserPromptSubmit'];
    for (const event of events) expect(postToMailbox<{ echo: unknown }>(mailbox, call(event), 5_000)).toEqual({ reply: { ok: true, echo: call(event) } });
  });

  it('calls posted at once by many hooks, each nearly a whole pipe write, never mix: each gets its own answer', async () => {
    const { mailbox, lines } = await serve('echo');
    // Separate processes (a hook blocks while it waits), started together; each call's line is just under PIPE_BUF.
    const script = `const { postToMailbox } = require(${JSON.stringify(join(ROOT, 'hooks', 'run.cjs'))});
      const [fifo, dir, n] = process.argv.slice(1);
      const call = { v: 1, op: 'hook', call: { event: 'PreToolUse', stdin: 'x'.repeat(${PIPE_BUF - 300} - n.length) + n } };
      const answer = postToMailbox({ fifo, dir }, call, 10000);
      process.stdout.write(JSON.stringify(answer.reply?.echo?.call?.stdin?.endsWith(n) === true));`;
    const hooks = Array.from({ length: 12 }, (_, n) => {
      const child = spawn(process.execPath, ['-e', script, mailbox.fifo, mailbox.dir, String(n)], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      let out = '';
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      return new Promise<string>((resolve) => child.on('exit', () => resolve(out)));
    });
    expect(await Promise.all(hooks)).toEqual(Array.from({ length: 12 }, () => 'true'));
    expect(lines.filter((line) => line.call).length).toBe(12);
    expect(lines.filter((line) => line.error)).toEqual([]);
  });

  it('the pipe is not the one servers read before calls went down it, and the server and its hooks name the same one', () => {
    // A server of an earlier version reading run/hooks.fifo would drop a call line it does not know and the hook would
    // wait out its whole timeout; with no pipe of the new name, the hook asks the socket and that server declines it.
    const home = tempDir();
    expect(mailboxOf(home).fifo).toBe(join(home, 'run', 'hook-calls.fifo'));
    expect(serverPaths(home).mailbox).toEqual({ ...mailboxOf(home), shell: shellMailboxOf(home) });
    expect(serverPaths(`${home}/`).mailbox).toEqual({ ...mailboxOf(home), shell: shellMailboxOf(home) });
    // The shell front's pipe is its own: a server that does not read its lines never makes it.
    expect(shellMailboxOf(home)).toEqual({ fifo: join(home, 'run', 'hook-calls-sh.fifo'), pid: join(home, 'run', 'hook-calls-sh.pid') });
  });

  it('without a pipe there is no mailbox: null, so the hook asks the socket', () => {
    const run = tempDir();
    expect(postToMailbox({ fifo: join(run, 'hooks.fifo'), dir: join(run, 'hooks') }, call('Stop'), 1_000)).toBeNull();
  });

  it('a folder removed under a running server: a call in the pipe is answered (the server makes the folder again)', async () => {
    const { mailbox, lines } = await serve('echo');
    rmSync(mailbox.dir, { recursive: true, force: true });
    expect(postToMailbox(mailbox, call('PreToolUse'), 5_000)).toEqual({ reply: { ok: true, echo: call('PreToolUse') } });
    expect(callFiles(mailbox.dir)).toEqual([]);
    expect(lines.filter((line) => line.error)).toEqual([]);
  });

  it('a folder removed under a running server: a call in a file gets null (the hook asks the socket, not its in-process path), and the sweep makes it again', async () => {
    const { mailbox, child, lines } = await serve('echo');
    rmSync(mailbox.dir, { recursive: true, force: true });
    expect(postToMailbox(mailbox, longCall('PreToolUse'), 5_000)).toBeNull();
    child.kill('SIGUSR1');
    await until(() => lines.some((line) => line.swept), 'the child to sweep');
    expect(postToMailbox(mailbox, longCall('PreToolUse'), 5_000)).toEqual({ reply: { ok: true, echo: longCall('PreToolUse') } });
  });

  it('a pipe removed under a running server: null (the hook asks the socket), and the sweep makes a new one it reads', async () => {
    const { mailbox, child, lines } = await serve('echo');
    rmSync(mailbox.fifo);
    expect(postToMailbox(mailbox, call('Stop'), 5_000)).toBeNull();
    child.kill('SIGUSR1');
    await until(() => lines.some((line) => line.swept), 'the child to sweep');
    expect(postToMailbox(mailbox, call('Stop'), 5_000)).toEqual({ reply: { ok: true, echo: call('Stop') } });
    expect(lines.filter((line) => line.error)).toEqual([]);
  });

  it('a pipe nobody reads (a dead server’s) is refused at once', () => {
    const run = tempDir();
    const mailbox = { fifo: join(run, 'hooks.fifo'), dir: join(run, 'hooks') };
    mkdirSync(mailbox.dir);
    expect(spawnSync('mkfifo', [mailbox.fifo]).status).toBe(0);
    const started = Date.now();
    expect(postToMailbox(mailbox, call('Stop'), 5_000)).toEqual({ failure: 'refused' });
    expect(Date.now() - started).toBeLessThan(4_000); // not the 5 s wait
    expect(listed(mailbox.dir)).toEqual([]);
  });

  // A call in the pipe is taken back by making its claim file (`.work`) before the server does; a call in a file by
  // renaming it `.gone`.
  it.each([
    { kind: 'in the pipe', posted: call('Stop'), left: 'work', event: 'Stop' },
    { kind: 'in a file', posted: longCall('PostToolUse'), left: 'gone', event: 'PostToolUse' },
  ])('a hook that stops waiting takes back a call $kind, and the server never handles it but says which event gave up', async ({ posted, left, event }) => {
    const { mailbox, child, lines } = await serve('echo');
    child.kill('SIGSTOP');
    expect(postToMailbox(mailbox, posted, 300)).toEqual({ failure: 'timeout' });
    expect(listed(mailbox.dir).map((name) => name.replace(/^.*\./, ''))).toEqual([left]);
    child.kill('SIGCONT');
    await until(() => lines.some((line) => 'withdrawn' in line), 'the server to find the call taken back');
    expect(lines.filter((line) => !line.ready)).toEqual([{ withdrawn: event }]);
    expect(listed(mailbox.dir)).toEqual([]);
  });

  it('a server that dies while a hook waits is noticed at once (lost), not after the whole wait', async () => {
    const { mailbox, child, lines } = await serve('hold');
    // The hook blocks this process while it waits: the kill comes from a separate shell.
    spawn('sh', ['-c', `sleep 0.5; kill -9 ${child.pid}`], { stdio: 'ignore', detached: true }).unref();
    const started = Date.now();
    expect(postToMailbox(mailbox, call('UserPromptSubmit'), 20_000)).toEqual({ failure: 'lost' });
    expect(Date.now() - started).toBeLessThan(10_000);
    await until(() => lines.some((line) => line.call), 'the child’s report of the call it claimed');
    expect(existsSync(mailbox.fifo)).toBe(true); // a dead server's pipe stays until the next server replaces it
  });
});
