/**
 * Tag relevance over time (schema 14): every move of the EMA is a history row written in the transaction that moves
 * it, naming the judgement that caused it; the engram detail draws it per tag, and pin history comes from the audit log.
 */
import { describe, expect, it } from 'vitest';
import { addEngram, engramDetail, governancePolicy, pinEngram, recordFeedback, relevanceHistory } from '../../../src/services/index.js';
import { applyJudgement } from '../../../src/services/learn/index.js';
import { tempDir, tempStore, thrown } from '../../_helpers.js';

const at = (minute: number): string => new Date(Date.UTC(2026, 10, 1, 10, minute)).toISOString();

describe('relevance history', () => {
  it('records each move of each tag with the judgement that caused it, and nothing when the move is rolled back', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'Run migrations with --dry-run first.' });
    store.sessions.upsert({ id: 's1', agent: 'claude', project: 'shop', cwd: '/w/shop', repo_root: null, transcript_path: null, model: null, start_source: 'startup', at: at(0) });
    // A judgement of the evaluator, stored first as the evaluator does, then applied in the same transaction.
    store.write(() => {
      const judgementId = store.activity.recordJudgement({ session_id: 's1', engram_id: engram.id, source: 'evaluation', score: 3, evidence: 'used --dry-run', judged_by: 'judge', at: at(1) });
      applyJudgement(store, { engramId: engram.id, score: 3, tags: ['postgres', 'linux'], source: 'evaluation', at: at(1), judgementId, sessionId: 's1' });
    });
    recordFeedback(store, engram.id, false, { tags: ['linux'], reason: 'not on this box', now: () => new Date(at(2)) });
    const rows = store.stats.relevanceHistory(engram.id);
    expect(rows.map((row) => [row.tag, row.score_before, row.score, row.cause, row.judgement_score, row.session_id, row.at])).toEqual([
      ['linux', null, 0.3, 'evaluation', 3, 's1', at(1)],
      ['linux', 0.3, expect.any(Number), 'feedback', -3, null, at(2)],
      ['postgres', null, 0.3, 'evaluation', 3, 's1', at(1)],
    ]);
    // The current value is the last move's.
    expect(store.stats.get(engram.id).tag_relevance.find((row) => row.tag === 'linux')?.score).toBe(rows[1]?.score);
    expect(rows.every((row) => row.judgement_id !== null)).toBe(true);

    // A judgement that fails mid-way leaves neither the EMA nor its history moved.
    const before = store.stats.relevanceHistory(engram.id).length;
    expect(thrown(() => applyJudgement(store, { engramId: engram.id, score: 9, tags: ['linux'], source: 'evaluation', at: at(3) }))?.code).toBe('INVALID_INPUT');
    expect(store.stats.relevanceHistory(engram.id)).toHaveLength(before);

    // The detail joins each move to its judgement's quote and judge.
    const series = relevanceHistory(store, engram.id, store.stats.get(engram.id));
    expect(series.map((s) => s.tag)).toEqual(['linux', 'postgres']);
    expect(series[0]?.points.map((p) => [p.cause, p.evidence, p.judged_by])).toEqual([
      ['evaluation', 'used --dry-run', 'judge'],
      ['feedback', 'not on this box', 'person'],
    ]);
    expect(series[0]?.current).toBe(series[0]?.points.at(-1)?.score);
  });

  it('keeps the newest moves of each tag for a chart, oldest first', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'Prefer structured logging.' });
    for (let i = 0; i < 6; i++) applyJudgement(store, { engramId: engram.id, score: i % 2 ? -1 : 2, tags: ['node'], source: 'evaluation', at: at(i) });
    const newest = store.stats.relevanceHistory(engram.id, 3);
    expect(newest.map((row) => row.at)).toEqual([at(3), at(4), at(5)]);
  });

  it('gives the detail a pin history: a person’s pin, an undo-able unpin, and the system’s auto-pin', () => {
    const store = tempStore();
    const { engram } = addEngram(store, { text: 'The staging cluster resets on Mondays.' });
    pinEngram(store, engram.id, true, { actor: { by: 'user', via: 'http' }, now: () => new Date(at(1)) });
    pinEngram(store, engram.id, false, { actor: { by: 'user', via: 'cli' }, now: () => new Date(at(2)) });
    // Five useful judgements in one environment make the system pin it (services/learn/pin.ts).
    for (let i = 0; i < 6; i++) applyJudgement(store, { engramId: engram.id, score: 3, tags: ['k8s'], repo: 'infra', source: 'evaluation', at: at(10 + i) });
    const detail = engramDetail(store, engram.id, { home: tempDir(), policy: governancePolicy(), now: new Date(at(30)) });
    expect(detail.pin_history.map((step) => [step.pinned, step.auto, step.actor, step.via, step.op])).toEqual([
      [true, false, 'user', 'http', 'pin'],
      [false, false, 'user', 'cli', 'unpin'],
      [true, true, 'system', 'job', 'auto-pin'],
    ]);
    expect(detail.relevance_history).toEqual([expect.objectContaining({ tag: 'k8s', points: expect.any(Array) })]);
    expect(detail.relevance_history[0]?.points).toHaveLength(6);
  });
});
