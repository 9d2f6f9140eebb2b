/**
 * The conflict index an import batch uses (services/governance/detect.ts `ConflictIndex`): it must give exactly the
 * verdicts of comparing with every active engram — same conflicts, same order — and stay true for what the batch
 * itself writes, so two contradicting lines of one import are still caught.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConflictIndex, findConflicts, importEngrams } from '../../../src/services/index.js';
import { analyse, CONFLICT_RULES, subjectOverlap } from '../../../src/services/governance/conflicts.js';
import { ROOT, tempStore } from '../../_helpers.js';

const pairs = ['dev.jsonl', 'holdout.jsonl'].flatMap((name) =>
  readFileSync(join(ROOT, 'fixtures', 'conflicts', name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { a: string; b: string; label: string }),
);
const projects = [null, 'shop', 'blog'];

describe('ConflictIndex', () => {
  it('finds the same conflicts as the full scan, for every labelled text against a store of the other sides', () => {
    const store = tempStore();
    // One side of every pair stored (in three projects), the other side probed.
    const lines = pairs.map((pair, i) => JSON.stringify({ text: pair.a, project: projects[i % 3] ?? null }));
    importEngrams(store, lines, { batchSize: 7 });
    const index = new ConflictIndex(store);
    let found = 0;
    pairs.forEach((pair, i) => {
      for (const project of projects) {
        const probe = { text: pair.b, project };
        const full = findConflicts(store, probe);
        expect(findConflicts(store, probe, undefined, index), `${pair.b} in ${project}`).toEqual(full);
        found += full.length;
      }
      const self = findConflicts(store, { text: pair.a, project: projects[i % 3] ?? null });
      expect(findConflicts(store, { text: pair.a, project: projects[i % 3] ?? null }, undefined, index)).toEqual(self);
    });
    expect(found).toBeGreaterThan(40); // the comparison is not vacuous
  });

  it('brings up exactly the engrams rule 1 lets through, whatever their sizes (its prefix lookups miss none)', () => {
    const store = tempStore();
    const memories = ['eval', 'eval-lessons']
      .flatMap((set) => readFileSync(join(ROOT, 'fixtures', set, 'memories.jsonl'), 'utf8').split('\n').filter(Boolean))
      .map((line) => (JSON.parse(line) as { text: string }).text);
    // Short texts too: a smaller engram needs fewer shared stems, which is what the prefix postings are for.
    const texts = [...pairs.map((pair) => pair.a), ...memories, 'pnpm', 'Use pnpm.', 'Docker builds', 'npm test', 'Never force-push main.'];
    importEngrams(store, texts.map((text, i) => JSON.stringify({ text, project: projects[i % 3] ?? null })), { batchSize: 50 });
    const index = new ConflictIndex(store);
    const active = store.db.prepare("SELECT id, text, project FROM engrams WHERE status = 'active' AND deleted_at IS NULL").all() as Array<{ id: number; text: string; project: string | null }>;
    const analysed = active.map((row) => ({ ...row, analysis: analyse(row.text) }));
    let compared = 0;
    for (const [i, text] of [...pairs.map((pair) => pair.b), ...memories.slice(0, 150), 'pnpm install', 'main'].entries()) {
      const project = projects[i % 3] ?? null;
      const mine = analyse(text);
      const expected = analysed
        .filter((row) => project === null || row.project === null || row.project === project)
        .filter((row) => [...mine.salient].some((stem) => row.analysis.salient.has(stem)))
        .filter((row) => subjectOverlap(mine, row.analysis) >= CONFLICT_RULES.subjectOverlap)
        .map((row) => row.id)
        .sort((a, b) => a - b);
      const found = index.candidates({ text, project }, mine).map((candidate) => candidate.id).sort((a, b) => a - b);
      expect(found, text).toEqual(expected);
      compared += expected.length;
    }
    expect(compared).toBeGreaterThan(200);
  });

  it('an import catches two lines of the same batch that contradict each other', () => {
    const store = tempStore();
    const conflicting = pairs.filter((pair) => pair.label === 'conflict').slice(0, 10);
    const lines = conflicting.flatMap((pair) => [JSON.stringify({ text: pair.a }), JSON.stringify({ text: pair.b })]);
    const report = importEngrams(store, lines, { batchSize: 500 });
    expect(report.batches).toBe(1);
    expect(report.conflicts).toBeGreaterThanOrEqual(8);
    const open = store.db.prepare("SELECT count(*) AS n FROM engram_conflicts WHERE status = 'open'").get() as { n: number };
    expect(open.n).toBe(report.conflicts);
  });

  it('refresh follows an engram that stops being active', () => {
    const store = tempStore();
    importEngrams(store, [JSON.stringify({ text: 'Use pnpm to install dependencies in this repository.' })]);
    const index = new ConflictIndex(store);
    const probe = { text: 'Never use pnpm here; install dependencies with npm.', project: null };
    expect(findConflicts(store, probe, undefined, index)).toHaveLength(1);
    const id = (store.db.prepare('SELECT id FROM engrams').get() as { id: number }).id;
    store.db.prepare("UPDATE engrams SET status = 'deprecated' WHERE id = ?").run(id);
    index.refresh(id);
    expect(findConflicts(store, probe, undefined, index)).toEqual([]);
    expect(findConflicts(store, probe)).toEqual([]);
  });
});
