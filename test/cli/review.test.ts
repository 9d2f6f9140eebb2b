/**
 * The review flow as a person types it: a contradicting add waits with both sides shown, review lists it, approve
 * refuses until told how to settle it, undo reverses exactly, history and the audit trail say what happened; exit
 * codes and messages for bad input.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { addEngram } from '../../src/services/index.js';
import { cli, tempDir } from '../_helpers.js';

describe('engram review, approve, reject, undo, history, audit', () => {
  it('walks a contradiction from add to a settled decision and back', async () => {
    const home = tempDir();
    expect((await cli(['add', 'Use pnpm to install dependencies.', '--project', 'shop'], { home })).json.engram.status).toBe('active');
    const added = await cli(['add', 'Never use pnpm to install dependencies; use npm.', '--project', 'shop', '--pretty'], { home });
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('created, waiting for review: contradicts active engram #1');
    expect(added.stdout).toContain('contradicts:\n  #1 Use pnpm to install dependencies.');
    expect(added.stdout).toMatch(/undo: engram undo u-[a-z0-9]{10}/);

    const review = await cli(['review'], { home });
    expect(review.json).toMatchObject({ total: 1, items: [{ reasons: ['pending', 'conflict'], engram: { id: 2 }, conflicts: [{ other_id: 1 }] }] });
    expect((await cli(['conflicts'], { home })).json).toEqual([expect.objectContaining({ engram_id: 2, other_id: 1, status: 'open' })]);
    expect((await cli(['search', 'pnpm install dependencies', '--mode', 'bm25'], { home })).json.results.map((hit: { id: number }) => hit.id)).toEqual([1]);
    expect((await cli(['search', 'pnpm install dependencies', '--mode', 'bm25', '--status', 'all'], { home })).json.results.map((hit: { id: number }) => hit.id).sort()).toEqual([1, 2]);
    expect((await cli(['list', '--status', 'pending'], { home })).json.engrams.map((e: { id: number }) => e.id)).toEqual([2]);

    const refused = await cli(['approve', '2'], { home });
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stderr).error.message).toContain('#2 contradicts active #1');

    const approved = await cli(['approve', '2', '--supersede', '--pretty'], { home });
    expect(approved.stdout).toContain('#2 promoted (pending → active); retired #1');
    expect((await cli(['list'], { home })).json.engrams.map((e: { id: number }) => e.id)).toEqual([2]);

    const undone = await cli(['undo', '--pretty'], { home });
    expect(undone.stdout).toMatch(/^undid approve of #1, #2 \(u-/);
    expect((await cli(['list'], { home })).json.engrams.map((e: { id: number }) => e.id)).toEqual([1]);
    const approveToken = approved.stdout.match(/undo: engram undo (u-[a-z0-9]+)/)?.[1] as string;
    const again = await cli(['undo', approveToken], { home });
    expect(again.code).toBe(2);
    expect(JSON.parse(again.stderr).error.message).toContain('was already undone by');

    const history = await cli(['history', '2', '--pretty'], { home });
    expect(history.stdout).toContain('add by user/cli');
    expect(history.stdout).toContain('approve by user/cli');
    expect(history.stdout).toContain('status: "pending" → "active"');
    const audit = await cli(['audit'], { home });
    expect(audit.json.map((entry: { op: string }) => entry.op)).toEqual(['undo', 'approve', 'add', 'add']);
    expect((await cli(['audit', '--verify'], { home })).json).toMatchObject({ ok: true, rows: 4, lines: 4 });
    expect(readFileSync(join(home, 'audit.jsonl'), 'utf8').trim().split('\n')).toHaveLength(4);
  });

  it('rejects and forgets harvested lessons; deprecate --undo makes an engram active again through the gate', async () => {
    const home = tempDir();
    const store = openStore({ path: join(home, 'engram.db') });
    addEngram(store, { text: 'Always run the full e2e suite before pushing.' }, { actor: { by: 'harvest', via: 'job' } });
    addEngram(store, { text: 'The staging API key lives in 1Password.' }, { actor: { by: 'harvest', via: 'job' } });
    store.close();
    const rejected = await cli(['reject', '1', '--reason', 'not how we work', '--pretty'], { home });
    expect(rejected.stdout).toContain('#1 rejected (pending → rejected)');
    expect((await cli(['forget', '2'], { home })).json.decisions).toEqual([expect.objectContaining({ id: 2, action: 'forgotten' })]);
    expect((await cli(['get', '2'], { home })).code).toBe(3);
    expect((await cli(['add', 'Use make for builds.'], { home })).json.engram.id).toBe(2); // SQLite reuses the highest id
    // Undoing the forget would need id 2 back, which the new engram holds: refused, naming it.
    const blocked = await cli(['undo', (await cli(['audit', '--limit', '2'], { home })).json[1].token], { home });
    expect(JSON.parse(blocked.stderr).error.message).toMatch(/a later change depends on it — u-[a-z0-9]+ \(add of #2/);
    expect((await cli(['deprecate', '2', '--reason', 'gone'], { home })).json.engram.status).toBe('deprecated');
    const back = await cli(['deprecate', '2', '--undo'], { home });
    expect(back.json).toMatchObject({ status: 'updated', engram: { status: 'active', deprecated: false } });
  });

  it('says clearly what is wrong: unknown ids, unknown tokens, bad statuses, conflicting flags', async () => {
    const home = tempDir();
    const unknown = await cli(['approve', '42'], { home });
    expect(unknown.code).toBe(3);
    expect(JSON.parse(unknown.stderr).error.message).toBe('engram 42 does not exist');
    const token = await cli(['undo', 'u-abcdefghij'], { home });
    expect(token.code).toBe(3);
    expect(JSON.parse(token.stderr).error.message).toContain("no operation has the undo token 'u-abcdefghij'");
    expect((await cli(['list', '--status', 'fresh'], { home })).code).toBe(2);
    await cli(['add', 'Use pnpm.'], { home });
    expect((await cli(['approve', '1', '--supersede', '--keep-both'], { home })).code).toBe(2);
    expect((await cli(['undo'], { home })).code).toBe(0); // the add
    expect(JSON.parse((await cli(['undo'], { home })).stderr).error.message).toBe('there is nothing of yours to undo');
  });
});
