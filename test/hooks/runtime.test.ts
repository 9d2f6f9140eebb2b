import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { readEnv } from '../../src/core/index.js';
import { detectAgent, readStdin, runHook, type HookIo } from '../../src/hooks/_runtime.js';
import { SessionStartInputSchema } from '../../src/hooks/contract.js';
import { lockedHome, Sink, tempDir } from '../_helpers.js';

const PAYLOAD = {
  session_id: 'sess-1',
  transcript_path: '/home/u/.claude/projects/-p/sess-1.jsonl',
  cwd: '/tmp',
  hook_event_name: 'SessionStart',
  source: 'startup',
};

function io(home: string, stdin: Readable | string | Buffer, extra: Partial<HookIo> = {}) {
  const stdout = new Sink();
  const exit = vi.fn();
  return {
    stdout,
    exit,
    io: {
      stdin: typeof stdin === 'string' || Buffer.isBuffer(stdin) ? Readable.from([stdin]) : stdin,
      stdout,
      argv: ['--agent', 'claude'],
      env: { HOME: home, ENGRAM_HOME: home },
      now: () => new Date('2026-11-22T10:00:00Z'),
      exit,
      ...extra,
    } satisfies HookIo,
  };
}

const logLines = (home: string): Array<Record<string, unknown>> => {
  try {
    return readFileSync(join(home, 'logs', 'hooks.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  } catch {
    return [];
  }
};

describe('runHook', () => {
  it('hands a valid payload to the handler with the agent, prints nothing and exits 0', async () => {
    const home = tempDir();
    const handler = vi.fn();
    const run = io(home, JSON.stringify(PAYLOAD));
    await runHook('SessionStart', SessionStartInputSchema, handler, run.io);
    expect(handler).toHaveBeenCalledOnce();
    expect(handler.mock.calls[0]?.[0]).toMatchObject({ input: PAYLOAD, agent: 'claude' });
    expect(run.stdout.text).toBe('');
    expect(run.exit).toHaveBeenCalledWith(0);
  });

  it('keeps fields it does not know (agents add new ones every release)', async () => {
    const home = tempDir();
    const handler = vi.fn();
    await runHook('SessionStart', SessionStartInputSchema, handler, io(home, JSON.stringify({ ...PAYLOAD, brand_new: { x: 1 } })).io);
    expect(handler.mock.calls[0]?.[0].input.brand_new).toEqual({ x: 1 });
  });

  it.each([
    ['truncated JSON', '{"session_id": "s', 'stdin is not JSON; ignored'],
    ['binary garbage', Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x02]), 'stdin is not JSON; ignored'],
    ['an empty stdin', '', 'stdin is not JSON; ignored'],
    ['a JSON array', '[1, 2]', 'stdin does not match the event contract; ignored'],
    ['a session_id of the wrong type', JSON.stringify({ ...PAYLOAD, session_id: 42 }), 'stdin does not match the event contract; ignored'],
    ['a missing cwd', JSON.stringify({ ...PAYLOAD, cwd: undefined }), 'stdin does not match the event contract; ignored'],
    ['another event’s payload', JSON.stringify({ ...PAYLOAD, hook_event_name: 'Stop' }), 'hook_event_name does not match this hook; ignored'],
  ])('ignores %s: handler not called, nothing printed, one warning logged, exit 0', async (_name, stdin, message) => {
    const home = tempDir();
    const handler = vi.fn();
    const run = io(home, stdin);
    await runHook('SessionStart', SessionStartInputSchema, handler, run.io);
    expect(handler).not.toHaveBeenCalled();
    expect(run.stdout.text).toBe('');
    expect(run.exit).toHaveBeenCalledWith(0);
    expect(logLines(home)).toEqual([expect.objectContaining({ level: 'warn', msg: message, event: 'SessionStart' })]);
  });

  it('ignores a payload over the size limit without holding it in memory', async () => {
    const home = tempDir();
    const handler = vi.fn();
    const big = Readable.from((function* () {
      for (let i = 0; i < 17; i++) yield Buffer.alloc(1024 * 1024, 0x61);
    })());
    await runHook('SessionStart', SessionStartInputSchema, handler, io(home, big).io);
    expect(handler).not.toHaveBeenCalled();
    expect(logLines(home)[0]).toMatchObject({ msg: 'stdin larger than the limit; ignored' });
  });

  it('logs a handler failure as one error line and still exits 0 with nothing printed', async () => {
    const home = tempDir();
    const run = io(home, JSON.stringify(PAYLOAD));
    await runHook('SessionStart', SessionStartInputSchema, () => {
      throw new Error('boom with token=hunter22abc');
    }, run.io);
    expect(run.stdout.text).toBe('');
    expect(run.exit).toHaveBeenCalledWith(0);
    const [line] = logLines(home);
    expect(line).toMatchObject({ level: 'error', msg: 'hook failed', event: 'SessionStart', agent: 'claude' });
    expect(JSON.stringify(line)).not.toContain('hunter22');
  });

  it('gives up on a locked store after the hook busy timeout and exits 0', async () => {
    const home = lockedHome(100);
    const run = io(home, JSON.stringify(PAYLOAD));
    await runHook('SessionStart', SessionStartInputSchema, (context) => {
      context.store().write(() => context.store().sessions.recordTurn('x', 'now'));
    }, run.io);
    expect(run.exit).toHaveBeenCalledWith(0);
    expect(run.stdout.text).toBe('');
    expect(logLines(home)[0]).toMatchObject({ level: 'error', error: { code: 'STORE_LOCKED' } });
  });

  it('falls back to default settings, and says so, when config.json is broken', async () => {
    const home = tempDir();
    writeFileSync(join(home, 'config.json'), '{"hooks": ');
    const handler = vi.fn();
    await runHook('SessionStart', SessionStartInputSchema, handler, io(home, JSON.stringify(PAYLOAD)).io);
    expect(handler).toHaveBeenCalledOnce();
    expect(handler.mock.calls[0]?.[0].settings.config.hooks.busy_timeout_ms).toBe(1500);
    expect(logLines(home)[0]).toMatchObject({ level: 'warn', msg: 'config.json is invalid; using defaults' });
  });
});

describe('readStdin', () => {
  it('stops waiting for a stdin that never closes', async () => {
    const stream = new PassThrough();
    stream.write('{"partial":');
    const result = await readStdin(stream, { timeoutMs: 50 });
    expect(result).toEqual({ text: '{"partial":', tooLarge: false, timedOut: true });
  });
});

describe('detectAgent', () => {
  it.each([
    [['--agent', 'codex'], {}, {}, 'codex'],
    [['--agent', 'claude'], { turn_id: 't' }, { PLUGIN_ROOT: '/p' }, 'claude'],
    [[], { turn_id: 't' }, {}, 'codex'],
    [[], {}, { PLUGIN_ROOT: '/x', CLAUDE_PLUGIN_ROOT: '/x' }, 'codex'],
    [[], {}, { CLAUDE_PROJECT_DIR: '/p' }, 'claude'],
    [[], { transcript_path: '/home/u/.claude/projects/p/s.jsonl' }, {}, 'claude'],
    [[], {}, {}, 'unknown'],
  ])('argv %j, input %j, env %j → %s', (argv, input, env, agent) => {
    expect(detectAgent(argv, input, readEnv({ HOME: '/h', ...env }))).toBe(agent);
  });
});
