/**
 * The real hook processes (hooks/run.mjs → dist/hooks/*.mjs) fed the exact stdin Claude Code 2.1.197 and Codex
 * 0.169.0 sent (../shared/fixtures/hook-payloads), then a hostile corpus. Pins the rule that hooks never hurt the
 * agent: exit 0, no stdout, one log line on failure.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { bootstrapFiles, NATIVE_BINDING } from '../../scripts/install-state.mjs';
import { hookProcess, lockedHome, ROOT, SHARED, tempDir } from '../_helpers.js';

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

describe.skipIf(!haveFixtures)('hooks with real agent payloads', () => {
  it.each(SESSIONS)('record a %s session: start, prompt, turn, end — printing nothing', async (agent, dir, sessionId) => {
    const home = tempDir();
    const cwd = join(tempDir(), 'proj');
    mkdirSync(join(cwd, '.git'), { recursive: true });
    const steps: Array<[string, string]> = [
      ['session-start', 'SessionStart.startup.json'],
      ['user-prompt-submit', 'UserPromptSubmit.json'],
      ['stop', 'Stop.json'],
      ['session-start', 'SessionStart.resume.json'],
      ['session-end', 'SessionEnd.other.json'],
    ];
    for (const [entry, file] of steps) {
      const result = await hookProcess(entry, payload(dir, file, cwd), { home, agent });
      expect({ entry, code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ entry, code: 0, stdout: '', stderr: '' });
    }
    const store = openStore({ path: join(home, 'engram.db') });
    expect(store.sessions.get(sessionId)).toMatchObject({
      agent,
      project: 'proj',
      cwd,
      start_source: 'startup',
      turns: 1,
      end_reason: 'other',
    });
    expect(store.sessions.prompts(sessionId).map((p) => p.content)).toEqual([
      'Add a small retry helper in src/retry.py with 5 attempts, check it, and note it in notes.md.',
    ]);
    store.close();
    expect(existsSync(join(home, 'logs', 'hooks.log'))).toBe(false);
  }, 30_000);

  it('accept every recorded SessionStart variant (startup, resume, compact) from both agents', async () => {
    const home = tempDir();
    for (const [agent, dir] of SESSIONS) {
      for (const variant of ['startup', 'resume', 'compact']) {
        const result = await hookProcess('session-start', payload(dir, `SessionStart.${variant}.json`, home), { home, agent });
        expect(result).toMatchObject({ code: 0, stdout: '' });
      }
    }
    const store = openStore({ path: join(home, 'engram.db') });
    expect(store.sessions.counts().sessions).toBeGreaterThanOrEqual(2);
    store.close();
  }, 30_000);
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

  it.each(cases)('%s: exit 0, nothing on stdout or stderr, nothing stored', async (_name, stdin) => {
    const home = tempDir();
    const result = await hookProcess('user-prompt-submit', stdin, { home });
    expect({ code: result.code, signal: result.signal, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 0,
      signal: null,
      stdout: '',
      stderr: '',
    });
    expect(existsSync(join(home, 'engram.db'))).toBe(false);
    const log = readFileSync(join(home, 'logs', 'hooks.log'), 'utf8').trim().split('\n');
    expect(log).toHaveLength(1);
    expect(JSON.parse(log[0] as string).level).toBe('warn');
  }, 30_000);

  it('exits 0 for an event this version does not handle, without starting a bootstrap', async () => {
    const home = tempDir();
    const result = await hookProcess('pre-tool-use', JSON.stringify(VALID), { home });
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
    expect(existsSync(join(home, 'logs', 'hooks.log'))).toBe(false);
  }, 30_000);
});

describe('the hook launcher in a folder that is not installed yet', () => {
  it('checks the same addon path the installer builds', () => {
    expect(readFileSync(join(ROOT, 'hooks', 'run.mjs'), 'utf8')).toContain(`join(root, '${NATIVE_BINDING}')`);
  });

  it('starts the first-run bootstrap in the background, exits 0 silently, and does not retry a failure at once', async () => {
    // A plugin folder as a marketplace copy leaves it when npm could not run: no node_modules, no dist/.
    const root = tempDir();
    cpSync(join(ROOT, 'hooks'), join(root, 'hooks'), { recursive: true });
    cpSync(join(ROOT, 'scripts'), join(root, 'scripts'), { recursive: true });
    writeFileSync(join(root, 'package.json'), '{"name": "broken", "version": "0.0.0", "dependencies": {"no-such-package-engram-test": "0.0.0"}}');
    const home = tempDir();
    const run = () => hookProcess('session-start', JSON.stringify({ ...VALID, hook_event_name: 'SessionStart' }), { home, root });
    const first = await run();
    expect(first).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const files = bootstrapFiles(root, home);
    const deadline = Date.now() + 60_000;
    let state: { status?: string; error?: string } = {};
    while (Date.now() < deadline) {
      try {
        state = JSON.parse(readFileSync(files.state, 'utf8'));
      } catch {}
      if (state.status === 'failed' || state.status === 'done') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(state).toMatchObject({ status: 'failed', error: expect.stringContaining('npm ci') });
    expect(readFileSync(files.log, 'utf8')).toContain('failed: npm ci');
    // Within the back-off window, a second hook neither waits nor starts another bootstrap.
    const before = readFileSync(files.state, 'utf8');
    const logBefore = readFileSync(files.log, 'utf8');
    expect(await run()).toMatchObject({ code: 0, stdout: '', stderr: '' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(readFileSync(files.state, 'utf8')).toBe(before);
    expect(readFileSync(files.log, 'utf8')).toBe(logBefore);
  }, 90_000);
});
