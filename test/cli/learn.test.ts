import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { completion, fakeOpenAi } from '../core/llm/_fakes.js';
import { cli, SHARED, tempDir } from '../_helpers.js';
import { gitRepo, write } from '../core/environment/_fixture.js';

/** An Engram home with one engram, and a TypeScript repository to give feedback from. */
async function setup(): Promise<{ home: string; project: string }> {
  const home = tempDir();
  const project = join(home, 'work', 'shop');
  gitRepo(project);
  write(join(project, 'tsconfig.json'), '{}');
  expect((await cli(['add', 'Run migrations with --dry-run first.'], { home })).code).toBe(0);
  return { home, project };
}

describe('engram feedback', () => {
  it('records useful feedback in the current environment with double weight and prints what changed', async () => {
    const { home, project } = await setup();
    const now = () => new Date('2026-11-01T10:00:00.000Z');
    const result = await cli(['feedback', '1', '--useful', '--reason', 'saved a rollback'], { home, cwd: project, now });
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({
      engram_id: 1,
      useful: true,
      reason: 'saved a rollback',
      repo: 'shop',
      weight: 2,
      matched: true,
      pin: null,
    });
    expect(result.json.tags).toContain('typescript');
    expect(result.json.relevance).toContainEqual({ tag: 'typescript', before: null, after: 0.6 });
    expect((await cli(['get', '1'], { home })).json).toMatchObject({ times_matched: 1, last_matched_at: '2026-11-01T10:00:00.000Z' });

    const negative = await cli(['feedback', '1', '--not-useful'], { home, cwd: project });
    expect(negative.json).toMatchObject({ useful: false, reason: null, matched: false });
    expect(negative.json.relevance).toContainEqual({ tag: 'typescript', before: 0.6, after: -0.18 });
  });

  it('prints a summary for people with --pretty', async () => {
    const { home, project } = await setup();
    const result = await cli(['feedback', '1', '--useful', '--pretty'], { home, cwd: project });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('#1 marked useful');
    expect(result.stdout).toContain('repo shop');
    expect(result.stdout).toContain('typescript: new → 0.600');
  });

  it('needs exactly one of --useful and --not-useful, and an engram that exists', async () => {
    const { home, project } = await setup();
    const both = await cli(['feedback', '1', '--useful', '--not-useful'], { home, cwd: project });
    expect(both.code).toBe(2);
    expect(JSON.parse(both.stderr).error.code).toBe('USAGE');
    const neither = await cli(['feedback', '1'], { home, cwd: project });
    expect(neither.code).toBe(2);
    expect(JSON.parse(neither.stderr).error.code).toBe('USAGE');
    expect((await cli(['feedback', 'nope', '--useful'], { home, cwd: project })).code).toBe(2);
    expect((await cli(['feedback', '99', '--useful'], { home, cwd: project })).code).toBe(3);
    expect((await cli(['get', '1'], { home })).json.times_matched).toBe(0);
  });
});

describe('engram extract', () => {
  const transcript = join(SHARED, 'fixtures', 'transcripts', 'codex-0.169.0__scripted-session.jsonl');
  const answer = JSON.stringify({
    engrams: [{ text: 'In this project src/missing.py does not exist; list src before reading files there.', tags: ['python'], kind: 'struggle', scope: 'project', evidence: 'ls src/missing.py (failed)' }],
  });

  it('learns from a transcript file with the configured LLM; --dry-run writes nothing; a second run reads nothing again', async () => {
    const home = tempDir();
    const server = await fakeOpenAi([completion(answer)]);
    const env = { ENGRAM_LLM_BASE_URL: server.baseUrl, ENGRAM_LLM_MODEL: 'extractor', ENGRAM_EMBEDDER: 'none' };
    const dry = await cli(['extract', '--transcript', transcript, '--dry-run'], { home, env });
    expect(dry.code).toBe(0);
    expect(dry.json.reports).toEqual([
      expect.objectContaining({ session_id: '01a200c5-e3f5-7893-a481-82c60fff87ef', outcome: 'completed', dry_run: true, lessons: [expect.objectContaining({ action: 'would-create', project: 'proj' })] }),
    ]);
    expect((await cli(['list'], { home })).json.total).toBe(0);

    const real = await cli(['extract', '--transcript', transcript], { home, env });
    expect(real.json.reports[0].lessons).toEqual([expect.objectContaining({ action: 'created', engram_id: 1 })]);
    expect((await cli(['get', '1'], { home })).json).toMatchObject({ source: 'extracted', source_sessions: ['01a200c5-e3f5-7893-a481-82c60fff87ef'], project: 'proj' });
    const again = await cli(['extract', '--transcript', transcript, '--pretty'], { home, env });
    expect(again.stdout).toContain('01a200c5-e3f5-7893-a481-82c60fff87ef: done');
    expect(server.requests).toHaveLength(2);
    const status = await cli(['eval', 'status'], { home });
    expect(status.json.extractions).toEqual({ running: 0, completed: 1, failed: 0, skipped: 0 });
  });

  it('says what is wrong with its arguments', async () => {
    const home = tempDir();
    const error = async (argv: string[]) => {
      const result = await cli(argv, { home });
      return { code: result.code, ...JSON.parse(result.stderr).error };
    };
    expect(await error(['extract'])).toMatchObject({ code: 'USAGE', message: 'give exactly one of --session, --since and --transcript' });
    expect(await error(['extract', '--since', '2026-11-01', '--session', 'x'])).toMatchObject({ code: 'USAGE' });
    expect((await error(['extract', '--since', 'yesterday'])).message).toBe("--since must be a date such as 2026-11-01, not 'yesterday'");
    expect((await error(['extract', '--session', 'nope'])).code).toBe('NOT_FOUND');
    expect((await error(['extract', '--transcript', join(home, 'missing.jsonl')])).code).toBe('NOT_FOUND');
  });
});

describe('feedback reasons', () => {
  it('are stored with the judgement, redacted', async () => {
    const { home, project } = await setup();
    await cli(['feedback', '1', '--useful', '--reason', 'saved me; key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789'], { home, cwd: project });
    const store = openStore({ path: join(home, 'engram.db') });
    try {
      const rows = store.db.prepare('SELECT session_id, engram_id, source, score, evidence, judged_by FROM engram_judgements').all() as Array<Record<string, unknown>>;
      expect(rows).toEqual([{ session_id: null, engram_id: 1, source: 'feedback', score: 3, evidence: expect.stringContaining('saved me; key'), judged_by: 'person' }]);
      expect(String(rows[0]?.evidence)).not.toContain('abcdefghijklmnop');
    } finally {
      store.close();
    }
  });
});
