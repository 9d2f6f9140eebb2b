/**
 * The hook stdin reader (hooks/run.cjs readStdinSync): synchronous reads of the pipe, socket or file an
 * agent gives a hook, so the hook loads no stream machinery. Run in child processes with real descriptors.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, readSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engramHome, mailboxFiles, mailboxOf, readStdinSync } from '../../hooks/run.cjs';
import { bundledScript, ROOT, tempDir, until } from '../_helpers.js';

const childScript = bundledScript('hooks/_stdin-child.ts', 'stdin-child');

/** Runs the reader in a child whose stdin is what `shell` pipes into it. */
async function readThrough(shell: string, maxBytes?: number) {
  const result = spawnSync('sh', ['-c', `${shell} | '${process.execPath}' '${await childScript()}' ${maxBytes ?? ''}`], { encoding: 'utf8', timeout: 20_000 });
  const { ms, ...read } = JSON.parse(result.stdout) as Record<string, unknown>;
  return { read, ms: ms as number };
}

describe('readStdinSync', () => {
  it('decodes UTF-8 split across reads and multi-byte characters whole', async () => {
    const { read } = await readThrough(`{ printf '%s' '{"p":"caf'; sleep 0.2; printf '%s' 'é 🧠 ü"}'; }`);
    expect(read).toEqual({ text: '{"p":"café 🧠 ü"}', tooLarge: false, timedOut: false });
  });

  it('reads a pipe to its end', async () => {
    const { read } = await readThrough(`printf '%s' '{"hook_event_name":"Stop","n":1}'`);
    expect(read).toEqual({ text: '{"hook_event_name":"Stop","n":1}', tooLarge: false, timedOut: false });
  });

  it('reads a socket to its end (what Claude Code gives a hook)', async () => {
    const result = spawnSync(process.execPath, [await childScript()], { input: '{"a":[1,2,3]}', encoding: 'utf8' });
    expect(JSON.parse(result.stdout)).toEqual({ text: '{"a":[1,2,3]}', tooLarge: false, timedOut: false, ms: expect.any(Number) });
  });

  it('does not wait for the end of a pipe kept open once a whole JSON payload has arrived', async () => {
    const { read, ms } = await readThrough(`{ printf '%s' '{"prompt":"a } inside"}'; sleep 8; }`);
    expect(read).toEqual({ text: '{"prompt":"a } inside"}', tooLarge: false, timedOut: false });
    expect(ms).toBeLessThan(6_000); // the writer holds the pipe for 8 s
  });

  it('does not wait for the end of a pipe kept open when the payload is followed by a newline', async () => {
    const { read, ms } = await readThrough(`{ printf '%s\\r\\n \\n' '{"prompt":"a } inside"}'; sleep 8; }`);
    expect(read).toEqual({ text: '{"prompt":"a } inside"}\r\n \n', tooLarge: false, timedOut: false });
    expect(ms).toBeLessThan(6_000); // the writer holds the pipe for 8 s
  });

  it('keeps reading a payload that arrives in parts, even when a part ends with a brace', async () => {
    const { read } = await readThrough(`{ printf '%s' '{"a":{"b":1}'; sleep 0.3; printf '%s' ',"c":2}'; }`);
    expect(read).toEqual({ text: '{"a":{"b":1},"c":2}', tooLarge: false, timedOut: false });
  });

  it('drops a payload over the limit but reads it to its end', async () => {
    const { read } = await readThrough(`head -c 200000 /dev/zero | tr '\\0' 'x'`, 100_000);
    expect(read).toEqual({ text: '', tooLarge: true, timedOut: false });
  });

  it('reads a file; leaves a terminal or device to the stream reader (with its time limit)', () => {
    const file = join(tempDir(), 'payload.json');
    writeFileSync(file, '{"from":"file"}');
    const fd = openSync(file, 'r');
    try {
      expect(readStdinSync(fd)).toEqual({ text: '{"from":"file"}', tooLarge: false, timedOut: false });
    } finally {
      closeSync(fd);
    }
    const device = openSync('/dev/null', 'r');
    try {
      expect(readStdinSync(device)).toEqual({ rest: [] });
    } finally {
      closeSync(device);
    }
  });
});

describe('the hot path’s paths (joined without path.join when that gives the same string)', () => {
  it('give exactly what path.join gives, for clean folders and for ones path.join must normalise', () => {
    for (const home of ['/home/u', '/home/u/', '/home//u', '/home/./u', '/home/u/../v', '/', '/h/.x', '/a b/c']) {
      expect(engramHome({ HOME: home })).toBe(join(home, '.engram'));
      expect(mailboxOf(home)).toEqual({ fifo: join(home, 'run', 'hook-calls.fifo'), dir: join(home, 'run', 'hooks') });
      expect(mailboxFiles(home, 'id-1').reply).toBe(join(home, 'id-1.rep'));
    }
  });
});

describe('answerAndExit', () => {
  /** A CommonJS child that requires the launcher, optionally listens for 'exit', and answers. */
  const answer = (listen: boolean) => {
    const script = [
      `const { answerAndExit } = require(${JSON.stringify(join(ROOT, 'hooks', 'run.cjs'))});`,
      // Seen only when process.exit's JavaScript runs (it sets the exit code through this setter's validation).
      `const exit = process.exit; process.exit = (code) => { require('node:fs').writeSync(2, 'process.exit\\n'); exit(code); };`,
      listen ? `process.on('exit', () => require('node:fs').writeSync(2, 'exit listener\\n'));` : '',
      `answerAndExit('{"ok":1}', () => require('node:fs').writeSync(2, 'after\\n'));`,
      `require('node:fs').writeSync(2, 'still running\\n');`,
    ].join('\n');
    return spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
  };

  it('writes the answer, runs `after`, and exits 0 without process.exit when nothing listens for exit', () => {
    const result = answer(false);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('{"ok":1}');
    expect(result.stderr).toBe('after\n');
  });

  it('goes through process.exit, so listeners run, when something listens for exit', () => {
    const result = answer(true);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('{"ok":1}');
    expect(result.stderr).toBe('after\nprocess.exit\nexit listener\n');
  });
});

describe.skipIf(process.platform === 'win32')('the launcher’s wake-up', () => {
  /** Reads what is in a pipe opened without blocking ('' when nothing is). */
  const readNow = (fd: number): string => {
    const buffer = Buffer.alloc(8192);
    try {
      return buffer.toString('utf8', 0, readSync(fd, buffer));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return '';
      throw error;
    }
  };

  it('writes an empty line down the mailbox pipe before it reads stdin, then the call', async () => {
    const home = tempDir();
    const { fifo } = mailboxOf(home);
    mkdirSync(join(home, 'run', 'hooks'), { recursive: true });
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // The server's end: read and write (never end-of-file), without blocking.
    const pipe = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    const hook = spawn(process.execPath, [join(ROOT, 'hooks', 'run.cjs'), 'pre-tool-use', '--agent', 'claude'], {
      env: { PATH: process.env.PATH ?? '', HOME: home, ENGRAM_HOME: home },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    try {
      let seen = '';
      // Stdin not written yet: the hook is blocked reading it, and has woken the server already.
      await until(() => (seen += readNow(pipe)) !== '', 'the wake-up line');
      expect(seen).toBe('\n');
      const payload = JSON.stringify({ session_id: 'a1b2', hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: '/x' } });
      hook.stdin.end(payload);
      await until(() => (seen += readNow(pipe)).split('\n').length > 2, 'the call line');
      const [wake, line, rest] = seen.split('\n');
      expect(wake).toBe('');
      expect(rest).toBe('');
      const space = (line ?? '').indexOf(' ');
      expect(line?.slice(0, space)).toMatch(/^[a-z0-9-]{1,64}$/);
      const request = JSON.parse((line ?? '').slice(space + 1)) as { op: string; call: { event: string; stdin: string } };
      expect(request.op).toBe('hook');
      expect(request.call).toMatchObject({ event: 'PreToolUse', stdin: payload });
    } finally {
      hook.kill('SIGKILL');
      closeSync(pipe);
    }
  });
});
