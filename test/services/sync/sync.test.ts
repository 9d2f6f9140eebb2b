/**
 * engram sync's files and rules on real git repositories and real stores: chunk ids, the manifest read leniently,
 * damaged chunks refused, last writer wins (ties by chunk id, whatever the order of import), tombstones that hold,
 * and redaction on the way out.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/core/index.js';
import { addEngram, initRepo } from '../../../src/services/index.js';
import { readManifest, receiveChanges, remoteChunks, shareChanges, syncRepository, syncStatus, writeChunk, type SyncRepository } from '../../../src/services/sync/index.js';
import { tempDir, tempStore } from '../../_helpers.js';

const NOW = new Date('2026-11-20T10:00:00.000Z');
/** Sync ids in the Go engram's format (obs- and 32 hex). */
const X = `obs-${'a'.repeat(32)}`;
const Y = `obs-${'b'.repeat(32)}`;

function repo(): SyncRepository {
  const root = join(tempDir(), 'shop');
  mkdirSync(root, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: root });
  initRepo({ cwd: root });
  return syncRepository(root);
}

function observation(syncId: string, content: string, updatedAt: string, extra: Record<string, unknown> = {}) {
  return {
    id: 1,
    sync_id: syncId,
    session_id: 's-1',
    type: 'decision',
    title: content.slice(0, 20),
    content,
    project: 'shop',
    scope: 'project',
    revision_count: 1,
    duplicate_count: 1,
    created_at: '2026-11-01 10:00:00',
    updated_at: updatedAt,
    engram: { v: 1, updated_at: updatedAt.replace(' ', 'T') + '.000Z' },
    ...extra,
  };
}

const chunk = (obs: unknown[]) => ({ sessions: [{ id: 's-1', project: 'shop', directory: '.', started_at: '2026-11-01 10:00:00' }], observations: obs, prompts: [] });

const text = (store: Store, uid: string) => store.engrams.getByUid(uid)?.text;

describe('sync files', () => {
  it('names a chunk by the first 8 hex of the SHA-256 of its JSON, and reads a mangled manifest entry by entry', () => {
    const r = repo();
    const written = writeChunk(r.engramDir, chunk([observation(`obs-${'c'.repeat(32)}`, 'A', '2026-11-02 10:00:00')]));
    const json = gunzipSync(readFileSync(written.path)).toString('utf8');
    expect(written.id).toBe(createHash('sha256').update(json).digest('hex').slice(0, 8));
    writeFileSync(
      join(r.engramDir, 'manifest.json'),
      `{"version":1,"chunks":[\n{"id":"${written.id}","created_by":"a","created_at":"x","sessions":1,"memories":1,"prompts":0}\n<<<<<<< HEAD\n,{"id":"${written.id}","created_by":"a"}\n`,
    );
    expect(readManifest(r.engramDir).map((entry) => entry.id)).toEqual([written.id]);
    const orphan = writeChunk(r.engramDir, chunk([observation(`obs-${'d'.repeat(32)}`, 'B', '2026-11-02 10:00:00')]));
    expect(remoteChunks(r)).toEqual([written.id, orphan.id]);
  });
});

describe('sync import', () => {
  it('applies the later record, breaks ties by chunk id in any order, never duplicates', () => {
    const r = repo();
    const older = writeChunk(r.engramDir, chunk([observation(X, 'first words', '2026-11-02 10:00:00')]));
    const tieA = writeChunk(r.engramDir, chunk([observation(X, 'tie one', '2026-11-03 10:00:00')]));
    const tieB = writeChunk(r.engramDir, chunk([observation(X, 'tie two', '2026-11-03 10:00:00')]));
    const winner = tieA.id > tieB.id ? 'tie one' : 'tie two';
    const one = tempStore();
    expect(receiveChanges(one, r, { now: NOW })).toMatchObject({ chunks_imported: 3, observations_imported: 1 });
    expect(text(one, X)).toBe(winner);
    // Another store that sees the chunks one by one, newest first, ends the same.
    const two = tempStore();
    const dir = join(r.engramDir, 'chunks');
    const all = [older.id, tieA.id, tieB.id];
    const hidden = new Map(all.map((id) => [id, readFileSync(join(dir, `${id}.jsonl.gz`))]));
    writeFileSync(join(r.engramDir, 'manifest.json'), '');
    for (const id of all) execFileSync('rm', [join(dir, `${id}.jsonl.gz`)]);
    for (const id of [...all].reverse()) {
      writeFileSync(join(dir, `${id}.jsonl.gz`), hidden.get(id) as Buffer);
      receiveChanges(two, r, { now: NOW });
    }
    expect(text(two, X)).toBe(winner);
    expect([...two.engrams.iterate({ includeDeleted: true })].filter((e) => e.uid === X)).toHaveLength(1);
    expect(receiveChanges(two, r, { now: NOW })).toMatchObject({ chunks_imported: 0, observations_imported: 0, observations_updated: 0 });
  });

  it('keeps a hard-deleted engram deleted when an older chunk is read later, and refuses a damaged chunk', () => {
    const r = repo();
    const store = tempStore();
    const tombstone = observation(Y, '(deleted)', '2026-11-05 10:00:00', { engram: { v: 1, updated_at: '2026-11-05T10:00:00.000Z', hard_delete: true, tombstone: true } });
    writeChunk(r.engramDir, chunk([observation(Y, 'alive', '2026-11-02 10:00:00')]));
    receiveChanges(store, r, { now: NOW });
    expect(text(store, Y)).toBe('alive');
    writeChunk(r.engramDir, chunk([tombstone]));
    expect(receiveChanges(store, r, { now: NOW }).observations_deleted).toBe(1);
    writeChunk(r.engramDir, chunk([observation(Y, 'alive again?', '2026-11-03 10:00:00')]));
    receiveChanges(store, r, { now: NOW });
    expect(store.engrams.getByUid(Y)).toBeUndefined();

    writeFileSync(join(r.engramDir, 'chunks', 'deadbeef.jsonl.gz'), 'not gzip at all');
    const report = receiveChanges(store, r, { now: NOW });
    expect(report.chunks_rejected).toEqual([{ id: 'deadbeef', error: expect.stringContaining('cannot be read') }]);
    expect(syncStatus(store, r).rejected.map((c) => c.id)).toEqual(['deadbeef']);
  });
});

describe('sync export', () => {
  it('scrubs a secret stored before its rule existed, and shares nothing personal', () => {
    const r = repo();
    const store = tempStore();
    const secret = 'sk-' + 'proj-' + 'Zx81Kq0PlmN7b6VcX5zA4sD3fG2hJ1kL';
    const kept = addEngram(store, { text: 'Invoices are numbered per tenant.', project: 'shop', scope: 'project', kind: 'decision' }).engram;
    // A row written as an older version would have stored it: straight into the table, bypassing today's redaction.
    store.db.prepare('UPDATE engrams SET text = ? WHERE id = ?').run(`Invoices are numbered per tenant; key ${secret}`, kept.id);
    addEngram(store, { text: 'My own shell aliases.', project: 'shop', scope: 'personal' });
    const report = shareChanges(store, r, { now: NOW, prompts: false, createdBy: 'tester' });
    expect(report).toMatchObject({ observations: 1, is_empty: false });
    expect(report.redacted).toBeGreaterThan(0);
    const json = gunzipSync(readFileSync(join(r.engramDir, 'chunks', `${report.chunk_id}.jsonl.gz`))).toString('utf8');
    expect(json).not.toContain(secret);
    expect(json).not.toContain('shell aliases');
    expect(readManifest(r.engramDir).at(-1)).toMatchObject({ id: report.chunk_id, created_by: 'tester', memories: 1 });
  });
});
