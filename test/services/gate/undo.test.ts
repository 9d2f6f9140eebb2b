/**
 * `engram undo` on a real store: every kind of audited operation, undone, leaves every row of every table it touched
 * exactly as it was before (compared row by row, column by column), and the refusals say why and change nothing.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLlmClient, type Store } from '../../../src/core/index.js';
import {
  addEngram,
  applyJudgement,
  deleteEngram,
  deprecateEngram,
  exportEngrams,
  extractSession,
  importEngrams,
  listAudit,
  pinEngram,
  updateEngram,
  verifyJournal,
  type ExtractionSource,
} from '../../../src/services/index.js';
import { approveEngrams, forgetEngrams, rejectEngrams, undoOperation } from '../../../src/services/gate/index.js';
import { completion, fakeOpenAi, llmSettings } from '../../core/llm/_fakes.js';
import { SHARED, steppingClock, tempStore, thrown } from '../../_helpers.js';
import { snapshot } from './_state.js';

const agent = { by: 'agent', via: 'mcp' } as const;

/** A store with some history: engrams in each state, learning state, a judgement, a conflict. */
function populated(): { store: Store; now: () => Date } {
  const store = tempStore();
  const now = steppingClock();
  addEngram(store, { text: 'Use pnpm to install dependencies in this repository.', project: 'shop', tags: ['node'] }, { now });
  addEngram(store, { text: 'The API client timeout is 30s.', project: 'shop' }, { now });
  addEngram(store, { text: 'Run the linter before every commit.', topic_key: 'lint' }, { now });
  addEngram(store, { text: 'The worker pool size defaults to 8.', kind: 'gotcha', tags: ['workers'] }, { now, actor: agent });
  store.write(() => {
    store.sessions.upsert({ id: 's1', agent: 'claude', project: 'shop', cwd: '/w/shop', repo_root: '/w/shop', transcript_path: null, model: null, start_source: 'startup', at: now().toISOString() });
    store.stats.replace(1, {
      repos: [{ repo: 'shop', times_matched: 2, last_matched_at: '2026-10-01T00:00:00.000Z' }],
      tag_sets: [{ tag_set: ['node'], times_matched: 2, last_matched_at: null }],
      tag_relevance: [{ tag: 'node', score: 0.5, positive_evals: 2, negative_evals: 0, last_evaluated_at: null }],
    });
    store.activity.recordJudgement({ session_id: 's1', engram_id: 1, source: 'evaluation', score: 2, evidence: 'pnpm install', judged_by: 'test', at: now().toISOString() });
  });
  return { store, now };
}

/** Runs an operation, checks it changed something, undoes it by its token, and checks every row is as before. */
function roundTrip(store: Store, run: () => string | null, options: { without?: string[] } = {}): void {
  const before = snapshot(store, options);
  const token = run();
  expect(token, 'the operation printed an undo token').toMatch(/^u-/);
  expect(snapshot(store, options)).not.toEqual(before);
  const undone = undoOperation(store, token as string);
  expect(undone.undid.map((item) => item.token)).toContain(token);
  expect(snapshot(store, options)).toEqual(before);
  expect(verifyJournal(store)).toMatchObject({ ok: true, problems: [] });
}

describe('undo restores the exact prior state of every operation kind', () => {
  it('add (active), add that contradicts (pending with its conflict), restate, revise by topic key', () => {
    const { store, now } = populated();
    roundTrip(store, () => addEngram(store, { text: 'Feature flags are read at startup.', project: 'shop' }, { now }).undo_token);
    roundTrip(store, () => {
      const result = addEngram(store, { text: 'Never use pnpm here; install dependencies with npm.', project: 'shop' }, { now });
      expect(result.engram.status).toBe('pending');
      expect(result.conflicts.map((conflict) => conflict.other_id)).toEqual([1]);
      return result.undo_token;
    });
    roundTrip(store, () => addEngram(store, { text: 'The API client timeout is 30s.', project: 'shop', tags: ['http'] }, { now }).undo_token);
    roundTrip(store, () => addEngram(store, { text: 'Run the linter and the type checker before every commit.', topic_key: 'lint' }, { now }).undo_token);
  });

  it('edit, deprecate, taking a deprecation back, pin, unpin, soft delete, hard delete with learning state', () => {
    const { store, now } = populated();
    roundTrip(store, () => updateEngram(store, 2, { text: 'The API client timeout is 45 seconds.', add_tags: 'http' }, { now }).undo_token);
    roundTrip(store, () => deprecateEngram(store, 3, { reason: 'we use a pre-commit hook', now }).undo_token);
    deprecateEngram(store, 3, { reason: 'obsolete', now });
    roundTrip(store, () => deprecateEngram(store, 3, { undo: true, now }).undo_token);
    roundTrip(store, () => pinEngram(store, 1, true, { now }).undo_token);
    pinEngram(store, 2, true, { now });
    roundTrip(store, () => pinEngram(store, 2, false, { now }).undo_token);
    roundTrip(store, () => deleteEngram(store, 2, { now }).undo_token);
    roundTrip(store, () => deleteEngram(store, 1, { hard: true, now }).undo_token);
  });

  it('approve (superseding an active engram), reject, retire, forget with statistics, conflicts and judgements', () => {
    const { store, now } = populated();
    const newer = addEngram(store, { text: 'Never use pnpm here; install dependencies with npm.', project: 'shop' }, { now }).engram;
    roundTrip(store, () => approveEngrams(store, [newer.id], { supersede: true, now }).undo_token);
    roundTrip(store, () => approveEngrams(store, [newer.id], { keepBoth: true, now }).undo_token);
    roundTrip(store, () => approveEngrams(store, [4], { now }).undo_token);
    roundTrip(store, () => rejectEngrams(store, [newer.id, 4], { reason: 'wrong', now }).undo_token);
    roundTrip(store, () => rejectEngrams(store, [2], { now }).undo_token);
    roundTrip(store, () => forgetEngrams(store, [1, newer.id], { now }).undo_token);
  });

  it('an import of several batches is one operation', () => {
    const { store, now } = populated();
    const lines: string[] = [];
    const other = tempStore();
    addEngram(other, { text: 'Squash commits when merging pull requests.' }, { now });
    addEngram(other, { text: 'The session cookie expires after 7 days.', project: 'shop' }, { now });
    exportEngrams(other, (line) => lines.push(line));
    lines.push(JSON.stringify({ text: 'Snapshot tests are updated with npm test -- -u.' }));
    lines.push(JSON.stringify({ text: 'The API client timeout is 90s.', project: 'shop' }));
    roundTrip(store, () => {
      const report = importEngrams(store, lines, { batchSize: 2, now });
      expect(report).toMatchObject({ batches: 2, created: 4, conflicts: 1 });
      return report.undo_token;
    });
  });

  it('an automatic pin from the evaluator (learning state it moved is not part of the operation)', () => {
    const { store } = populated();
    const judge = (n: number) => applyJudgement(store, { engramId: 2, score: 3, tags: ['node'], source: 'evaluation', at: `2026-11-0${n}T00:00:00.000Z` });
    for (let n = 1; n <= 4; n++) expect(judge(n).pin).toBeNull();
    const learning = ['times_matched', 'last_matched_at'];
    const before = snapshot(store, { without: learning });
    expect(judge(5).pin?.action).toBe('pinned');
    const [entry] = listAudit(store, { ops: ['auto-pin'], limit: 1 });
    expect(entry).toMatchObject({ actor: 'system', engram_ids: [2] });
    undoOperation(store, entry?.token);
    const after = snapshot(store, { without: learning });
    expect(after.engrams).toEqual(before.engrams);
  });

  it('a lesson merged into one found in an earlier session', async () => {
    const store = tempStore();
    const fixtures = join(SHARED, 'fixtures', 'transcripts');
    const lessons: Record<string, unknown> = {
      'tool: TaskCreate': { text: 'In this project src/missing.py does not exist; list src before reading files there.', kind: 'struggle', scope: 'project', evidence: 'ls src/missing.py (failed)' },
      'tool: exec_command wc -l': { text: 'In this project, src/missing.py does not exist: list src before reading any file there.', kind: 'struggle', scope: 'project', evidence: 'exec_command ls src/missing.py (failed)' },
    };
    const server = await fakeOpenAi((request) => {
      const prompt = String(request.body?.messages?.at(-1)?.content ?? '');
      const found = Object.entries(lessons).find(([marker]) => prompt.includes(marker));
      return completion(JSON.stringify({ engrams: found ? [found[1]] : [] }));
    });
    const llm = createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'extractor' }), { store, retryBaseMs: 1 });
    const source = (name: string, sessionId: string): ExtractionSource => ({ sessionId, transcriptPath: join(fixtures, name), repo: 'proj', cwd: null, envTags: [], mcpServers: [] });
    await extractSession(store, source('claude-code-2.1.197__scripted-session.jsonl', 'claude-1'), { llm });
    expect(store.engrams.get(1)).toMatchObject({ status: 'pending', occurrence_count: 1 });
    const before = snapshot(store);
    const report = await extractSession(store, source('codex-0.169.0__scripted-session.jsonl', 'codex-1'), { llm });
    expect(report.lessons).toEqual([expect.objectContaining({ action: 'merged', engram_id: 1, status: 'pending' })]);
    const [merge] = listAudit(store, { ops: ['merge'], limit: 1 });
    expect(merge).toMatchObject({ actor: 'harvest', via: 'job', engram_ids: [1] });
    undoOperation(store, merge?.token);
    expect(snapshot(store)).toEqual(before);
  });
});

describe('undo refuses, and changes nothing, when it cannot be exact', () => {
  it('an unknown token, a second undo of the same operation, and nothing of yours to undo', () => {
    const { store, now } = populated();
    expect(thrown(() => undoOperation(store, 'u-nothing'))).toMatchObject({ code: 'NOT_FOUND' });
    const token = pinEngram(store, 1, true, { now }).undo_token as string;
    const first = undoOperation(store, token);
    const state = snapshot(store);
    const second = thrown(() => undoOperation(store, token));
    expect(second?.code).toBe('INVALID_INPUT');
    expect(second?.message).toContain(`was already undone by ${first.undo_token}`);
    expect(snapshot(store)).toEqual(state);
    const empty = tempStore();
    expect(thrown(() => undoOperation(empty))?.message).toBe('there is nothing of yours to undo');
  });

  it('a later change to the same columns: undo that first; an unrelated later change does not block', () => {
    const { store, now } = populated();
    const edit = updateEngram(store, 2, { text: 'The API client timeout is 45 seconds.' }, { now }).undo_token as string;
    const later = updateEngram(store, 2, { text: 'The API client timeout is 50 seconds.' }, { now }).undo_token as string;
    const state = snapshot(store);
    const refused = thrown(() => undoOperation(store, edit));
    expect(refused?.message).toMatch(new RegExp(`cannot undo ${edit} \\(edit of #2 .*\\): a later change depends on it — ${later} \\(edit of #2`));
    expect(refused?.details).toEqual({ blocking: [later] });
    expect(snapshot(store)).toEqual(state);
    // A pin touches other columns: the first edit can be undone once the later edit is.
    pinEngram(store, 2, true, { now });
    undoOperation(store, later);
    undoOperation(store, edit);
    expect(store.engrams.get(2)).toMatchObject({ text: 'The API client timeout is 30s.', pinned: true });
  });

  it('a row changed outside Engram since (no audit row to undo first)', () => {
    const { store, now } = populated();
    const token = updateEngram(store, 3, { text: 'Run the linter before each push.' }, { now }).undo_token as string;
    store.db.prepare('UPDATE engrams SET text = ? WHERE id = 3').run('Edited by hand in SQLite.');
    const state = snapshot(store);
    const refused = thrown(() => undoOperation(store, token));
    expect(refused?.message).toContain('engrams {"id":3} has text changed since; nothing was changed');
    expect(snapshot(store)).toEqual(state);
  });

  it('undoing an undo redoes the operation; without a token the latest of yours is undone, the agent’s are not', () => {
    const { store, now } = populated();
    const pinned = pinEngram(store, 1, true, { now }).undo_token as string;
    addEngram(store, { text: 'The cache TTL for product pages is 5 minutes.' }, { now, actor: agent });
    const undo = undoOperation(store); // the pin, not the agent's add
    expect(undo.undid).toEqual([expect.objectContaining({ token: pinned, op: 'pin' })]);
    expect(store.engrams.get(1)?.pinned).toBe(false);
    undoOperation(store, undo.undo_token as string);
    expect(store.engrams.get(1)?.pinned).toBe(true);
    expect(thrown(() => undoOperation(store, pinned, { actor: agent }))?.message).toContain("only a person can undo; this was asked by 'agent'");
  });
});
