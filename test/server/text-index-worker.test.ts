/**
 * The worker thread the warm server builds its text index in (dist/text-index-worker.mjs, built by the global setup):
 * it reads the store through its own connection and hands back an index whose conflict checks and near-duplicates
 * are those of an index built in this thread.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { findConflicts, importEngrams, textIndexWorkerBuilder, warmTextIndex } from '../../src/services/index.js';
import { hasTextIndex, TextIndex, textIndexOf } from '../../src/services/governance/index.js';
import { ROOT, tempDir, tempStore } from '../_helpers.js';

const pairs = readFileSync(join(ROOT, 'fixtures', 'conflicts', 'dev.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as { a: string; b: string });

describe('text index build worker', () => {
  it('builds in a worker thread an index that answers as one built here does', async () => {
    const store = tempStore();
    importEngrams(store, pairs.map((pair, i) => JSON.stringify({ text: pair.a, ...(i % 2 ? { project: 'shop' } : {}) })));
    const data = await textIndexWorkerBuilder(join(ROOT, 'dist', 'text-index-worker.mjs'))({ dbPath: store.path });
    expect(data.generation).toBe(store.searchState().generation);
    const fresh = openStore({ path: store.path });
    try {
      const fromWorker = TextIndex.fromData(data);
      expect(fromWorker.sync(fresh)).toBe(true);
      const here = TextIndex.build(store);
      expect(fromWorker.size).toBe(here.size);
      for (const pair of pairs) {
        for (const project of [null, 'shop']) {
          const probe = { text: pair.b, project };
          const mine = (await import('../../src/services/governance/index.js')).analyse(pair.b);
          const ids = (index: TextIndex) => index.conflictCandidates(mine, probe, 0.5).map((candidate) => [candidate.id, candidate.overlap]).sort();
          expect(ids(fromWorker)).toEqual(ids(here));
        }
      }
      // Installed through warmTextIndex, it serves findConflicts.
      expect(await warmTextIndex(fresh, textIndexWorkerBuilder(join(ROOT, 'dist', 'text-index-worker.mjs')))).toBe('built');
      expect(hasTextIndex(fresh)).toBe(true);
      const probe = { text: (pairs[0] as { b: string }).b, project: null };
      expect(findConflicts(fresh, probe)).toEqual(findConflicts(store, probe));
      expect(textIndexOf(fresh).size).toBe(here.size);
    } finally {
      fresh.close();
    }
  });

  it('reports a build that fails (a store that is not there) instead of hanging', async () => {
    const builder = textIndexWorkerBuilder(join(ROOT, 'dist', 'text-index-worker.mjs'));
    await expect(builder({ dbPath: join(tempDir(), 'missing', 'engram.db') })).rejects.toThrow();
  });
});
