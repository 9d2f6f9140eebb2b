/**
 * The real hook processes (hooks/run.cjs → dist/hooks/*.mjs) fed the exact stdin Claude Code 2.1.197 and Codex
 * 0.169.0 sent (../shared/fixtures/hook-payloads), then a hostile corpus. Pins the rule that hooks never hurt the
 * agent: exit 0, no stdout, one log line on failure.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { hookProcess, lockedHome, ROOT, seed, serverPid, SHARED, stopServer, tempDir, waitForServer } from '../_helpers.js';

const PAYLOADS = join(SHARED, 'fixtures', 'hook-payloads');
const haveFixtures = existsSync(PAYLOADS);

/** Reads a fixture payload and points its cwd at a folder that exists here. */
function payload(agentDir: string, file: string, cwd: string): string {
  const raw = readFileSync(join(PAYLOADS, agentDir, file), 'utf8');
  return raw.replaceAll('"/home/user/proj', JSON.stringify(cwd).slice(0, -1));
}

const SESSIONS = [
  ['claude', 'claude-code-2.1.197', 'e82eb796-9c1e-4865-b539-96c70feb0dae'],
  ['codex', 'codex-0.169.0', '01a200c4-e99d-76b2-8ecc-fca10d138460'],
] as const;

/** Every payload file of the events Engram registers, per agent, in the order a session fires them. */
const SESSION_FILES: Record<'claude' | 'codex', Array<[string, string]>> = {
  claude: [
    ['session-start', 'SessionStart.startup.json'],
    ['user-prompt-submit', 'UserPromptSubmit.json'],
    ['pre-tool-use', 'PreToolUse.Write.json'],
    ['post-tool-use', 'PostToolUse.Write.json'],
    ['pre-tool-use', 'PreToolUse.Edit.json'],
    ['post-tool-use', 'PostToolUse.Edit.json'],
    ['pre-tool-use', 'PreToolUse.Read.json'],
    ['post-tool-use', 'PostToolUse.Read.json'],
    ['pre-tool-use', 'PreToolUse.Bash.json'],
    ['post-tool-use', 'PostToolUse.Bash.json'],
    ['post-tool-use-failure', 'PostToolUseFailure.Bash.json'],
    ['pre-tool-use', 'PreToolUse.Agent.json'],
    ['post-tool-use', 'PostToolUse.Agent.json'],
    ['pre-tool-use', 'PreToolUse.Read.in-subagent.json'],
    ['stop', 'Stop.json'],
    ['session-start', 'SessionStart.resume.json'],
    ['session-start', 'SessionStart.compact.json'],
    ['session-end', 'SessionEnd.other.json'],
  ],
  codex: [
    ['session-start', 'SessionStart.startup.json'],
    ['user-prompt-submit', 'UserPromptSubmit.json'],
    ['pre-tool-use', 'PreToolUse.apply_patch.add.json'],
    ['post-tool-use', 'PostToolUse.apply_patch.add.json'],
    ['pre-tool-use', 'PreToolUse.apply_patch.update.json'],
    ['post-tool-use', 'PostToolUse.apply_patch.update.json'],
    ['pre-tool-use', 'PreToolUse.Bash.json'],
    ['post-tool-use', 'PostToolUse.Bash.json'],
    ['pre-tool-use', 'PreToolUse.Bash.failing.json'],
    ['post-tool-use', 'PostToolUse.Bash.failing.json'],
    ['pre-tool-use', 'PreToolUse.collaboration-spawn_agent.json'],
    ['stop', 'Stop.json'],
    ['session-start', 'SessionStart.resume.json'],
    ['session-start', 'SessionStart.compact.json'],
    ['session-end', 'SessionEnd.other.json'],
  ],
};

/** Output is nothing, or exactly `{"hookSpecificOutput":{"hookEventName","additionalContext"}}` on a context event. */
function expectContractOutput(stdout: string, file: string): void {
  if (stdout === '') return;
  const event = file.split('.')[0] as string;
  expect(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUseFailure']).toContain(event);
  expect(stdout.endsWith('\n')).toBe(true);
  const parsed = JSON.parse(stdout);
  expect(Object.keys(parsed)).toEqual(['hookSpecificOutput']);
  expect(Object.keys(parsed.hookSpecificOutput)).toEqual(['hookEventName', 'additionalContext']);
  expect(parsed.hookSpecificOutput.hookEventName).toBe(event);
  expect(parsed.hookSpecificOutput.additionalContext.length).toBeLessThan(10_000);
}

const logLines = (home: string, name = 'hooks'): Array<Record<string, unknown>> => {
  try {
    return readFileSync(join(home, 'logs', `${name}.log`), 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
  } catch {
    return [];
  }
};

describe.skipIf(!haveFixtures)('hooks with real agent payloads', () => {
  it.each(SESSIONS)('a whole %s session, through the warm server: exit 0, contract output, every record stored', async (agent, dir, sessionId) => {
    const home = tempDir();
    const cwd = join(tempDir(), 'proj');
    mkdirSync(join(cwd, '.git'), { recursive: true });
    seed(home, [
      { text: 'Small retry helpers in this project go in src/retry.py; check the attempts with a unit test and note each new helper in notes.md.', category: 'development' },
      { text: 'Use git push --force-with-lease, never a bare force-push, on shared branches.', category: 'tooling/git', pinned: true },
    ]);
    const outputs: string[] = [];
    for (const [entry, file] of SESSION_FILES[agent]) {
      const result = await hookProcess(entry, payload(dir, file, cwd), { home, agent, server: true });
      expect({ file, code: result.code, stderr: result.stderr }).toEqual({ file, code: 0, stderr: '' });
      expectContractOutput(result.stdout, file);
      outputs.push(result.stdout);
      if (file === 'SessionStart.startup.json') await waitForServer(home);
    }
    // SessionStart injected the pinned engram; the prompt about a retry helper got the (personal) one about retries.
    expect(outputs[0]).toContain('EG#2');
    expect(outputs[1]).toContain('EG#1');
    await stopServer(home);
    const store = openStore({ path: join(home, 'engram.db') });
    expect(store.sessions.get(sessionId)).toMatchObject({ agent, project: 'proj', cwd: expect.stringContaining('proj'), start_source: 'startup', turns: 1, end_reason: 'other' });
    expect(store.sessions.prompts(sessionId).map((p) => p.content)).toEqual([
      'Add a small retry helper in src/retry.py with 5 attempts, check it, and note it in notes.md.',
    ]);
    const events = store.activity.toolEvents(sessionId);
    expect(events.length).toBeGreaterThanOrEqual(agent === 'claude' ? 5 : 4);
    if (agent === 'claude') expect(events.some((event) => !event.ok && event.tool_name === 'Bash')).toBe(true);
    expect(store.activity.shown(sessionId).map((row) => row.engram_id).sort()).toEqual([1, 2]);
    expect(store.jobs.get('session-end', sessionId)?.status).toBe('done');
    store.close();
    const lines = logLines(home);
    expect(lines.filter((line) => line.level !== 'info' && line.level !== 'debug')).toEqual([]);
    expect(lines.filter((line) => line.path === 'server').length).toBeGreaterThanOrEqual(SESSION_FILES[agent].length - 2);
  }, 60_000);
});

describe.skipIf(!haveFixtures)('hooks through the shell front (hooks/run.sh), with the real warm server', () => {
  /** A folder with a `node` that logs each start and runs the real one (the server is started by path, not by PATH). */
  function nodeShim(): { env: Record<string, string>; runs: () => string[] } {
    const bin = tempDir();
    const log = join(bin, 'node.log');
    writeFileSync(join(bin, 'node'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${process.execPath}' "$@"\n`);
    chmodSync(join(bin, 'node'), 0o755);
    return { env: { PATH: `${bin}:${process.env.PATH ?? ''}` }, runs: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) };
  }

  it.each(SESSIONS)('a whole %s session: the same stdout the Node launcher gets, every event; Node starts only before the server is up', async (agent, dir) => {
    const runs: Record<'node' | 'sh', string[]> = { node: [], sh: [] };
    const shim = nodeShim();
    // One project for both runs: the answers name it.
    const cwd = join(tempDir(), 'proj');
    mkdirSync(join(cwd, '.git'), { recursive: true });
    for (const front of ['node', 'sh'] as const) {
      const home = tempDir();
      seed(home, [
        { text: 'Small retry helpers in this project go in src/retry.py; check the attempts with a unit test and note each new helper in notes.md.', category: 'development' },
        { text: 'Use git push --force-with-lease, never a bare force-push, on shared branches.', category: 'tooling/git', pinned: true },
      ]);
      for (const [entry, file] of SESSION_FILES[agent]) {
        const result = await hookProcess(entry, payload(dir, file, cwd), {
          home,
          agent,
          server: true,
          front,
          env: front === 'sh' ? shim.env : {},
        });
        expect({ file, code: result.code, stderr: result.stderr }).toEqual({ file, code: 0, stderr: '' });
        runs[front].push(result.stdout);
        if (file === 'SessionStart.startup.json') await waitForServer(home);
      }
      await stopServer(home);
      expect(logLines(home).filter((line) => line.level !== 'info' && line.level !== 'debug')).toEqual([]);
      // The server says which calls the shell front handed it: all but the first.
      const fronts = logLines(home).filter((line) => line.msg === 'hook done').map((line) => line.front ?? 'node');
      expect(fronts.filter((name) => name === 'sh')).toHaveLength(front === 'sh' ? SESSION_FILES[agent].length - 1 : 0);
    }
    expect(runs.sh).toEqual(runs.node);
    expect(runs.sh[0]).toContain('EG#2');
    // The first SessionStart found no server: the shell front ran the Node launcher, which started it. Then none.
    expect(shim.runs()).toHaveLength(1);
  }, 90_000);
});

const VALID = {
  session_id: 'sess-hostile',
  transcript_path: '/home/u/.claude/projects/-p/sess-hostile.jsonl',
  cwd: '/tmp',
  hook_event_name: 'UserPromptSubmit',
  prompt: 'hello',
};

describe('hooks under hostile input', () => {
  const cases: Array<[string, string | Buffer]> = [
    ['truncated JSON', JSON.stringify(VALID).slice(0, 40)],
    ['binary bytes', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 37) % 256))],
    ['a 50 MB prompt', JSON.stringify({ ...VALID, prompt: 'x'.repeat(50 * 1024 * 1024) })],
    ['wrong types', JSON.stringify({ ...VALID, prompt: { nested: true }, cwd: 7 })],
    ['null', 'null'],
    ['deeply nested JSON', `${'['.repeat(100_000)}${']'.repeat(100_000)}`],
  ];

  it.each(cases)('%s, no server: exit 0, nothing on stdout or stderr, nothing stored, no server started', async (_name, stdin) => {
    const home = tempDir();
    const result = await hookProcess('user-prompt-submit', stdin, { home, server: true });
    expect({ code: result.code, signal: result.signal, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 0,
      signal: null,
      stdout: '',
      stderr: '',
    });
    expect(existsSync(join(home, 'engram.db'))).toBe(false);
    expect(existsSync(join(home, 'run'))).toBe(false);
    const log = readFileSync(join(home, 'logs', 'hooks.log'), 'utf8').trim().split('\n');
    expect(log).toHaveLength(1);
    expect(JSON.parse(log[0] as string)).toMatchObject({ level: 'warn', path: 'in-process' });
  }, 30_000);

  it('the same corpus through a running server: exit 0, nothing printed, one warning each, the server keeps serving', async () => {
    const home = tempDir();
    const start = await hookProcess('session-start', JSON.stringify({ ...VALID, hook_event_name: 'SessionStart', source: 'startup' }), { home, server: true });
    expect(start.code).toBe(0);
    const pid = await waitForServer(home);
    for (const [name, stdin] of cases) {
      const result = await hookProcess('user-prompt-submit', stdin, { home, server: true });
      expect({ name, code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ name, code: 0, stdout: '', stderr: '' });
    }
    const valid = await hookProcess('user-prompt-submit', JSON.stringify(VALID), { home, server: true });
    expect(valid).toMatchObject({ code: 0, stderr: '' });
    expect(serverPid(home)).toBe(pid);
    await stopServer(home);
    const lines = readFileSync(join(home, 'logs', 'hooks.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    // The 50 MB prompt is over the stdin limit, so its hook never sends it and answers (ignores it) by itself.
    expect(lines.filter((line) => line.level === 'warn').map((line) => line.path)).toEqual(cases.map(([name]) => (name === 'a 50 MB prompt' ? 'in-process' : 'server')));
    // SessionStart started the server and answered by itself; the valid prompt afterwards was the server's.
    expect(lines.filter((line) => line.msg === 'hook done').map((line) => line.path)).toEqual(['in-process', 'server']);
  }, 60_000);

  it('does nothing in a session Engram itself started as its LLM (ENGRAM_LLM_CHILD=1): no record, no server', async () => {
    const home = tempDir();
    const result = await hookProcess('user-prompt-submit', JSON.stringify(VALID), { home, server: true, env: { ENGRAM_LLM_CHILD: '1' } });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(existsSync(join(home, 'engram.db'))).toBe(false);
    expect(existsSync(join(home, 'run'))).toBe(false);
  });

  it('exits 0 for an event this version does not handle, without starting a bootstrap', async () => {
    const home = tempDir();
    const result = await hookProcess('pre-compact', JSON.stringify(VALID), { home });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(existsSync(join(home, 'bootstrap'))).toBe(false);
  });

  it('exits 0 when the data folder cannot be written (and cannot even log)', async () => {
    const parent = tempDir();
    chmodSync(parent, 0o500);
    try {
      const result = await hookProcess('user-prompt-submit', JSON.stringify(VALID), { home: join(parent, 'home') });
      expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    } finally {
      chmodSync(parent, 0o700);
    }
  });

  it('exits 0 when the store is locked by another writer, after the short hook busy timeout', async () => {
    const home = lockedHome(200);
    const result = await hookProcess('user-prompt-submit', JSON.stringify(VALID), { home });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const entry = JSON.parse(readFileSync(join(home, 'logs', 'hooks.log'), 'utf8').trim());
    expect(entry).toMatchObject({ level: 'error', msg: 'hook failed', error: { code: 'STORE_LOCKED' } });
  });

  it('exits 0 when the store file is not a database', async () => {
    const home = tempDir();
    writeFileSync(join(home, 'engram.db'), 'this is not sqlite '.repeat(100));
    const result = await hookProcess('user-prompt-submit', JSON.stringify(VALID), { home });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(readFileSync(join(home, 'logs', 'hooks.log'), 'utf8')).toContain('STORE_UNAVAILABLE');
  });

  it('exit 0 when eight hooks hit one fresh home at once, and lose nothing', async () => {
    const home = tempDir();
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        hookProcess('user-prompt-submit', JSON.stringify({ ...VALID, session_id: `parallel-${i}`, prompt: `prompt ${i}` }), { home }),
      ),
    );
    expect(runs.map((r) => [r.code, r.stdout])).toEqual(Array(8).fill([0, '']));
    const store = openStore({ path: join(home, 'engram.db') });
    expect(store.sessions.counts()).toMatchObject({ sessions: 8, prompts: 8 });
    store.close();
    expect(logLines(home).filter((line) => line.level !== 'info')).toEqual([]);
  }, 30_000);
});
