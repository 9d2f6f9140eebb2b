/**
 * The install users do, with the real Claude Code CLI (2.1.197, offline against ../shared/tools/fake-anthropic):
 * `claude plugin marketplace add <clean clone>` and `claude plugin install engram@engram` in a scratch HOME. The
 * plugin arrives without a built native module or dist/ (Claude Code at most runs `npm ci --ignore-scripts`); the
 * first session's hooks start the bootstrap in the background and stay silent, and the next session's hooks work:
 * its records reach the store and no hook reports an error in the transcript.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { bootstrapFiles } from '../../scripts/install-state.mjs';
import { ROOT, SHARED, tempDir } from '../_helpers.js';

const RUN_CLAUDE = join(SHARED, 'tools', 'fake-anthropic', 'run-claude.sh');
const VERSION = '2.1.197';
const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), `engram-test-claude-${VERSION}`);
const CLAUDE = process.env.CLAUDE_BIN ?? join(CACHE, 'node_modules', '.bin', 'claude');

/** The same pinned install run-claude.sh does, so `claude plugin …` is available before the first session. */
function ensureClaude(): void {
  if (existsSync(CLAUDE)) return;
  mkdirSync(CACHE, { recursive: true });
  execFileSync('npm', ['init', '-y'], { cwd: CACHE, stdio: 'ignore' });
  execFileSync('npm', ['install', '--no-audit', '--no-fund', `@anthropic-ai/claude-code@${VERSION}`], { cwd: CACHE, stdio: 'ignore' });
}

/** What a clone of this repository contains: tracked and new files that git does not ignore, committed. */
function cleanClone(target: string): void {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT })
    .toString()
    .split('\0')
    .filter((file) => file && existsSync(join(ROOT, file)));
  for (const file of files) {
    mkdirSync(dirname(join(target, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(target, file));
  }
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: target, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'snapshot');
}

describe.skipIf(!existsSync(RUN_CLAUDE))('a marketplace install in the real Claude Code CLI', () => {
  it('installs, bootstraps on first use, and the next session’s hooks record it', async () => {
    ensureClaude();
    const work = tempDir('engram-install-');
    const clone = join(work, 'engram');
    const home = join(work, 'home');
    const project = join(work, 'shop');
    mkdirSync(home);
    mkdirSync(project);
    cleanClone(clone);
    execFileSync('git', ['init', '-q'], { cwd: project });

    // Scratch HOME for Claude Code and Engram; npm reuses the machine's package cache so the test does not
    // download the dependencies again (the native build still happens, as it would for a user).
    const env = { PATH: process.env.PATH ?? '', HOME: home, npm_config_cache: join(homedir(), '.npm'), CLAUDE_BIN: CLAUDE };
    const claude = (...args: string[]) => spawnSync(CLAUDE, args, { cwd: work, env, encoding: 'utf8', timeout: 180_000 });
    const added = claude('plugin', 'marketplace', 'add', clone);
    expect(added.stdout + added.stderr).toContain('Successfully added marketplace: engram');
    const installed = claude('plugin', 'install', 'engram@engram');
    expect(installed.stdout + installed.stderr).toContain('Successfully installed plugin: engram@engram');

    const turns = join(work, 'turns.json');
    writeFileSync(turns, JSON.stringify([{ text: 'Noted.' }]));
    const session = (prompt: string) => {
      const result = spawnSync('bash', [RUN_CLAUDE, '--script', turns, '--cwd', project, '--home', home, '--prompt', prompt], {
        env,
        encoding: 'utf8',
        timeout: 300_000,
      });
      expect(result.status, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout) as { exit: number; transcript: string };
      expect(report.exit).toBe(0);
      return report.transcript;
    };

    // First session: the install is not ready; hooks start the bootstrap and stay out of the way.
    const first = session('first session');
    const engramHome = join(home, '.engram');
    const files = bootstrapFiles(clone, engramHome);
    expect(existsSync(files.state)).toBe(true);
    const deadline = Date.now() + 8 * 60_000;
    let state: { status?: string; error?: string; steps?: string[] } = {};
    while (Date.now() < deadline) {
      state = JSON.parse(readFileSync(files.state, 'utf8'));
      if (state.status !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(state, readFileSync(files.log, 'utf8').slice(-3000)).toMatchObject({ status: 'done' });
    expect(state.steps).toContain('build');

    // Second session: the hooks work.
    const second = session('second session: the deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789');
    const sessionId = second.split('/').at(-1)?.replace('.jsonl', '') as string;
    const store = openStore({ path: join(engramHome, 'engram.db'), readonly: true });
    expect(store.sessions.get(sessionId)).toMatchObject({ agent: 'claude', project: 'shop', cwd: project, start_source: 'startup', turns: 1, end_reason: 'other' });
    expect(store.sessions.prompts(sessionId).map((p) => p.content)).toEqual([
      'second session: the deploy token is [REDACTED:github-token]',
    ]);
    store.close();

    for (const transcript of [first, second]) {
      const text = readFileSync(transcript, 'utf8');
      expect(text).not.toMatch(/hook_(non_)?blocking_error|hook error|non-blocking status code/i);
    }
    expect(existsSync(join(engramHome, 'logs', 'hooks.log'))).toBe(false);

    // The installed CLI agrees: the plugin is registered and working.
    const doctor = spawnSync(process.execPath, [join(clone, 'bin', 'engram'), 'doctor'], { env, encoding: 'utf8' });
    const checks = Object.fromEntries(
      (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string }> }).checks.map((c) => [c.name, c.status]),
    );
    expect(checks).toMatchObject({ claude: 'ok', install: 'ok', store: 'ok', sqlite: 'ok', hook_errors: 'ok' });
  }, 900_000);
});
