import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, tempDir } from '../_helpers.js';
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
