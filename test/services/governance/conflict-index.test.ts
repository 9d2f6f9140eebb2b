/**
 * The store's text index (services/governance/text-index.ts), through `findConflicts`: it must give exactly the
 * verdicts of judging every active engram in scope — same conflicts, same order, same reasons — and stay true while
 * the store changes under it: inserts, edits, deletions, status changes, other connections' writes, rolled-back
 * transactions and savepoints, a pruned change log. The reference here is that full scan, written out in the test.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings, openStore, readEnv, type Store } from '../../../src/core/index.js';
import { addEngram, deleteEngram, deprecateEngram, findConflicts, importEngrams, MCP_AGENT, runOperation, updateEngram, workEnvironment, type OpContext } from '../../../src/services/index.js';
import { approveEngrams, forgetEngrams, rejectEngrams, undoOperation } from '../../../src/services/gate/index.js';
import { analyse, CONFLICT_RULES, hasTextIndex, ruleVerdict, subjectOverlap, TextIndex, textIndexOf, textIndexReady, warmTextIndex, type ConflictVerdict } from '../../../src/services/governance/index.js';
import { ROOT, steppingClock, tempDir, tempStore } from '../../_helpers.js';

const pairs = ['dev.jsonl', 'holdout.jsonl'].flatMap((name) =>
  readFileSync(join(ROOT, 'fixtures', 'conflicts', name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { a: string; b: string; label: string }),
);
const projects = [null, 'shop', 'blog'];
const harvest = { by: 'harvest', via: 'job' } as const;

/** The verdicts before the index: every active engram in scope read and judged by the rules (or a verdict given). */
function fullScan(store: Store, probe: { text: string; project: string | null; id?: number }, precomputed?: ReadonlyMap<number, ConflictVerdict>) {
  const rows = store.db
    .prepare(
      `SELECT id, text FROM engrams WHERE deleted_at IS NULL AND status = 'active' AND id IS NOT ?
          AND (? IS NULL OR project IS NULL OR project = ?) ORDER BY id`,
    )
    .all(probe.id ?? null, probe.project, probe.project) as Array<{ id: number; text: string }>;
  const mine = analyse(probe.text);
  return rows
    .map((row) => ({ ...(precomputed?.get(row.id) ?? ruleVerdict(mine, analyse(row.text))), other_id: row.id, other_text: row.text }))
    .filter((found) => found.conflict)
    .sort((a, b) => b.overlap - a.overlap || a.other_id - b.other_id);
}

/** Every labelled text probed in every project against the store: the index's answers must be the full scan's. */
function expectSameAsFullScan(store: Store, label: string): number {
  let found = 0;
  for (const pair of pairs) {
    for (const project of projects) {
      for (const text of [pair.a, pair.b]) {
        const probe = { text, project };
        const full = fullScan(store, probe);
        expect(findConflicts(store, probe), `${label}: ${text} in ${project}`).toEqual(full);
        found += full.length;
      }
    }
  }
  return found;
}

/** Random but repeatable. */
function seeded(seed: number): () => number {
  return () => {
    seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
    return ((seed >>> 0) % 1_000_000) / 1_000_000;
  };
}

describe('the text index behind findConflicts', () => {
  it('finds the same conflicts as the full scan, for every labelled text against a store of the other sides', () => {
    const store = tempStore();
    // One side of every pair stored (in three projects), both sides probed in every project.
    const lines = pairs.map((pair, i) => JSON.stringify({ text: pair.a, project: projects[i % 3] ?? null }));
    importEngrams(store, lines, { batchSize: 7 });
    expect(expectSameAsFullScan(store, 'imported')).toBeGreaterThan(40); // the comparison is not vacuous
    expect(hasTextIndex(store)).toBe(true);
  });

  it('stays the full scan’s through inserts, edits, deletions, status changes and undo', () => {
    const store = tempStore();
    const now = steppingClock();
    const random = seeded(7);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const ids: number[] = [];
    // Both sides of half the pairs, as a person (active unless contradicting) and as extraction (pending).
    for (const [i, pair] of pairs.entries()) {
      if (i % 2) continue;
      ids.push(addEngram(store, { text: pair.a, project: pick(projects) }, { now }).engram.id);
      ids.push(addEngram(store, { text: pair.b, project: pick(projects) }, { now, actor: pick([harvest, undefined]) }).engram.id);
    }
    expect(expectSameAsFullScan(store, 'added')).toBeGreaterThan(20);
    const tokens: string[] = [];
    for (let step = 0; step < 60; step++) {
      const id = pick(ids);
      const engram = store.engrams.get(id);
      const action = pick(['edit', 'approve', 'reject', 'deprecate', 'delete', 'forget', 'project', 'undo', 'add', 'sql-status'] as const);
      try {
        if (action === 'edit') tokens.push(updateEngram(store, id, { text: pick(pairs)[pick(['a', 'b'] as const)] }, { now }).undo_token ?? '');
        else if (action === 'approve') tokens.push(approveEngrams(store, [id], { now, keepBoth: true }).undo_token ?? '');
        else if (action === 'reject') tokens.push(rejectEngrams(store, [id], { now }).undo_token ?? '');
        else if (action === 'deprecate') deprecateEngram(store, id, { now, reason: 'stale' });
        else if (action === 'delete') deleteEngram(store, id, { now });
        else if (action === 'forget') tokens.push(forgetEngrams(store, [id], { now }).undo_token ?? '');
        else if (action === 'project') updateEngram(store, id, { project: pick(projects) }, { now });
        else if (action === 'undo' && tokens.length) undoOperation(store, tokens.pop() as string, { now });
        else if (action === 'add') ids.push(addEngram(store, { text: `${pick(pairs).a} (${step})`, project: pick(projects) }, { now }).engram.id);
        else if (action === 'sql-status' && engram) store.db.prepare('UPDATE engrams SET status = ? WHERE id = ?').run(pick(['active', 'pending', 'rejected']), id);
      } catch {
        // Refused (a gone engram, an undo something later depends on): nothing changed, which is also a case.
      }
      if (step % 6 === 5) expectSameAsFullScan(store, `step ${step} (${action})`);
    }
    expectSameAsFullScan(store, 'after every change');
  });

  it('follows what another connection writes, and rebuilds when the change log no longer reaches back', () => {
    const store = tempStore();
    const other = openStore({ path: store.path });
    try {
      importEngrams(store, pairs.slice(0, 20).map((pair) => JSON.stringify({ text: pair.a })));
      expectSameAsFullScan(store, 'before');
      importEngrams(other, pairs.slice(20, 60).map((pair) => JSON.stringify({ text: pair.a })));
      other.db.prepare("UPDATE engrams SET status = 'rejected' WHERE id % 3 = 0").run();
      expectSameAsFullScan(store, 'after the other connection wrote');
      const index = textIndexOf(store);
      importEngrams(other, pairs.slice(60).map((pair) => JSON.stringify({ text: pair.a })));
      other.pruneSearchChanges(other.searchState().generation);
      expectSameAsFullScan(store, 'after the log was pruned');
      expect(textIndexOf(store)).not.toBe(index); // built again
    } finally {
      other.close();
    }
  });

  it('takes back what a rolled-back transaction or savepoint wrote, and keeps what committed', () => {
    const store = tempStore();
    importEngrams(store, pairs.filter((pair) => pair.label !== 'conflict').map((pair) => JSON.stringify({ text: pair.b })));
    const conflicting = pairs.filter((pair) => pair.label === 'conflict');
    // A dry-run import writes its lines (the index sees them inside the transaction), then rolls back.
    const dry = importEngrams(store, conflicting.map((pair) => JSON.stringify({ text: pair.a })), { dryRun: true });
    expect(dry.created).toBeGreaterThan(10);
    // Then committed changes to other engrams move the generation past what the rolled-back writes had reached:
    // only knowing they were rolled back tells the index to read those generations again.
    const flip = store.db.prepare("UPDATE engrams SET status = CASE status WHEN 'active' THEN 'rejected' ELSE 'active' END WHERE id IN (SELECT id FROM engrams ORDER BY id LIMIT ?)");
    flip.run(80);
    expectSameAsFullScan(store, 'after a dry run');
    const stored = new Set((store.db.prepare('SELECT text FROM engrams').pluck().all() as string[]));
    const [first, second, third] = conflicting.filter((pair, i, all) => !stored.has(pair.a) && all.findIndex((other) => other.a === pair.a) === i) as Array<{ a: string; b: string }>;
    // Added and made active (a side may contradict a stored text, which would leave it pending).
    const addActive = (text: string): number => {
      const added = addEngram(store, { text }).engram.id;
      store.db.prepare("UPDATE engrams SET status = 'active' WHERE id = ?").run(added);
      return added;
    };
    const check = (text: string): number[] => {
      const found = findConflicts(store, { text, project: null });
      expect(found).toEqual(fullScan(store, { text, project: null }));
      return found.map((conflict) => conflict.other_id);
    };
    // A transaction that writes, checks conflicts (seeing its own write), then fails.
    let id = 0;
    expect(() =>
      store.write(() => {
        id = addActive(first!.a);
        expect(check(first!.b)).toContain(id);
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(store.engrams.get(id)).toBeUndefined();
    flip.run(10);
    expect(check(first!.b)).not.toContain(id);
    // A savepoint rolled back inside a transaction that commits: what was written outside it stays.
    let kept = 0;
    let dropped = 0;
    store.write(() => {
      kept = addActive(second!.a);
      try {
        store.write(() => {
          dropped = addActive(third!.a);
          expect(check(third!.b)).toContain(dropped);
          throw new Error('inner');
        });
      } catch {
        // The savepoint is gone; the transaction goes on.
      }
      flip.run(10);
      expect(check(third!.b)).not.toContain(dropped);
      expectSameAsFullScan(store, 'inside, after the savepoint');
    });
    expectSameAsFullScan(store, 'after the commit');
    expect(check(second!.b)).toContain(kept);
    expect(store.engrams.get(dropped)).toBeUndefined();
  });

  it('gives the same verdicts when a worker-built index is installed and caught up', async () => {
    const store = tempStore();
    importEngrams(store, pairs.slice(0, 60).map((pair) => JSON.stringify({ text: pair.a, project: 'shop' })));
    // A process that holds no index yet (the server starting), and the worker's job done on a third connection.
    const fresh = openStore({ path: store.path });
    const worker = openStore({ path: store.path });
    const builder = async () => {
      const data = TextIndex.build(worker).toData();
      importEngrams(store, pairs.slice(60).map((pair) => JSON.stringify({ text: pair.a }))); // written after the build
      return data;
    };
    try {
      expect(hasTextIndex(fresh)).toBe(false);
      expect(await warmTextIndex(fresh, builder)).toBe('built');
      expect(hasTextIndex(fresh)).toBe(true);
      expectSameAsFullScan(fresh, 'worker-built');
      expect(await warmTextIndex(fresh, builder)).toBe('held');
    } finally {
      fresh.close();
      worker.close();
    }
  });

  it('is exact where a few stems are in most engrams (the postings a probe walks are long)', () => {
    const store = tempStore();
    const random = seeded(11);
    const common = 'build test deploy cache docker timeout retries branch merge release config token'.split(' ');
    const rare = Array.from({ length: 400 }, (_, i) => `module${i.toString(36)}`);
    const negations = ['never', "don't", 'avoid', 'do not', 'instead of'];
    const word = (): string => (random() < 0.6 ? (common[Math.floor(random() * common.length)] as string) : (rare[Math.floor(random() * rare.length)] as string));
    const text = (): string =>
      Array.from({ length: 2 + Math.floor(random() * 14) }, (_, i) => (i > 0 && random() < 0.15 ? `${negations[Math.floor(random() * negations.length)]} ${word()}` : word()))
        .concat(random() < 0.2 ? [`${Math.floor(random() * 4) * 15}s`] : [])
        .join(' ');
    const insert = store.db.prepare(
      `INSERT INTO engrams (uid, kind, text, category, tags, source, content_hash, project, created_at, updated_at, last_seen_at, status)
       VALUES (lower(hex(randomblob(16))), 'lesson', ?, 'general', '[]', 'manual', lower(hex(randomblob(32))), ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', ?)`,
    );
    store.db.transaction(() => {
      for (let i = 0; i < 3_000; i++) insert.run(text(), projects[i % 3] ?? null, random() < 0.9 ? 'active' : 'pending');
    })();
    let found = 0;
    for (let i = 0; i < 150; i++) {
      const probe = { text: text(), project: projects[i % 3] ?? null };
      const full = fullScan(store, probe);
      expect(findConflicts(store, probe), probe.text).toEqual(full);
      found += full.length;
    }
    expect(found).toBeGreaterThan(150);
  });

  it('a write operation waits for a build under way (the warm server starting) instead of building its own', async () => {
    const home = tempDir();
    const settings = loadSettings(readEnv({ HOME: home, ENGRAM_HOME: home }, { cwd: home }));
    const store = openStore({ path: settings.paths.db });
    try {
      importEngrams(store, pairs.slice(0, 40).map((pair) => JSON.stringify({ text: pair.a, project: 'shop' })));
      const server = openStore({ path: store.path }); // the connection the warm server holds, with no index yet
      const context: OpContext = {
        store: server,
        settings,
        caller: { cwd: home, agent: 'claude', session_id: 'mcp-test', project: 'shop' },
        actor: MCP_AGENT,
        search: () => Promise.reject(new Error('not searched here')),
        searchMode: 'bm25',
        model: null,
        environment: (cwd, agent) => workEnvironment(settings, cwd, agent),
        now: () => new Date(),
      };
      let release = (): void => {};
      const bm25 = new Promise<void>((resolve) => (release = resolve));
      const warm = warmTextIndex(server, async () => TextIndex.build(store).toData(), { after: bm25 });
      const conflicting = pairs[0] as { a: string; b: string }; // 'Use pnpm ...' against 'Never use pnpm ...'
      let saved = false;
      const save = runOperation('engram.add', { text: conflicting.b, project: 'shop' }, context).then((result) => {
        saved = true;
        return result;
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(saved).toBe(false); // waiting for the build, not building on the event loop
      expect(hasTextIndex(server)).toBe(false);
      release();
      expect(await warm).toBe('built'); // the worker's index was installed: nobody built one meanwhile
      const result = (await save) as { conflicts: Array<{ other_text: string }> };
      expect(result.conflicts.map((conflict) => conflict.other_text)).toContain(conflicting.a);
      expect(findConflicts(server, { text: conflicting.b, project: 'shop' })).toEqual(fullScan(server, { text: conflicting.b, project: 'shop' }));
      await textIndexReady(server); // nothing under way: at once
      server.close();
    } finally {
      store.close();
    }
  });

  it('brings up exactly the engrams rule 1 lets through, whatever their sizes (its stem searches miss none)', () => {
    const store = tempStore();
    const memories = ['eval', 'eval-lessons']
      .flatMap((set) => readFileSync(join(ROOT, 'fixtures', set, 'memories.jsonl'), 'utf8').split('\n').filter(Boolean))
      .map((line) => (JSON.parse(line) as { text: string }).text);
    // Short texts too: a smaller engram needs fewer shared stems.
    const texts = [...pairs.map((pair) => pair.a), ...memories, 'pnpm', 'Use pnpm.', 'Docker builds', 'npm test', 'Never force-push main.'];
    importEngrams(store, texts.map((text, i) => JSON.stringify({ text, project: projects[i % 3] ?? null })), { batchSize: 50 });
    const index = textIndexOf(store);
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
      const found = index.conflictCandidates(mine, { project }, CONFLICT_RULES.subjectOverlap).map((candidate) => candidate.id).sort((a, b) => a - b);
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

  it('an engram that stops being active is no longer a conflict', () => {
    const store = tempStore();
    importEngrams(store, [JSON.stringify({ text: 'Use pnpm to install dependencies in this repository.' })]);
    const probe = { text: 'Never use pnpm here; install dependencies with npm.', project: null };
    expect(findConflicts(store, probe)).toHaveLength(1);
    store.db.prepare("UPDATE engrams SET status = 'deprecated'").run();
    expect(findConflicts(store, probe)).toEqual([]);
    expect(fullScan(store, probe)).toEqual([]);
  });

  it('a verdict given ahead (an LLM’s) is used for any active engram in scope, whatever the overlap', () => {
    const store = tempStore();
    importEngrams(store, [JSON.stringify({ text: 'Deploys go out on Tuesdays.' }), JSON.stringify({ text: 'Ship releases every Friday afternoon.', project: 'blog' })]);
    const llm: ConflictVerdict = { conflict: true, signal: 'llm', reason: 'different days', overlap: 0, method: 'llm' };
    const verdicts = new Map([
      [1, llm],
      [2, llm],
    ]);
    const probe = { text: 'Release on Thursdays only.', project: 'shop' };
    expect(findConflicts(store, probe, verdicts)).toEqual(fullScan(store, probe, verdicts));
    expect(findConflicts(store, probe, verdicts).map((found) => found.other_id)).toEqual([1]);
  });
});
