import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  adaptTranscript,
  collectGarbage,
  decompressBytes,
  listTapes,
  readTape,
  resolveTape,
  serializeTape,
  tapeLocation,
  writeTape,
} from '../../../src/services/tape/index.js';
import { SHARED, tempDir, thrown } from '../../_helpers.js';

const transcript = readFileSync(join(SHARED, 'fixtures', 'transcripts', 'codex-0.169.0__scripted-session.jsonl'), 'utf8');

describe('tape store', () => {
  it('writes <sha256 of JSONL>.jsonl.zst, reads it back validated, identical events', async () => {
    const dir = tempDir();
    const events = adaptTranscript(transcript).events;
    const { tape_id, jsonl } = serializeTape(events);
    const written = await writeTape(dir, events);
    expect(written).toMatchObject({ tape_id, written: true, events: events.length });
    expect(written.path).toBe(join(dir, `${tape_id}.jsonl.zst`));
    // Real zstd: the frame magic, and smaller than the JSONL.
    const bytes = readFileSync(written.path);
    expect(bytes.subarray(0, 4).toString('hex')).toBe('28b52ffd');
    expect(bytes.length).toBeLessThan(Buffer.byteLength(jsonl));
    expect(decompressBytes(bytes)).toBe(jsonl);
    const loaded = readTape(written.path);
    expect(loaded.tape_id).toBe(tape_id);
    expect(loaded.events).toEqual(serializeTape(events).events);
    // Keys in schema order on every line (stable bytes for the id).
    expect(jsonl.split('\n')[0]).toMatch(/^\{"t":.*"source":.*"k":"meta","label":"session","model":/);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  // Skipped, and reported as such, where the zstd CLI is not installed; the magic-number check above still holds.
  it.skipIf(spawnSync('zstd', ['--version']).status !== 0)('the system zstd tool opens a tape', async () => {
    const dir = tempDir();
    const written = await writeTape(dir, adaptTranscript(transcript).events);
    const out = spawnSync('zstd', ['-dc', written.path], { encoding: 'utf8' });
    expect(out.status).toBe(0);
    expect(out.stdout).toBe(serializeTape(adaptTranscript(transcript).events).jsonl);
  });

  it('write-once: the same id is a no-op and the existing file is untouched', async () => {
    const dir = tempDir();
    const events = adaptTranscript(transcript).events;
    const first = await writeTape(dir, events);
    const before = statSync(first.path);
    const content = readFileSync(first.path);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await writeTape(dir, events);
    expect(second).toMatchObject({ tape_id: first.tape_id, written: false });
    const after = statSync(first.path);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(after.ino).toBe(before.ino);
    expect(readFileSync(first.path).equals(content)).toBe(true);
    // Tapes are read-only on disk.
    expect(after.mode & 0o222).toBe(0);
    expect(listTapes(dir)).toHaveLength(1);
  });

  it('rejects corrupt tapes and invalid events with specific errors', async () => {
    const dir = tempDir();
    const written = await writeTape(dir, adaptTranscript(transcript).events);
    const forged = join(dir, `${'0'.repeat(64)}.jsonl.zst`);
    writeFileSync(forged, readFileSync(written.path));
    expect(thrown(() => readTape(forged))?.code).toBe('INVALID_INPUT');
    const truncated = join(dir, `${written.tape_id.slice(0, 63)}f.jsonl.zst`);
    writeFileSync(truncated, readFileSync(written.path).subarray(0, 40));
    expect(thrown(() => readTape(truncated))).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('not valid zstd') });
    expect(thrown(() => readTape(join(dir, 'x.txt')))?.code).toBe('INVALID_INPUT');
    expect(thrown(() => readTape(join(dir, `${'1'.repeat(64)}.jsonl.zst`)))?.code).toBe('NOT_FOUND');
    expect(thrown(() => serializeTape([{ k: 'msg.in' } as never]))?.code).toBe('INVALID_INPUT');
  });

  it('resolves ids and prefixes of at least 8 characters', async () => {
    const dir = tempDir();
    const written = await writeTape(dir, adaptTranscript(transcript).events);
    expect(resolveTape(dir, written.tape_id.slice(0, 8)).tape_id).toBe(written.tape_id);
    expect(resolveTape(dir, written.tape_id.toUpperCase()).tape_id).toBe(written.tape_id);
    expect(thrown(() => resolveTape(dir, written.tape_id.slice(0, 7)))?.code).toBe('USAGE');
    expect(thrown(() => resolveTape(dir, 'ffffffff'))?.code).toBe('NOT_FOUND');
  });

  it('gc removes stale temp files only, never a tape or a fresh temp file', async () => {
    const home = tempDir();
    const dirs = { tapes_dir: join(home, 'tapes'), cache_dir: join(home, 'cache') };
    const written = await writeTape(dirs.tapes_dir, adaptTranscript(transcript).events);
    mkdirSync(join(dirs.cache_dir, 'cursors'), { recursive: true });
    const staleTape = join(dirs.tapes_dir, '.abc.1.ff.tmp');
    const staleCursor = join(dirs.cache_dir, 'cursors', 'x.json.1.tmp');
    const fresh = join(dirs.tapes_dir, '.def.2.ee.tmp');
    for (const path of [staleTape, staleCursor, fresh]) writeFileSync(path, 'partial');
    const old = new Date(Date.now() - 60 * 60 * 1000);
    utimesSync(staleTape, old, old);
    utimesSync(staleCursor, old, old);
    utimesSync(written.path, old, old);
    const report = collectGarbage(dirs);
    expect(report.removed.sort()).toEqual([staleCursor, staleTape].sort());
    expect(report.tapes).toBe(1);
    expect(existsSync(written.path)).toBe(true);
    expect(existsSync(fresh)).toBe(true);
  });
});

describe('tape location', () => {
  it('opted-in repository: tapes in .engram/tapes, derived data in .engram-cache', () => {
    const repo = tempDir();
    mkdirSync(join(repo, '.git'));
    mkdirSync(join(repo, '.engram'));
    mkdirSync(join(repo, 'src'));
    const location = tapeLocation(join(repo, 'src'), '/home/engram');
    expect(location).toMatchObject({ root: repo, git: true, opted_in: true, tapes_dir: join(repo, '.engram', 'tapes'), cache_dir: join(repo, '.engram-cache') });
  });

  it('other repositories: tapes and cache under the home, keyed by a readable collision-free project name', () => {
    const parent = tempDir();
    const a = join(parent, 'one', 'app');
    const b = join(parent, 'two', 'app');
    for (const repo of [a, b]) mkdirSync(join(repo, '.git'), { recursive: true });
    const home = join(parent, 'home');
    const la = tapeLocation(a, home);
    const lb = tapeLocation(b, home);
    expect(la.opted_in).toBe(false);
    expect(la.project).toMatch(/^app-[0-9a-f]{10}$/);
    expect(la.project).not.toBe(lb.project);
    expect(la.tapes_dir).toBe(join(home, 'tapes', la.project));
    expect(la.cache_dir).toBe(join(home, 'cache', 'tapes', la.project));
  });
});
