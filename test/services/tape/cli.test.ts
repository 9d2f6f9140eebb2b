import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeProjectFolderName, tapeLocation } from '../../../src/services/tape/index.js';
import { cli, SHARED, tempDir } from '../../_helpers.js';

const FIXTURES = join(SHARED, 'fixtures', 'transcripts');
const codexText = readFileSync(join(FIXTURES, 'codex-0.169.0__scripted-session.jsonl'), 'utf8');

function repoIn(home: string): string {
  const repo = join(home, 'work', 'proj');
  mkdirSync(join(repo, '.git'), { recursive: true });
  return repo;
}

describe('engram tape commands', () => {
  it('record --stdin, tapes, show (prefix, --raw), view', async () => {
    const home = tempDir();
    const repo = repoIn(home);
    const recorded = await cli(['record', '--stdin'], { home, cwd: repo, stdin: codexText });
    expect(recorded.code).toBe(0);
    expect(recorded.json).toMatchObject({ tapes_written: 1, opted_in: false, tapes: [{ harness: 'codex', written: true, session_id: '01a200c5-e3f5-7893-a481-82c60fff87ef' }] });
    const tapeId = recorded.json.tapes[0].tape_id as string;
    expect((await cli(['record', '--stdin', '--agent', 'codex'], { home, cwd: repo, stdin: codexText })).json).toMatchObject({ tapes_written: 0, tapes_existing: 1 });

    const list = await cli(['tapes'], { home, cwd: repo });
    expect(list.code).toBe(0);
    expect(list.json).toEqual([
      expect.objectContaining({
        tape_id: tapeId,
        session: { agent: 'codex', id: '01a200c5-e3f5-7893-a481-82c60fff87ef' },
        time: '2026-11-22T01:01:38.717Z',
        agent: 'codex',
        model: 'gpt-5.5',
        repo_head: '9dd189cad24792f7d83987b2c35087ba516ecba2',
        coverage: 'full',
      }),
    ]);
    expect(list.json[0].size).toBeGreaterThan(0);
    expect((await cli(['tapes', '--pretty'], { home, cwd: repo })).stdout).toContain(tapeId.slice(0, 12));

    const shown = await cli(['show', tapeId.slice(0, 10)], { home, cwd: repo });
    expect(shown.json.tape_id).toBe(tapeId);
    expect(shown.json.events).toHaveLength(list.json[0].events);
    const raw = await cli(['show', tapeId, '--raw'], { home, cwd: repo });
    expect(raw.stdout.split('\n').filter(Boolean)).toHaveLength(list.json[0].events);
    expect(JSON.parse(raw.stdout.split('\n')[0] as string)).toMatchObject({ k: 'meta' });

    const view = await cli(['view', tapeId, '--at', '5', '--before', '2', '--after', '1'], { home, cwd: repo });
    expect(view.json).toMatchObject({ tape_id: tapeId, at: 5, from: 3, to: 6 });
    expect(view.json.events.map((entry: { offset: number }) => entry.offset)).toEqual([3, 4, 5, 6]);

    expect((await cli(['show', 'zz'], { home, cwd: repo })).code).toBe(2);
    expect((await cli(['show', 'ffffffff'], { home, cwd: repo })).code).toBe(3);
    expect((await cli(['view', tapeId, '--at', '9999'], { home, cwd: repo })).code).toBe(3);
    expect((await cli(['record'], { home, cwd: repo, stdin: codexText })).code).toBe(2);
  });

  it('record --strict refuses an unknown version with a machine-readable error', async () => {
    const home = tempDir();
    const repo = repoIn(home);
    const text = `${JSON.stringify({ type: 'session_meta', payload: { id: 't', cwd: repo, cli_version: '1.0.0' } })}\n`;
    const refused = await cli(['record', '--stdin', '--strict'], { home, cwd: repo, stdin: text });
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stderr)).toMatchObject({ error: { code: 'UNSUPPORTED_VERSION' } });
  });

  it('ingest twice adds nothing the second time; CLAUDE_CONFIG_DIR is honoured', async () => {
    const home = tempDir();
    const repo = repoIn(home);
    const configDir = join(home, 'claude-config');
    const projectDir = join(configDir, 'projects', claudeProjectFolderName(repo));
    mkdirSync(projectDir, { recursive: true });
    const claude = readFileSync(join(FIXTURES, 'claude-code-2.1.197__scripted-session.jsonl'), 'utf8').replaceAll('/home/user/proj', repo);
    writeFileSync(join(projectDir, 'f62cb199-5524-4dac-8011-3b74b972172a.jsonl'), claude);
    const env = { CLAUDE_CONFIG_DIR: configDir };
    const first = await cli(['ingest', '--agent', 'claude'], { home, cwd: repo, env });
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ tapes_written: 1, opted_in: false });
    const second = await cli(['ingest'], { home, cwd: repo, env });
    expect(second.json).toMatchObject({ tapes_written: 0, tapes_existing: 0 });
    expect((await cli(['ingest', '--pretty'], { home, cwd: repo, env })).stdout).toContain('0 tape(s) written');
    expect((await cli(['ingest', '--agent', 'cursor'], { home, cwd: repo })).code).toBe(2);
  });

  it('gc removes stale temp files and reports them; tapes stay', async () => {
    const home = tempDir();
    const repo = repoIn(home);
    await cli(['record', '--stdin'], { home, cwd: repo, stdin: codexText });
    const location = tapeLocation(repo, home);
    const stale = join(location.tapes_dir, '.0123.99.ab.tmp');
    writeFileSync(stale, 'x');
    const old = new Date(Date.now() - 3600_000);
    utimesSync(stale, old, old);
    const gc = await cli(['gc'], { home, cwd: repo });
    expect(gc.json).toMatchObject({ removed: [stale], tapes: 1 });
    expect(existsSync(stale)).toBe(false);
    expect((await cli(['tapes'], { home, cwd: repo })).json).toHaveLength(1);
  });
});
