import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEnv } from '../../../src/core/index.js';
import { checkCodex, hooksStatus, installHooks, listCodexHooksSync, trustHooks } from '../../../src/services/index.js';
import { tempDir } from '../../_helpers.js';
import { writeFakeCodex } from './_fake-codex.js';

function installRoot(): string {
  const root = realpathSync(tempDir('engram-root-'));
  mkdirSync(join(root, 'hooks'));
  writeFileSync(join(root, 'hooks', 'run.cjs'), '');
  writeFileSync(join(root, 'hooks', 'run.sh'), '');
  return root;
}

/** A scratch HOME whose ~/.codex holds a fake `codex` (bin/), with PATH pointing at it. */
function machine(mode: 'normal' | 'silent' = 'normal') {
  const home = realpathSync(tempDir());
  const codexHome = join(home, '.codex');
  const bin = join(home, 'bin');
  mkdirSync(codexHome);
  mkdirSync(bin);
  const codex = writeFakeCodex(bin);
  const vars = { PATH: `${bin}:${process.env.PATH}`, HOME: home, FAKE_CODEX_MODE: mode };
  return { home, codexHome, codex, vars, env: readEnv(vars, { cwd: home }) };
}

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('engram hooks trust --agent codex', () => {
  it("trusts Engram's hooks (and only Engram's) with the hash Codex reports, then confirms", async () => {
    const m = machine();
    const root = installRoot();
    await installHooks({ agent: 'codex', env: m.env, cwd: m.home, installRoot: root });
    const file = join(m.codexHome, 'hooks.json');
    const hooks = JSON.parse(readFileSync(file, 'utf8'));
    hooks.hooks.Stop.push({ hooks: [{ type: 'command', command: 'someone-else.sh' }] });
    writeFileSync(file, JSON.stringify(hooks));

    const report = await trustHooks({ agent: 'codex', env: m.env, cwd: m.home, vars: m.vars });
    expect(report.codex).toBe(m.codex);
    expect(report.trusted.map((hook) => hook.event)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd']);
    expect(report.trusted[0]).toMatchObject({ key: `${file}:session_start:0:0`, origin: 'user' });
    expect(report).toMatchObject({ already_trusted: [], failed: [] });
    const state = JSON.parse(readFileSync(join(m.codexHome, 'fake-trust.json'), 'utf8'));
    expect(Object.keys(state)).toHaveLength(6);
    expect(Object.keys(state)).not.toContain(`${file}:stop:1:0`);

    const again = await trustHooks({ agent: 'codex', env: m.env, cwd: m.home, vars: m.vars });
    expect(again).toMatchObject({ trusted: [], failed: [] });
    expect(again.already_trusted).toHaveLength(6);
  });

  it('install --trust installs, then trusts', async () => {
    const m = machine();
    const result = await installHooks({ agent: 'codex', env: m.env, cwd: m.home, installRoot: installRoot(), trust: { codexBin: m.codex, vars: m.vars } });
    expect(result.trust?.trusted).toHaveLength(6);
    expect(result.next_steps.join('\n')).toContain('are trusted');
  });

  it("says what to do when there is no codex binary, or Codex lists no Engram hooks", async () => {
    const m = machine();
    await expect(trustHooks({ agent: 'codex', env: m.env, cwd: m.home, vars: { PATH: '/nonexistent' } })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining('/hooks'),
    });
    await expect(trustHooks({ agent: 'codex', env: m.env, cwd: m.home, vars: m.vars, codexBin: join(m.home, 'nope') })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(trustHooks({ agent: 'codex', env: m.env, cwd: m.home, vars: m.vars })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining('engram hooks install --agent codex'),
    });
    await expect(trustHooks({ agent: 'claude', env: m.env, cwd: m.home, vars: m.vars })).rejects.toMatchObject({ code: 'USAGE' });
  });

  it('gives up on an app-server that does not answer, and leaves no process behind', async () => {
    const m = machine('silent');
    await installHooks({ agent: 'codex', env: m.env, cwd: m.home, installRoot: installRoot() });
    // The configured timeout is what ended the wait (its value is in the message); the test's own timeout guards a hang.
    await expect(trustHooks({ agent: 'codex', env: m.env, cwd: m.home, vars: m.vars, timeoutMs: 800 })).rejects.toMatchObject({
      code: 'IO',
      message: expect.stringContaining('did not answer within 0.8 s'),
    });
    const pid = Number(readFileSync(join(m.codexHome, 'fake-codex.pid'), 'utf8'));
    expect(isRunning(pid)).toBe(false);
  });
});

describe("doctor's synchronous app-server listing", () => {
  it('lists through a helper process, and gives up on a silent app-server without leaving it running', async () => {
    const m = machine();
    await installHooks({ agent: 'codex', env: m.env, cwd: m.home, installRoot: installRoot() });
    const listing = listCodexHooksSync({ codexBin: m.codex, env: m.env, vars: m.vars, cwd: m.home });
    expect(listing.hooks.map((hook) => hook.event)).toContain('SessionStart');

    const silent = machine('silent');
    expect(() => listCodexHooksSync({ codexBin: silent.codex, env: silent.env, vars: silent.vars, cwd: silent.home, timeoutMs: 600 })).toThrow(
      /did not answer within 0\.6 s/,
    );
    const pid = Number(readFileSync(join(silent.codexHome, 'fake-codex.pid'), 'utf8'));
    expect(isRunning(pid)).toBe(false);
  });
});

describe('hooks status and doctor: Codex trust', () => {
  it('asks app-server when a codex binary is found: untrusted, trusted, then modified after moving the install', async () => {
    const m = machine();
    const root = installRoot();
    await installHooks({ agent: 'codex', env: m.env, cwd: m.home, installRoot: root });
    const status = async (installFrom = root) =>
      (await hooksStatus({ env: m.env, cwd: m.home, installRoot: installFrom, agents: ['codex'], vars: m.vars })).agents[0];

    let codex = await status();
    expect(codex?.trust).toMatchObject({ source: 'app-server', trusted: 0, untrusted: 6, modified: 0 });
    expect(codex?.status).toBe('degraded');
    expect(checkCodex(m.env, { installRoot: root, vars: m.vars })).toMatchObject({
      status: 'degraded',
      detail: expect.stringContaining('only 0 of 6 Engram hooks are trusted'),
      fix: expect.stringContaining('engram hooks trust --agent codex'),
    });

    await trustHooks({ agent: 'codex', env: m.env, cwd: m.home, vars: m.vars });
    codex = await status();
    expect(codex).toMatchObject({ status: 'ok', trust: { source: 'app-server', trusted: 6, untrusted: 0, modified: 0 } });
    expect(checkCodex(m.env, { installRoot: root, vars: m.vars })).toMatchObject({ status: 'ok', detail: expect.stringContaining('6 hooks trusted (checked with codex app-server)') });

    // Reinstalled from another folder: same keys, new definitions. Codex no longer runs them.
    const moved = installRoot();
    await installHooks({ agent: 'codex', env: m.env, cwd: m.home, installRoot: moved });
    codex = await status(moved);
    expect(codex).toMatchObject({ status: 'degraded', trust: { modified: 6 } });
    const check = checkCodex(m.env, { installRoot: moved, vars: m.vars });
    expect(check.detail).toContain('6 Engram hook(s) changed since they were trusted');
    // Without a codex binary only config.toml can be read: it cannot tell "modified".
    expect(checkCodex(m.env, { installRoot: moved }).detail).toContain('only 0 of 6');
  });

  it('reports the old install folder as stale, and a removed one as missing', async () => {
    const m = machine();
    const root = installRoot();
    await installHooks({ agent: 'codex', env: m.env, cwd: m.home, installRoot: root });
    await trustHooks({ agent: 'codex', env: m.env, cwd: m.home, vars: m.vars });
    const other = installRoot();
    const check = checkCodex(m.env, { installRoot: other, vars: m.vars });
    expect(check).toMatchObject({ status: 'degraded', detail: expect.stringContaining(`runs Engram from ${root}, not from this install (${other})`) });
    expect(check.fix).toContain('engram hooks install --agent codex --scope user');
    expect(existsSync(join(m.codexHome, 'fake-codex.pid'))).toBe(true);
  });
});
