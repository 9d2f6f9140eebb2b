/**
 * Tapes recorded automatically, with the real Claude Code CLI (2.1.197, offline against
 * ../shared/tools/fake-anthropic) loading this repository as a plugin: in a repository opted in with `engram init`,
 * a session writes and edits a file; when it ends, the SessionEnd hook's job (run by the background server) records
 * the session as a tape in the repository's `.engram/tapes/`, and `engram explain` on that file returns the tape;
 * a span of unrelated code returns nothing. After the session the server is stopped and nothing is left running.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { initRepo } from '../../src/services/index.js';
import { cli, ROOT, tempDir } from '../_helpers.js';
import { expectNothingLeft, killLeftovers, logProblems, RUN_CLAUDE } from './_agents.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const RETRY = [
  'export async function withRetry<T>(attempt: () => Promise<T>, attempts = 5): Promise<T> {',
  '  let lastError: unknown;',
  '  for (let tries = 0; tries < attempts; tries++) {',
  '    try {',
  '      return await attempt();',
  '    } catch (error) {',
  '      lastError = error;',
  '      await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** tries));',
  '    }',
  '  }',
  '  throw lastError;',
  '}',
  '',
].join('\n');

describe.skipIf(!existsSync(RUN_CLAUDE))('tapes of real Claude Code sessions', () => {
  it('records the session of an opted-in repository as a tape when it ends, and explain finds it', async () => {
    const work = realpathSync(tempDir('engram-tapes-e2e-'));
    const home = join(work, 'home');
    const project = join(work, 'shop');
    mkdirSync(home);
    mkdirSync(join(project, 'src'), { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd: project });
    writeFileSync(join(project, 'README.md'), '# shop\n');
    initRepo({ cwd: project });
    const engramHome = join(home, '.engram');
    const file = join(project, 'src', 'retry.ts');
    const script = join(work, 'turns.json');
    writeFileSync(
      script,
      JSON.stringify([
        { text: 'Writing the retry helper.', tool: 'Write', input: { file_path: file, content: RETRY.replace('attempts = 5', 'attempts = 3') } },
        { text: 'Five attempts, as asked.', tool: 'Edit', input: { file_path: file, old_string: 'attempts = 3', new_string: 'attempts = 5' } },
        { text: 'Done: src/retry.ts retries five times with exponential backoff.' },
      ]),
    );
    try {
      const result = spawnSync(
        'bash',
        [RUN_CLAUDE, '--script', script, '--cwd', project, '--home', home, '--plugin-dir', ROOT, '--prompt', 'add a retry helper with 5 attempts', '--allowed', 'Write Edit'],
        { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, encoding: 'utf8', timeout: 300_000 },
      );
      expect(result.status, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout) as { exit: number; transcript: string; output: string };
      expect(report.exit, readFileSync(report.output, 'utf8')).toBe(0);
      expect(readFileSync(file, 'utf8')).toBe(RETRY);
      const sessionId = report.transcript.split('/').at(-1)?.replace('.jsonl', '') as string;

      // SessionEnd queued the job; the server records the tape.
      const store = openStore({ path: join(engramHome, 'engram.db'), readonly: true });
      try {
        const deadline = Date.now() + 30_000;
        while (store.jobs.get('session-end', sessionId)?.status !== 'done' && Date.now() < deadline) await sleep(200);
        expect(store.jobs.get('session-end', sessionId)).toMatchObject({ status: 'done', error: null });
      } finally {
        store.close();
      }
      const tapes = readdirSync(join(project, '.engram', 'tapes')).filter((name) => name.endsWith('.jsonl.zst'));
      expect(tapes).toHaveLength(1);
      const tapeId = (tapes[0] as string).replace('.jsonl.zst', '');
      expect(existsSync(join(engramHome, 'tapes'))).toBe(false); // nothing outside the opted-in repository

      const explained = await cli(['explain', 'src/retry.ts:1-12'], { home: engramHome, cwd: project, env: { HOME: home } });
      expect(explained.code, explained.stderr).toBe(0);
      expect(explained.json.results[0]).toMatchObject({ tape_id: tapeId, session: { agent: 'claude', id: sessionId } });
      expect(explained.json.results[0].touches.map((touch: { kind: string }) => touch.kind)).toContain('code.edit');

      writeFileSync(join(project, 'src', 'unrelated.ts'), 'export const palette = { primary: "#7cb7ff", danger: "#ff7c7c" } as const;\nexport type Colour = keyof typeof palette;\n');
      const unrelated = await cli(['explain', 'src/unrelated.ts:1-2'], { home: engramHome, cwd: project, env: { HOME: home } });
      expect(unrelated.json.results).toEqual([]);

      const shown = await cli(['tapes'], { home: engramHome, cwd: project, env: { HOME: home } });
      expect(shown.json).toEqual([expect.objectContaining({ tape_id: tapeId, agent: 'claude', session: expect.objectContaining({ id: sessionId }) })]);
      expect(logProblems(engramHome)).toEqual([]);
      await expectNothingLeft(home);
    } finally {
      killLeftovers(home);
    }
  }, 360_000);
});
