import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeTape } from '../../../src/services/tape/store.js';
import { cli, tempDir } from '../../_helpers.js';
import { ask, code, create, tape } from './_tapes.js';

/** An opted-in folder (`.engram/`) whose tapes wrote `src/auth.ts`. */
async function repo(): Promise<{ root: string; home: string; tapeId: string }> {
  const root = tempDir('engram-repo-');
  const home = tempDir('engram-home-');
  mkdirSync(join(root, '.engram', 'tapes'), { recursive: true });
  mkdirSync(join(root, 'src'));
  const text = code('auth', 12);
  writeFileSync(join(root, 'src', 'auth.ts'), `// header\n${text}\n`);
  const written = await writeTape(join(root, '.engram', 'tapes'), tape('x', 1, [ask('write auth'), create('src/auth.ts', text, 2)]).events);
  await writeTape(join(root, '.engram', 'tapes'), tape('y', 2, [ask('unrelated'), create('src/other.ts', code('other', 5))]).events);
  return { root, home, tapeId: written.tape_id };
}

describe('engram explain and engram index rebuild', () => {
  it('indexes the folder’s tapes on first use and explains a span with transcript windows', async () => {
    const { root, home, tapeId } = await repo();
    const out = await cli(['explain', 'src/auth.ts:2-13', '--before', '1', '--after', '0'], { home, cwd: root });
    expect(out.code).toBe(0);
    expect(out.json.index.refresh).toEqual({ action: 'rebuilt', added: 2, tapes: 2 });
    expect(out.json.index.path).toBe(join(root, '.engram-cache', 'index.sqlite'));
    expect(out.json.results).toHaveLength(1);
    expect(out.json.results[0]).toMatchObject({ tape_id: tapeId, via: 'direct' });
    expect(out.json.results[0].windows[0].events.map((e: { k: string }) => e.k)).toEqual(['msg.in', 'code.edit']);
    const again = await cli(['explain', 'src/auth.ts:2-13', '--brief'], { home, cwd: root });
    expect(again.json.index.refresh.action).toBe('none');
    expect(again.json.results[0].windows).toEqual([]);
  });

  it('rejects a malformed span and a span past the end of the file', async () => {
    const { root, home } = await repo();
    expect((await cli(['explain', 'src/auth.ts'], { home, cwd: root })).code).toBe(2);
    expect((await cli(['explain', 'src/auth.ts:9-3'], { home, cwd: root })).code).toBe(2);
    expect((await cli(['explain', 'src/auth.ts:1-99'], { home, cwd: root })).stderr).toMatch(/past its end/);
    expect((await cli(['explain', 'src/auth.ts:1-2', '--min-confidence', '2'], { home, cwd: root })).code).toBe(2);
    expect((await cli(['explain', 'src/missing.ts:1-2'], { home, cwd: root })).code).toBe(3);
  });

  it('rebuilds the index of a profile', async () => {
    const { root, home } = await repo();
    const out = await cli(['index', 'rebuild', '--profile', 'coarse'], { home, cwd: root });
    expect(out.code).toBe(0);
    expect(out.json).toMatchObject({ tapes: 2, profile: 'coarse', path: join(root, '.engram-cache', 'index.coarse.sqlite') });
  });
});
