/**
 * The plugin as the real Codex CLI (0.169.0, offline against ../shared/tools/fake-openai) installs it: a local
 * marketplace, `codex plugin add`, hooks trusted through Codex's own app-server, then `codex exec`. Pins that
 * .codex-plugin/plugin.json and hooks/codex-hooks.json are accepted, that all six Engram hooks are trusted, that every
 * hook that fires completes, that the session reaches the store, and that nothing is left running afterwards (the
 * background server, on as by default, is stopped). Recall itself is pinned in recall-codex.test.ts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { processEnv, ROOT, tempDir } from '../_helpers.js';
import { expectNothingLeft, killLeftovers, logProblems, RUN_CODEX, shellFrontEvents } from './_agents.js';

/** The events Engram registers for Codex (hooks/codex-hooks.json), as Codex names them in trust keys. */
const CODEX_EVENTS = ['session_start', 'user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'stop', 'session_end'];

describe.skipIf(!existsSync(RUN_CODEX))('the plugin in the real Codex CLI', () => {
  it('installs, runs every hook to completion, and records the session', async () => {
    const work = realpathSync(tempDir('engram-codex-'));
    const project = join(work, 'shop');
    // Inside the test's folder, so the plugin copy Codex makes (with node_modules) is removed afterwards.
    const home = join(work, 'home');
    mkdirSync(project);
    mkdirSync(home);
    execFileSync('git', ['init', '-q'], { cwd: project });
    const turns = join(work, 'turns.json');
    writeFileSync(turns, JSON.stringify([{ text: 'Done.' }]));
    const result = spawnSync(
      'bash',
      [RUN_CODEX, '--script', turns, '--cwd', project, '--home', home, '--plugin-dir', ROOT, '--prompt', 'codex session with key AKIAIOSFODNN7EXAMPLE'],
      { env: processEnv({ HOME: process.env.HOME ?? '' }), encoding: 'utf8', timeout: 300_000 },
    );
    expect(result.status, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { exit: number; home: string; output: string; rollout: string; requests: string; trust: string };
    try {
      expect(report.exit).toBe(0);
      expect(report.home).toBe(home);
      const trust = JSON.parse(readFileSync(report.trust, 'utf8')) as { trusted: string[]; hooks: Array<{ key: string; trust: string }> };
      // Keys are `engram@local-test:hooks/codex-hooks.json:<event>:<group>:<handler>`.
      const engramKeys = trust.trusted.filter((key) => key.startsWith('engram@'));
      expect(engramKeys.map((key) => key.split(':').at(-3)).sort()).toEqual([...CODEX_EVENTS].sort());
      const engramHooks = trust.hooks.filter((hook) => hook.key.startsWith('engram@'));
      expect(engramHooks.map((hook) => hook.trust)).toEqual(CODEX_EVENTS.map(() => 'trusted'));

      const output = readFileSync(report.output, 'utf8');
      for (const event of ['SessionStart', 'UserPromptSubmit', 'Stop']) expect(output).toContain(`hook: ${event} Completed`);
      expect(output).not.toMatch(/hook: \w+ Failed/);

      const sessionId = /([0-9a-f-]{36})\.jsonl$/.exec(report.rollout)?.[1] as string;
      const store = openStore({ path: join(home, '.engram', 'engram.db'), readonly: true });
      expect(store.sessions.get(sessionId)).toMatchObject({ agent: 'codex', project: 'shop', start_source: 'startup', turns: 1, end_reason: 'other' });
      expect(store.sessions.prompts(sessionId).map((p) => p.content)).toEqual(['codex session with key [REDACTED:aws-access-key]']);
      store.close();
      expect(logProblems(join(home, '.engram'))).toEqual([]);
      // Once the first hook had started the server, Codex's hooks went through the shell front (no Node process).
      expect(shellFrontEvents(join(home, '.engram'))).toEqual(expect.arrayContaining(['UserPromptSubmit', 'Stop']));

      // The hooks started the background server: stopped, it leaves nothing behind, and no hook is still running.
      await expectNothingLeft(home);
    } finally {
      killLeftovers(home);
      rmSync(dirname(report.requests), { recursive: true, force: true });
    }
  }, 600_000);
});
