/**
 * `engram hooks install|uninstall|trust|status` for users without a marketplace. The CLI surface in-process (usage
 * errors, output shape), then the whole path with the real Codex CLI (0.169.0): install into a scratch
 * $CODEX_HOME/hooks.json, see status and doctor call the hooks untrusted, trust them through Codex's own app-server,
 * see them trusted. Hooks themselves are not asserted on (their bundles change independently): only registration and
 * trust.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, engramProcess, processEnv, ROOT, SHARED, tempDir } from '../_helpers.js';
import { expectNothingLeft } from './_agents.js';

const RUN_CODEX = join(SHARED, 'tools', 'fake-openai', 'run-codex.sh');
const CODEX_VERSION = '0.169.0';
/** Where run-codex.sh caches the pinned Codex CLI (or $CODEX_BIN). */
const CODEX_BIN =
  process.env.CODEX_BIN ??
  join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? '', '.cache'), `engram-test-codex-${CODEX_VERSION}`, 'node_modules', '.bin', 'codex');

describe('engram hooks (CLI surface)', () => {
  it('installs for Claude Code from this install folder, prints exactly what changed, and is idempotent', async () => {
    const home = realpathSync(tempDir());
    const first = await cli(['hooks', 'install', '--agent', 'claude'], { home });
    expect(first.code, first.stderr).toBe(0);
    expect(first.json).toMatchObject({ agent: 'claude', scope: 'user', file: join(home, '.claude', 'settings.json'), changed: true, removed: [] });
    expect(first.json.added[0]).toEqual({
      event: 'SessionStart',
      matcher: 'startup|resume|clear|compact|fork',
      command: `sh "${ROOT}/hooks/run.sh" session-start --agent claude`,
      timeout: 15,
    });
    const second = await cli(['hooks', 'install', '--agent', 'claude', '--pretty'], { home });
    expect(second.stdout).toContain(`${join(home, '.claude', 'settings.json')}: no change`);
    const removed = await cli(['hooks', 'uninstall', '--agent', 'claude'], { home });
    expect(removed.json).toMatchObject({ changed: true, added: [] });
    expect(removed.json.removed).toHaveLength(7);
  });

  it('rejects what it cannot do with a usage error, and a broken settings file without touching it', async () => {
    const home = realpathSync(tempDir());
    for (const argv of [
      ['hooks', 'install'],
      ['hooks', 'install', '--agent', 'gemini'],
      ['hooks', 'install', '--agent', 'codex', '--scope', 'local'],
      ['hooks', 'install', '--agent', 'claude', '--trust'],
      ['hooks', 'trust', '--agent', 'claude'],
    ]) {
      const result = await cli(argv, { home });
      expect(result.code, argv.join(' ')).toBe(2);
      expect(JSON.parse(result.stderr).error.code).toBe('USAGE');
    }
    mkdirSync(join(home, '.codex'));
    writeFileSync(join(home, '.codex', 'hooks.json'), '{"hooks": ');
    const broken = await cli(['hooks', 'install', '--agent', 'codex'], { home });
    expect(broken.code).toBe(2);
    expect(JSON.parse(broken.stderr).error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('is not valid JSON') });
    expect(readFileSync(join(home, '.codex', 'hooks.json'), 'utf8')).toBe('{"hooks": ');
  });

  it('writes nothing on --dry-run', async () => {
    const home = realpathSync(tempDir());
    const result = await cli(['hooks', 'install', '--agent', 'codex', '--dry-run', '--trust'], { home });
    expect(result.json).toMatchObject({ dry_run: true, changed: true });
    expect(result.json.trust).toBeUndefined();
    expect(existsSync(join(home, '.codex'))).toBe(false);
  });

  it('says how to trust when no Codex CLI can be found', async () => {
    const home = realpathSync(tempDir());
    await cli(['hooks', 'install', '--agent', 'codex'], { home });
    const result = await cli(['hooks', 'trust', '--agent', 'codex'], { home, env: { PATH: '/nonexistent' } });
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stderr).error.message).toMatch(/cannot find the Codex CLI.*\/hooks/);
  });
});

describe.skipIf(!existsSync(RUN_CODEX))('engram hooks with the real Codex CLI', () => {
  beforeAll(() => {
    if (existsSync(CODEX_BIN)) return;
    // run-codex.sh installs the pinned CLI into its cache on first use; one trivial session is the cheapest way in.
    const work = tempDir('engram-codex-setup-');
    writeFileSync(join(work, 'turns.json'), JSON.stringify([{ text: 'ok' }]));
    spawnSync('bash', [RUN_CODEX, '--script', join(work, 'turns.json'), '--cwd', work, '--trust', 'none'], {
      env: processEnv({ HOME: process.env.HOME ?? '' }),
      timeout: 300_000,
    });
  }, 600_000);

  it('installs into $CODEX_HOME/hooks.json, reports them untrusted, trusts them through app-server, reports them trusted', async () => {
    expect(existsSync(CODEX_BIN), `no Codex CLI at ${CODEX_BIN}`).toBe(true);
    const home = realpathSync(tempDir('engram-codex-home-'));
    const project = join(home, 'shop');
    mkdirSync(project);
    execFileSync('git', ['init', '-q'], { cwd: project });
    // No codex on PATH and no $CODEX_BIN: the fallbacks (config.toml) are exercised unless --codex-bin is given.
    const env = processEnv({ CODEX_HOME: join(home, '.codex'), CLAUDE_CONFIG_DIR: join(home, '.claude'), CODEX_BIN: '' });
    const engram = (...args: string[]) => {
      const result = engramProcess(args, { home, cwd: project, env });
      let json: any;
      try {
        json = JSON.parse(result.stdout);
      } catch {
        json = undefined;
      }
      return { ...result, json };
    };
    const codexOf = (status: any) => status.agents.find((agent: { agent: string }) => agent.agent === 'codex');
    const doctorCodex = () => engram('doctor').json.checks.find((check: { name: string }) => check.name === 'codex');
    const hooksFile = join(home, '.codex', 'hooks.json');

    const installed = engram('hooks', 'install', '--agent', 'codex');
    expect(installed.status, installed.stderr).toBe(0);
    expect(installed.json).toMatchObject({ agent: 'codex', scope: 'user', file: hooksFile, changed: true });
    expect(installed.json.added.map((entry: { event: string }) => entry.event)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd']);
    expect(installed.json.next_steps.join(' ')).toContain('engram hooks trust --agent codex');

    let status = engram('hooks', 'status', '--agent', 'codex');
    expect(status.json.codex_bin).toBeNull();
    expect(codexOf(status.json)).toMatchObject({ status: 'degraded', trust: { source: 'config.toml', trusted: 0, untrusted: 6 } });
    status = engram('hooks', 'status', '--agent', 'codex', '--codex-bin', CODEX_BIN);
    expect(codexOf(status.json)).toMatchObject({ status: 'degraded', trust: { source: 'app-server', trusted: 0, untrusted: 6, modified: 0 } });
    expect(codexOf(status.json).trust.hooks).toContainEqual({ key: `${hooksFile}:session_start:0:0`, event: 'SessionStart', origin: 'user', status: 'untrusted' });
    expect(doctorCodex()).toMatchObject({ status: 'degraded', detail: expect.stringContaining('only 0 of 6'), fix: expect.stringContaining('engram hooks trust --agent codex') });

    const trusted = engram('hooks', 'trust', '--agent', 'codex', '--codex-bin', CODEX_BIN);
    expect(trusted.status, trusted.stderr).toBe(0);
    expect(trusted.json).toMatchObject({ codex: CODEX_BIN, already_trusted: [], failed: [] });
    expect(trusted.json.trusted.map((hook: { key: string }) => hook.key).sort()).toEqual(
      ['session_start', 'user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'stop', 'session_end'].map((event) => `${hooksFile}:${event}:0:0`).sort(),
    );
    // Codex wrote the trust itself, with its own hashes.
    expect(readFileSync(join(home, '.codex', 'config.toml'), 'utf8')).toContain(`[hooks.state."${hooksFile}:session_start:0:0"]\ntrusted_hash = "sha256:`);

    status = engram('hooks', 'status', '--agent', 'codex', '--codex-bin', CODEX_BIN);
    expect(codexOf(status.json)).toMatchObject({ status: 'ok', trust: { source: 'app-server', trusted: 6, untrusted: 0, modified: 0 } });
    status = engram('hooks', 'status', '--agent', 'codex');
    expect(codexOf(status.json)).toMatchObject({ status: 'ok', trust: { source: 'config.toml', trusted: 6 } });
    expect(doctorCodex()).toMatchObject({ status: 'ok', detail: `6 hooks in ${hooksFile}, 6 hooks trusted` });
    expect(engram('hooks', 'trust', '--agent', 'codex', '--codex-bin', CODEX_BIN).json.already_trusted).toHaveLength(6);
    expect(engram('hooks', 'install', '--agent', 'codex').json).toMatchObject({ changed: false, added: [], removed: [] });

    // A real session with trust left as we recorded it: Codex runs the hook (what the hook does is not asserted).
    const turns = join(home, 'turns.json');
    writeFileSync(turns, JSON.stringify([{ text: 'Done.' }]));
    const session = spawnSync('bash', [RUN_CODEX, '--script', turns, '--cwd', project, '--home', home, '--trust', 'none'], {
      env: processEnv({ HOME: home, ENGRAM_HOME: join(home, '.engram'), CODEX_BIN }),
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(session.status, session.stderr).toBe(0);
    const output = readFileSync((JSON.parse(session.stdout) as { output: string }).output, 'utf8');
    expect(output).toContain('hook: SessionStart Completed');
    // The session's hooks started Engram's server, whose session-end job (a tape, via a child process) may still be
    // writing into the home: stop it before the home is removed.
    await expectNothingLeft(home);
  }, 300_000);
});
