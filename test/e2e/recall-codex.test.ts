/**
 * Recall in the real Codex CLI (0.169.0, offline against ../shared/tools/fake-openai), with the plugin installed the
 * way users install it (`run-codex.sh --plugin-dir`: a local marketplace, `codex plugin add`, hooks trusted through
 * Codex's app-server) and the background server on, as by default. A store seeded with three engrams, then:
 *
 * - a session on their topic with one shell call: SessionStart shows the pinned engram, UserPromptSubmit the one the
 *   prompt is about, PreToolUse the one about `git status --ignored`; each reaches the model as a developer message, every
 *   hook completes, and the store holds the session, the prompt, what was shown, the tool call and the session-end job;
 * - a session with an unrelated prompt: only the pinned engram is shown.
 *
 * After each session the server is stopped and nothing of the scratch home is left running.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { processEnv, ROOT, tempDir } from '../_helpers.js';
import { engramLine, expectNothingLeft, killLeftovers, logProblems, requestLog, RUN_CODEX, seedEngrams, TOPIC } from './_agents.js';

interface Report {
  exit: number;
  home: string;
  rollout: string;
  requests: string;
  output: string;
  trust: string;
}

/** The `[ENGRAM]` developer messages of the last main-loop request, in order. */
function engramMessages(requests: string): string[] {
  const main = requestLog(requests).filter((r) => r.path === '/v1/responses' && Array.isArray(r.body.tools));
  expect(main.length).toBeGreaterThan(0);
  const input = main.at(-1)?.body.input as Array<{ type: string; role?: string; content?: Array<{ text?: string }> }>;
  return input
    .filter((item) => item.type === 'message' && item.role === 'developer')
    .map((item) => (item.content ?? []).map((part) => part.text ?? '').join(''))
    .filter((text) => text.includes('[ENGRAM]'));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!existsSync(RUN_CODEX))('recall in the real Codex CLI', () => {
  it('injects the engrams a session is about, records what it showed, and stays quiet off topic', async () => {
    const work = realpathSync(tempDir('engram-recall-codex-'));
    const home = join(work, 'home');
    const project = join(work, 'shop');
    mkdirSync(home);
    mkdirSync(project);
    execFileSync('git', ['init', '-q'], { cwd: project });
    const engramHome = join(home, '.engram');
    const { push, status, pinned } = TOPIC.engrams;
    const [pushId, statusId, pinnedId] = seedEngrams(home, [push, status, pinned]) as [number, number, number];

    const runs: string[] = [];
    const session = (prompt: string, turns: unknown[], install: boolean): Report => {
      const script = join(work, `turns-${runs.length}.json`);
      writeFileSync(script, JSON.stringify(turns));
      const args = [RUN_CODEX, '--script', script, '--cwd', project, '--home', home, '--prompt', prompt];
      if (install) args.push('--plugin-dir', ROOT);
      const result = spawnSync('bash', args, {
        env: processEnv({ HOME: process.env.HOME ?? '' }),
        encoding: 'utf8',
        timeout: 300_000,
      });
      expect(result.status, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout) as Report;
      runs.push(dirname(report.requests));
      expect(report.exit, readFileSync(report.output, 'utf8')).toBe(0);
      return report;
    };
    const idOf = (report: Report) => /([0-9a-f-]{36})\.jsonl$/.exec(report.rollout)?.[1] as string;

    try {
      // A session on the topic: a shell call, then the answer.
      const first = session(
        TOPIC.prompt,
        [{ text: 'Checking the branch first.', shell: 'git status --ignored' }, { text: 'Use git push --force-with-lease on your own branch.' }],
        true,
      );
      const trusted = (JSON.parse(readFileSync(first.trust, 'utf8')) as { trusted: string[] }).trusted;
      expect(trusted.filter((key) => key.startsWith('engram@')).length).toBe(6);

      const output = readFileSync(first.output, 'utf8');
      for (const event of ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']) {
        expect(output).toContain(`hook: ${event} Completed`);
      }
      expect(output).not.toMatch(/hook: \w+ Failed/);

      // What the model was sent: the three blocks as developer messages, in the order the hooks ran.
      const blocks = engramMessages(first.requests);
      expect(blocks).toHaveLength(3);
      expect(blocks[0]).toContain(engramLine(pinnedId, pinned));
      expect(blocks[1]).toContain(engramLine(pushId, push));
      expect(blocks[2]).toContain(engramLine(statusId, status));
      for (const block of blocks) expect(block).toMatch(/^\[ENGRAM\] [\s\S]*\n\[\/ENGRAM\]$/);
      expect(blocks[1]).toContain('Memories from earlier sessions that may apply to this request');
      expect(blocks[2]).toContain('Memories from earlier sessions about this Bash call');

      const firstId = idOf(first);
      const store = openStore({ path: join(engramHome, 'engram.db'), readonly: true });
      try {
        expect(store.sessions.get(firstId)).toMatchObject({ agent: 'codex', project: 'shop', start_source: 'startup', turns: 1, end_reason: 'other' });
        expect(store.sessions.prompts(firstId).map((p) => p.content)).toEqual([TOPIC.prompt]);
        expect(store.activity.shown(firstId).map(({ engram_id, event, query }) => ({ engram_id, event, query }))).toEqual([
          { engram_id: pinnedId, event: 'SessionStart', query: null },
          { engram_id: pushId, event: 'UserPromptSubmit', query: TOPIC.prompt },
          { engram_id: statusId, event: 'PreToolUse', query: 'Bash git status --ignored' },
        ]);
        expect(store.activity.toolEvents(firstId)).toMatchObject([{ tool_name: 'Bash', target: 'git status --ignored', ok: true, error: null }]);
        // SessionEnd queued its job; the server runs it.
        const deadline = Date.now() + 20_000;
        while (store.jobs.get('session-end', firstId)?.status !== 'done' && Date.now() < deadline) await sleep(200);
        expect(store.jobs.get('session-end', firstId)).toMatchObject({ kind: 'session-end', session_id: firstId, status: 'done', error: null });
        // The job recorded the session as a tape: under the Engram home, since the repository did not opt in.
        const tapeDirs = readdirSync(join(engramHome, 'tapes'));
        expect(tapeDirs).toEqual([expect.stringMatching(/^shop-[0-9a-f]{10}$/)]);
        expect(readdirSync(join(engramHome, 'tapes', tapeDirs[0] as string)).filter((name) => name.endsWith('.jsonl.zst'))).toHaveLength(1);
        expect(existsSync(join(project, '.engram'))).toBe(false);
      } finally {
        store.close();
      }
      expect(logProblems(engramHome)).toEqual([]);
      await expectNothingLeft(home);

      // An unrelated prompt in the next session: the pinned engram at start, nothing for the prompt.
      const second = session(TOPIC.unrelated, [{ text: '4' }], false);
      const output2 = readFileSync(second.output, 'utf8');
      for (const event of ['SessionStart', 'UserPromptSubmit', 'Stop']) expect(output2).toContain(`hook: ${event} Completed`);
      expect(output2).not.toMatch(/hook: \w+ Failed/);
      const blocks2 = engramMessages(second.requests);
      expect(blocks2).toHaveLength(1);
      expect(blocks2[0]).toContain(engramLine(pinnedId, pinned));
      const sent = readFileSync(second.requests, 'utf8');
      expect(sent).not.toContain(`EG#${pushId} `);
      expect(sent).not.toContain(`EG#${statusId} `);

      const secondId = idOf(second);
      expect(secondId).not.toBe(firstId);
      const store2 = openStore({ path: join(engramHome, 'engram.db'), readonly: true });
      try {
        expect(store2.sessions.get(secondId)).toMatchObject({ agent: 'codex', turns: 1, end_reason: 'other' });
        expect(store2.sessions.prompts(secondId).map((p) => p.content)).toEqual([TOPIC.unrelated]);
        expect(store2.activity.shown(secondId).map(({ engram_id, event }) => ({ engram_id, event }))).toEqual([
          { engram_id: pinnedId, event: 'SessionStart' },
        ]);
      } finally {
        store2.close();
      }
      expect(logProblems(engramHome)).toEqual([]);
      await expectNothingLeft(home);
    } finally {
      killLeftovers(home);
      for (const dir of runs) rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);
});
