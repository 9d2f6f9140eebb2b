/**
 * A writer killed with SIGKILL in the middle of a batch import. Pins: PRAGMA integrity_check is ok afterwards, only
 * whole batches are stored (no partial engram), and re-running the import finishes the job without duplicates.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentHash, openStore } from '../../src/core/index.js';
import { importEngrams } from '../../src/services/index.js';
import { ROOT, tempDir, workerPath } from '../_helpers.js';

const TOTAL = 20_000;
const BATCH = 250;

describe('a writer killed mid-batch', () => {
  it('leaves a consistent store holding only whole batches, and a re-run completes it', async () => {
    const dir = tempDir();
    const path = join(dir, 'engram.db');
    const file = join(dir, 'input.jsonl');
    const lines = Array.from({ length: TOTAL }, (_, i) =>
      JSON.stringify({ text: `Imported lesson ${i} with enough words to make the row non-trivial.`, tags: [`t${i % 7}`], category: `area/${i % 5}` }),
    );
    writeFileSync(file, lines.join('\n'));

    const worker = await workerPath();
    const child = spawn(process.execPath, [worker, 'import', path, file, String(BATCH)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let batches = 0;
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        batches += chunk.toString().split('\n').filter((line) => line.startsWith('batch')).length;
        // Several batches are committed and the next is being written: kill it now.
        if (batches >= 3) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('close', (code) => (code === 0 ? reject(new Error('the import finished before it could be killed')) : resolve()));
    });
    await new Promise((resolve) => child.on('close', resolve));
    expect(child.signalCode).toBe('SIGKILL');

    const store = openStore({ path });
    expect(store.db.pragma('integrity_check', { simple: true })).toBe('ok');
    const count = store.engrams.counts().total;
    expect(count).toBeGreaterThanOrEqual(3 * BATCH);
    expect(count).toBeLessThan(TOTAL);
    expect(count % BATCH).toBe(0);
    for (const engram of store.engrams.iterate()) {
      expect(engram.content_hash).toBe(contentHash(engram.text));
      expect(engram.tags).toHaveLength(1);
      expect(engram.category).toMatch(/^area\/\d$/);
    }

    const report = importEngrams(store, lines);
    expect(report).toMatchObject({ created: TOTAL - count, duplicates: count });
    expect(store.engrams.counts().total).toBe(TOTAL);
    expect(store.db.prepare('SELECT count(DISTINCT content_hash) FROM engrams').pluck().get()).toBe(TOTAL);
    store.close();
  }, 120_000);
});
