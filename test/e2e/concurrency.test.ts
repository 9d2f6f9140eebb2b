/**
 * Many writers at once against one home. Pins: 8 processes adding 500 engrams each lose nothing and never surface
 * SQLITE_BUSY (IMMEDIATE transactions + busy timeout make writers queue).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { ROOT, runWorker, tempDir } from '../_helpers.js';

describe('concurrent writers', () => {
  it('8 processes × 500 adds: every engram stored once, no errors, integrity ok', async () => {
    const path = join(tempDir(), 'engram.db');
    const outputs = await Promise.all(Array.from({ length: 8 }, (_, i) => runWorker(['add', path, '500', `worker${i}`])));
    const results = outputs.map((out) => JSON.parse(out) as { created: number; errors: string[] });
    expect(results.flatMap((r) => r.errors)).toEqual([]);
    expect(results.map((r) => r.created)).toEqual(Array(8).fill(500));

    const store = openStore({ path });
    expect(store.db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(store.engrams.counts().total).toBe(4000);
    const perWorker = store.db
      .prepare("SELECT json_extract(tags, '$[0]') AS tag, count(*) AS n, count(DISTINCT text) AS distinct_texts FROM engrams GROUP BY tag ORDER BY tag")
      .all();
    expect(perWorker).toEqual(Array.from({ length: 8 }, (_, i) => ({ tag: `worker${i}`, n: 500, distinct_texts: 500 })));
    store.close();
  }, 120_000);

  it('8 CLI processes adding at once all succeed', async () => {
    const home = tempDir();
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [join(ROOT, 'bin', 'engram'), 'add', `cli lesson ${i}`], {
            env: { ...process.env, HOME: home, ENGRAM_HOME: home },
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          let stderr = '';
          child.stderr.on('data', (d) => (stderr += d));
          child.on('close', (code) => resolve({ code, stderr }));
        }),
      ),
    );
    expect(runs).toEqual(Array(8).fill({ code: 0, stderr: '' }));
    const store = openStore({ path: join(home, 'engram.db') });
    expect(store.engrams.counts().total).toBe(8);
    store.close();
  }, 60_000);
});
