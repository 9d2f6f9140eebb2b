/**
 * After-session work with the real Claude Code CLI (2.1.197, offline against ../shared/tools/fake-anthropic) loading
 * this repository as a plugin, and an LLM configured (a fake OpenAI-compatible server on 127.0.0.1): in a repository
 * opted in with `engram init`, a session writes and edits a file while the person corrects the agent; when it ends,
 * the SessionEnd hook's job (run by the background server) records the session as a tape in the repository's
 * `.engram/tapes/` and extracts two lessons, each naming the session, the tape and the moment it came from. They wait
 * for review (nothing harvested is shown before a person says so); `engram explain` on the file returns the tape; a
 * span of unrelated code returns nothing. A person approves one lesson and rejects the other (`engram review`,
 * `engram approve`, `engram reject`); the next real session is shown the approved one only, and harvesting the same
 * lessons again leaves the rejected one rejected. Then the server is stopped and nothing is left.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { initRepo } from '../../src/services/index.js';
import { completion, fakeOpenAi } from '../core/llm/_fakes.js';
import { cli, processEnv, ROOT, tempDir } from '../_helpers.js';
import { expectNothingLeft, killLeftovers, logProblems, requestLog, RUN_CLAUDE } from './_agents.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a command without blocking this process (the fake LLM in it must keep answering). */
function run(command: string, args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

const PROMPT =
  'Add a retry helper in src/retry.ts with 5 attempts and exponential backoff. And no: do not add a retry ' +
  'dependency such as p-retry, this project keeps zero runtime dependencies for its helpers, everything in src/ is ' +
  'written by hand and reviewed that way, so keep it a small plain function that the callers can read in one go.';
const LESSON = {
  text: 'This project keeps zero runtime dependencies for its helpers: write small helpers by hand in src/ instead of adding packages such as p-retry.',
  category: 'conventions/dependencies',
  tags: ['dependencies'],
  kind: 'convention',
  scope: 'project',
  evidence: 'this project keeps zero runtime dependencies for its helpers',
};
const SECOND = {
  text: 'Retry helpers in this project default to 5 attempts with exponential backoff between them.',
  category: 'conventions/helpers',
  tags: ['retry'],
  kind: 'convention',
  scope: 'project',
  evidence: 'with 5 attempts and exponential backoff',
};

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
  it('records the session as a tape, learns its lessons for review, explain finds the tape; only the approved lesson is shown next session', async () => {
    const work = realpathSync(tempDir('engram-tapes-e2e-'));
    const home = join(work, 'home');
    const project = join(work, 'shop');
    mkdirSync(home);
    mkdirSync(join(project, 'src'), { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd: project });
    writeFileSync(join(project, 'README.md'), '# shop\n');
    initRepo({ cwd: project });
    const engramHome = join(home, '.engram');
    const llm = await fakeOpenAi((request) =>
      completion(String(request.body?.messages?.[0]?.content ?? '').includes('Extract only from friction') ? JSON.stringify({ engrams: [LESSON, SECOND] }) : '{"score": 0}'),
    );
    mkdirSync(engramHome, { recursive: true });
    writeFileSync(join(engramHome, 'config.json'), JSON.stringify({ llm: { provider: 'openai', base_url: llm.baseUrl, model: 'extractor' } }));
    const file = join(project, 'src', 'retry.ts');
    const script = join(work, 'turns.json');
    writeFileSync(
      script,
      JSON.stringify([
        { text: 'Writing the retry helper by hand, without a dependency.', tool: 'Write', input: { file_path: file, content: RETRY.replace('attempts = 5', 'attempts = 3') } },
        { text: 'Five attempts, as asked.', tool: 'Edit', input: { file_path: file, old_string: 'attempts = 3', new_string: 'attempts = 5' } },
        { text: 'Done: src/retry.ts retries five times with exponential backoff, and adds no dependency.' },
      ]),
    );
    try {
      const result = await run(
        'bash',
        [RUN_CLAUDE, '--script', script, '--cwd', project, '--home', home, '--plugin-dir', ROOT, '--prompt', PROMPT, '--allowed', 'Write Edit'],
        processEnv({ HOME: process.env.HOME ?? '' }),
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
      // Recorded by a child process, so the server kept answering hooks meanwhile.
      expect(readFileSync(join(engramHome, 'logs', 'server.log'), 'utf8')).toMatch(/"msg":"session recorded as tapes".*"statuses":\["written"\]/);

      // The same job extracted the person's lessons, with their provenance (session, tape, moment), waiting for review.
      const learned = openStore({ path: join(engramHome, 'engram.db'), readonly: true });
      try {
        expect(learned.engrams.list({}).engrams).toEqual([
          expect.objectContaining({ text: LESSON.text, source: 'extracted', kind: 'convention', project: 'shop', source_sessions: [sessionId], status: 'pending', learned_by: 'harvest' }),
          expect.objectContaining({ text: SECOND.text, status: 'pending', learned_by: 'harvest' }),
        ]);
        expect(learned.engrams.get(1)?.content).toContain(`tape ${tapeId.slice(0, 16)}`);
        expect(learned.extractions.get(sessionId)).toMatchObject({ status: 'completed', created: 2 });
      } finally {
        learned.close();
      }
      const why = await cli(['why', '1'], { home: engramHome, cwd: project, env: { HOME: home } });
      expect(why.json.sources).toEqual([expect.objectContaining({ session_id: sessionId, tape_id: tapeId, tape_found: true, files: expect.arrayContaining([expect.objectContaining({ file: 'src/retry.ts', kind: 'edit' })]) })]);
      expect(why.json.sources[0].moment[0].text).toContain('person: Add a retry helper in src/retry.ts');
      const sent = llm.requests.map((request) => String(request.body.messages.at(-1).content));
      expect(sent).toHaveLength(1); // nothing was shown, so nothing to evaluate: one extraction call
      expect(sent[0]).toContain('user: Add a retry helper in src/retry.ts');
      expect(sent[0]).toContain('tool: Write');
      expect(sent[0]).not.toContain('[ENGRAM]');

      const explained = await cli(['explain', 'src/retry.ts:1-12'], { home: engramHome, cwd: project, env: { HOME: home } });
      expect(explained.code, explained.stderr).toBe(0);
      expect(explained.json.results[0]).toMatchObject({ tape_id: tapeId, session: { agent: 'claude', id: sessionId } });
      expect(explained.json.results[0].touches.map((touch: { kind: string }) => touch.kind)).toContain('code.edit');

      writeFileSync(join(project, 'src', 'unrelated.ts'), 'export const palette = { primary: "#7cb7ff", danger: "#ff7c7c" } as const;\nexport type Colour = keyof typeof palette;\n');
      const unrelated = await cli(['explain', 'src/unrelated.ts:1-2'], { home: engramHome, cwd: project, env: { HOME: home } });
      expect(unrelated.json.results).toEqual([]);

      const shown = await cli(['tapes'], { home: engramHome, cwd: project, env: { HOME: home } });
      expect(shown.json).toEqual([expect.objectContaining({ tape_id: tapeId, agent: 'claude', session: expect.objectContaining({ id: sessionId }) })]);

      // A person reviews: approves the first lesson, rejects the second.
      const queue = await cli(['review'], { home: engramHome, cwd: project, env: { HOME: home } });
      expect(queue.json.items.map((item: { engram: { id: number }; evidence: Array<{ session_id: string }> }) => [item.engram.id, item.evidence[0]?.session_id])).toEqual([
        [1, sessionId],
        [2, sessionId],
      ]);
      expect((await cli(['approve', '1'], { home: engramHome, cwd: project, env: { HOME: home } })).json.decisions[0]).toMatchObject({ id: 1, action: 'promoted' });
      expect((await cli(['reject', '2', '--reason', 'attempts differ per caller'], { home: engramHome, cwd: project, env: { HOME: home } })).json.decisions[0]).toMatchObject({ id: 2, action: 'rejected' });

      // The next session is shown the approved lesson only.
      const next = join(work, 'next.json');
      writeFileSync(next, JSON.stringify([{ text: 'I will write the debounce helper by hand next to the retry helper.' }]));
      const second = await run(
        'bash',
        [RUN_CLAUDE, '--script', next, '--cwd', project, '--home', home, '--plugin-dir', ROOT, '--prompt', 'Add a debounce helper next to the retry helper in src/: which dependencies and how many attempts should helpers use?', '--allowed', 'Write Edit'],
        { PATH: process.env.PATH ?? '', ENGRAM_PORT: '0', HOME: process.env.HOME ?? '' },
      );
      expect(second.status, second.stderr).toBe(0);
      const nextReport = JSON.parse(second.stdout) as { exit: number; transcript: string; requests: string };
      expect(nextReport.exit).toBe(0);
      const sentNext = requestLog(nextReport.requests)
        .filter((request) => request.path === '/v1/messages' && Array.isArray(request.body.tools))
        .map((request) => JSON.stringify(request.body));
      expect(sentNext.length).toBeGreaterThan(0);
      expect(sentNext[0]).toContain('EG#1');
      expect(sentNext[0]).toContain('zero runtime dependencies for its helpers');
      expect(sentNext.join('\n')).not.toContain('EG#2');
      expect(sentNext.join('\n')).not.toContain('default to 5 attempts');

      // Its session-end job harvests the same lessons again: the approved one stays active, the rejected one rejected.
      const nextSession = nextReport.transcript.split('/').at(-1)?.replace('.jsonl', '') as string;
      const after = openStore({ path: join(engramHome, 'engram.db'), readonly: true });
      try {
        const deadline = Date.now() + 30_000;
        while (after.jobs.get('session-end', nextSession)?.status !== 'done' && Date.now() < deadline) await sleep(200);
        expect(after.jobs.get('session-end', nextSession)).toMatchObject({ status: 'done', error: null });
        expect(after.engrams.list({ statuses: ['active', 'rejected'] }).engrams.map((engram) => [engram.id, engram.status])).toEqual([
          [1, 'active'],
          [2, 'rejected'],
        ]);
      } finally {
        after.close();
      }
      expect(logProblems(engramHome)).toEqual([]);
      await expectNothingLeft(home);
    } finally {
      killLeftovers(home);
    }
  }, 360_000);
});
