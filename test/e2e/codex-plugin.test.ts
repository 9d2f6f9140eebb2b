/**
 * The plugin as the real Codex CLI (0.169.0, offline against ../shared/tools/fake-openai) installs it: a local
 * marketplace, `codex plugin add`, hooks trusted through Codex's own app-server, then `codex exec`. Pins that
 * .codex-plugin/plugin.json and hooks/codex-hooks.json are accepted, that every hook completes, and that the session
 * reaches the store.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { ROOT, SHARED, tempDir } from '../_helpers.js';

const RUN_CODEX = join(SHARED, 'tools', 'fake-openai', 'run-codex.sh');

describe.skipIf(!existsSync(RUN_CODEX))('the plugin in the real Codex CLI', () => {
  it('installs, runs every hook to completion, and records the session', () => {
    const work = tempDir('engram-codex-');
    const project = join(work, 'shop');
    mkdirSync(project);
    execFileSync('git', ['init', '-q'], { cwd: project });
    const turns = join(work, 'turns.json');
    writeFileSync(turns, JSON.stringify([{ text: 'Done.' }]));
    const result = spawnSync(
      'bash',
      [RUN_CODEX, '--script', turns, '--cwd', project, '--plugin-dir', ROOT, '--prompt', 'codex session with key AKIAIOSFODNN7EXAMPLE'],
      { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, encoding: 'utf8', timeout: 300_000 },
    );
    expect(result.status, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { exit: number; home: string; output: string; rollout: string; trust: string };
    expect(report.exit).toBe(0);
    const trusted = JSON.parse(readFileSync(report.trust, 'utf8')) as { trusted: string[] };
    expect(trusted.trusted.filter((key) => key.startsWith('engram@')).length).toBe(4);

    const output = readFileSync(report.output, 'utf8');
    for (const event of ['SessionStart', 'UserPromptSubmit', 'Stop']) expect(output).toContain(`hook: ${event} Completed`);
    expect(output).not.toMatch(/hook: \w+ Failed/);

    const sessionId = /([0-9a-f-]{36})\.jsonl$/.exec(report.rollout)?.[1] as string;
    const store = openStore({ path: join(report.home, '.engram', 'engram.db'), readonly: true });
    expect(store.sessions.get(sessionId)).toMatchObject({ agent: 'codex', project: 'shop', start_source: 'startup', turns: 1, end_reason: 'other' });
    expect(store.sessions.prompts(sessionId).map((p) => p.content)).toEqual(['codex session with key [REDACTED:aws-access-key]']);
    store.close();
  }, 600_000);
});
