/**
 * Team sharing through git (issue 14), with real parts: a bare origin, two clones in two HOMEs (two stores), the
 * real `engram sync` CLI, and git's own post-merge / post-checkout hooks running the real bin/engram.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { addEngram, GoExportInSchema, updateEngram } from '../../src/services/index.js';
import { approveEngrams, forgetEngrams } from '../../src/services/gate/index.js';
import { readManifest } from '../../src/services/sync/index.js';
import { cli, ROOT, tempDir } from '../_helpers.js';

const SECRET = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';

interface Person {
  home: string;
  clone: string;
  env: NodeJS.ProcessEnv;
}

const opened: Store[] = [];
afterEach(() => {
  while (opened.length) opened.pop()?.close();
});

function git(person: Person | null, cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...(person?.env ?? {}), GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' },
  });
}

/** A person: their own HOME/ENGRAM_HOME and a clone named `shop` (the project is the folder's name on every machine). */
function person(origin: string): Person {
  const home = tempDir('engram-sync-home-');
  const parent = tempDir('engram-sync-clone-');
  const clone = join(parent, 'shop');
  const env = { HOME: home, ENGRAM_HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
  git({ home, clone, env }, parent, 'clone', '-q', origin, 'shop');
  git(null, clone, 'config', 'pull.rebase', 'false');
  return { home, clone, env };
}

const run = async (who: Person, ...argv: string[]) => {
  const result = await cli(argv, { home: who.home, cwd: who.clone });
  expect(result.code, result.stderr).toBe(0);
  return result.json;
};

function storeOf(who: Person): Store {
  const store = openStore({ path: join(who.home, 'engram.db') });
  opened.push(store);
  return store;
}

/** Every observation in every chunk file of a clone, decompressed and parsed as the Go engram would. */
function chunkRows(clone: string): Array<Record<string, unknown>> {
  const dir = join(clone, '.engram', 'chunks');
  return readdirSync(dir).flatMap((name) => {
    const data = GoExportInSchema.parse(JSON.parse(gunzipSync(readFileSync(join(dir, name))).toString('utf8')));
    return data.observations as Array<Record<string, unknown>>;
  });
}

/** uid → text of the live engrams of project shop (an agent's own, still waiting for review here, is not shared). */
function live(store: Store): Map<string, string> {
  const rows = [...store.engrams.iterate({})].filter((e) => e.project === 'shop' && e.scope === 'project' && e.learned_by !== 'agent');
  return new Map(rows.map((e) => [e.uid, e.text]));
}

describe('engram sync between two clones', () => {
  it('shares through commits and git hooks, merges concurrent syncs without conflict, never duplicates or leaks', async () => {
    const origin = join(tempDir('engram-sync-origin-'), 'origin.git');
    mkdirSync(origin);
    git(null, origin, 'init', '-q', '--bare', '-b', 'main');
    const seedDir = join(tempDir(), 'shop');
    mkdirSync(seedDir);
    git(null, seedDir, 'init', '-q', '-b', 'main');
    execFileSync('sh', ['-c', 'echo "# shop" > README.md'], { cwd: seedDir });
    git(null, seedDir, 'add', '-A');
    git(null, seedDir, 'commit', '-q', '-m', 'init');
    git(null, seedDir, 'push', '-q', origin, 'main');

    const a = person(origin);
    // Before opting in, sync refuses to write anything into the repository.
    const refused = await cli(['sync'], { home: a.home, cwd: a.clone });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr + refused.stdout).toContain('engram init');

    await run(a, 'init', '--git-hooks');
    git(a, a.clone, 'add', '-A');
    git(a, a.clone, 'commit', '-q', '-m', 'engram init');
    git(a, a.clone, 'push', '-q', 'origin', 'main');
    const b = person(origin);
    await run(b, 'init', '--git-hooks');

    const storeA = storeOf(a);
    const kept = addEngram(storeA, { text: 'Checkout totals are computed in integer cents, never floats.', project: 'shop', scope: 'project', kind: 'decision' }).engram;
    const edited = addEngram(storeA, { text: 'Run the payments tests with PAYMENTS_SANDBOX=1.', project: 'shop', scope: 'project', kind: 'convention' }).engram;
    const doomed = addEngram(storeA, { text: 'The legacy cart module is frozen until Q3.', project: 'shop', scope: 'project', kind: 'decision' }).engram;
    addEngram(storeA, { text: 'I prefer tabs in my own scratch files.', project: 'shop', scope: 'personal' });
    addEngram(storeA, { text: `Deploy token for staging is ${SECRET}`, project: 'shop', scope: 'project', kind: 'fact' });
    addEngram(storeA, { text: 'Use the agent-suggested retry helper everywhere.', project: 'shop', scope: 'project' }, { actor: { by: 'agent', via: 'mcp' } });
    storeA.close();
    opened.pop();

    const first = await run(a, 'sync');
    expect(first.exported).toMatchObject({ is_empty: false, observations: 4 });
    expect((await run(a, 'sync')).exported.is_empty).toBe(true);
    git(a, a.clone, 'add', '-A');
    git(a, a.clone, 'commit', '-q', '-m', 'share memory');
    git(a, a.clone, 'push', '-q', 'origin', 'main');

    // B pulls: git's post-merge hook runs the real bin/engram sync --import in B's home.
    git(b, b.clone, 'pull', '-q', 'origin', 'main');
    let storeB = storeOf(b);
    const got = live(storeB);
    expect([...got.keys()].sort()).toEqual([...live(storeOf(a)).keys()].sort());
    expect(got.get(kept.uid)).toBe(kept.text);
    const synced = storeB.engrams.getByUid(kept.uid);
    expect(synced).toMatchObject({ learned_by: 'sync', project: 'shop' });
    expect(got.size).toBe(4);
    for (const store of opened.splice(0)) store.close();

    // A second import adds nothing.
    expect((await run(b, 'sync', '--import')).imported).toMatchObject({ chunks_imported: 0, observations_imported: 0 });

    // Both edit and sync at the same time: A edits one engram and adds one; B deletes one and adds one.
    const sa = storeOf(a);
    updateEngram(sa, edited.id, { text: 'Run the payments tests with PAYMENTS_SANDBOX=1 and a fresh database.' }, { now: () => new Date(Date.now() + 1000) });
    const fromA = addEngram(sa, { text: 'Prices shown to users are rounded half-even.', project: 'shop', scope: 'project', kind: 'decision' }).engram;
    sa.close();
    opened.pop();
    const sb = storeOf(b);
    const doomedB = sb.engrams.getByUid(doomed.uid);
    expect(doomedB).toBeDefined();
    const bId = sb.engrams.getByUid(kept.uid)?.id as number;
    // B approves what it received, so it is B's memory to share too.
    approveEngrams(sb, [...sb.engrams.iterate({ statuses: ['pending'] })].filter((e) => e.learned_by === 'sync').map((e) => e.id));
    forgetEngrams(sb, [doomedB?.id as number], { now: () => new Date(Date.now() + 1000) });
    const fromB = addEngram(sb, { text: 'Coupons never stack with sale prices.', project: 'shop', scope: 'project', kind: 'decision' }).engram;
    expect(bId).toBeGreaterThan(0);
    sb.close();
    opened.pop();

    await run(a, 'sync');
    await run(b, 'sync');
    git(a, a.clone, 'add', '-A');
    git(a, a.clone, 'commit', '-q', '-m', 'A shares');
    git(b, b.clone, 'add', '-A');
    git(b, b.clone, 'commit', '-q', '-m', 'B shares');
    git(a, a.clone, 'push', '-q', 'origin', 'main');
    // B merges A's commit: new chunk files and a union-merged manifest, no conflict; the hook imports A's chunk.
    git(b, b.clone, 'pull', '-q', '--no-edit', 'origin', 'main');
    expect(git(b, b.clone, 'status', '--porcelain')).toBe('');
    git(b, b.clone, 'push', '-q', 'origin', 'main');
    git(a, a.clone, 'pull', '-q', '--no-edit', 'origin', 'main');

    // Every chunk of both sides is listed once in the merged manifest.
    const ids = readManifest(join(a.clone, '.engram')).map((entry) => entry.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(readdirSync(join(a.clone, '.engram', 'chunks')).map((name) => name.slice(0, 8)).sort()).toEqual([...ids].sort());

    const finalA = live(storeOf(a));
    const finalB = live((storeB = storeOf(b)));
    expect([...finalA.entries()].sort()).toEqual([...finalB.entries()].sort());
    expect(finalA.has(doomed.uid)).toBe(false);
    expect(finalA.has(fromA.uid) && finalA.has(fromB.uid)).toBe(true);
    expect(finalB.get(edited.uid)).toContain('fresh database');
    // Never duplicated: one row per sync id in each store.
    for (const store of opened) {
      const uids = [...store.engrams.iterate({ includeDeleted: true })].map((e) => e.uid);
      expect(new Set(uids).size).toBe(uids.length);
    }

    // Nothing personal, pending or secret in any chunk.
    const rows = chunkRows(a.clone);
    expect(rows.some((row) => row.scope === 'personal')).toBe(false);
    expect(JSON.stringify(rows)).not.toContain(SECRET);
    expect(JSON.stringify(rows)).not.toContain('tabs in my own scratch');
    expect(JSON.stringify(rows)).not.toContain('agent-suggested retry');

    const status = await run(a, 'sync', '--status');
    expect(status.pending).toEqual({ import: 0, export: 0 });
    expect(status.remote.chunks).toBe(ids.length);
    expect(storeB.engrams.getByUid(fromA.uid)?.learned_by).toBe('sync');
    expect(ROOT).toBeTruthy();
  });
});
