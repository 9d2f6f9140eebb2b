/**
 * Evaluation after a session, against a real store, a real transcript file and a fake OpenAI-compatible server on
 * 127.0.0.1: judged once, statistics and EMA move exactly as computed by hand, strong positives need a quote, no LLM
 * means no judgement, failures are retried at most three times.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLlmClient, createLogger, type Store } from '../../../src/core/index.js';
import { addEngram, evaluateSession, queueSessionEndWork, recordSessionStart, runPendingJobs, scoreFromAnswer, storeStatus } from '../../../src/services/index.js';
import { completion, fakeOpenAi, llmSettings } from '../../core/llm/_fakes.js';
import { tempDir, tempStore } from '../../_helpers.js';

const SHOWN_AT = '2026-11-22T10:00:03.000Z';
const TAGS = ['nodejs', 'typescript'];

/** A session that was shown engram 1 while the agent fixed a failing test run. */
function session(store: Store, id = 's1'): { engramId: number } {
  const dir = tempDir();
  const transcript = join(dir, `${id}.jsonl`);
  const line = (second: number, record: Record<string, unknown>) =>
    JSON.stringify({ uuid: `${id}-${second}`, sessionId: id, timestamp: `2026-11-22T10:00:0${second}.000Z`, ...record });
  writeFileSync(
    transcript,
    [
      line(1, { type: 'user', message: { role: 'user', content: 'the tests fail with ECONNREFUSED' } }),
      line(4, { type: 'assistant', message: { id: 'm1', content: [{ type: 'text', text: 'As the memory says, Postgres must run: starting docker compose up -d db.' }] } }),
      line(5, { type: 'assistant', message: { id: 'm2', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'docker compose up -d db' } }] } }),
    ].join('\n'),
  );
  const { engram } = addEngram(store, { text: 'Tests need Postgres: start it with docker compose up -d db.', category: 'testing' });
  const at = () => new Date('2026-11-22T10:00:00Z');
  recordSessionStart(store, { sessionId: id, agent: 'claude', cwd: dir, transcriptPath: transcript }, 'startup', { now: at });
  store.write(() => {
    store.activity.audit({ session_id: id, env_tags: TAGS, repo: 'shop', transcript_path: transcript, at: SHOWN_AT });
    store.activity.recordShown([
      { session_id: id, engram_id: engram.id, event: 'UserPromptSubmit', query: 'tests fail', score: 1, rank: 1, chars: 80, answered_by: 'server', at: SHOWN_AT },
    ]);
  });
  return { engramId: engram.id };
}

const relevance = (store: Store, engramId: number) =>
  Object.fromEntries(store.stats.get(engramId).tag_relevance.map((row) => [row.tag, [row.score, row.positive_evals, row.negative_evals]]));

describe('evaluateSession', () => {
  it('judges each shown engram once: statistics and the EMA move as computed by hand, and never again', async () => {
    const store = tempStore();
    const { engramId } = session(store);
    const server = await fakeOpenAi([completion(JSON.stringify({ score: 3, evidence: 'As the memory says, Postgres must run' }))]);
    const llm = createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'judge' }), { store });
    const report = await evaluateSession(store, 's1', { llm });
    expect(report).toMatchObject({ outcome: 'completed', judged: [{ engram_id: engramId, score: 3, matched: true }] });
    // EMA from 0: 0 × 0.7 + (3 / 3) × 0.3 × weight 1 = 0.3, one positive evaluation per environment tag.
    expect(relevance(store, engramId)).toEqual({ nodejs: [0.3, 1, 0], typescript: [0.3, 1, 0] });
    expect(store.engrams.get(engramId)?.times_matched).toBe(1);
    expect(store.stats.get(engramId).repos).toEqual([expect.objectContaining({ repo: 'shop', times_matched: 1 })]);
    const sent = server.requests[0]?.body as { messages: Array<{ content: string }> };
    expect(sent.messages[1]?.content).toContain('Memory EG#1 [testing]: Tests need Postgres');
    expect(sent.messages[1]?.content).toContain('assistant: As the memory says, Postgres must run');

    // A second SessionEnd (or a restarted server) runs the job again: nothing is judged or counted twice.
    expect(await evaluateSession(store, 's1', { llm })).toMatchObject({ outcome: 'done', judged: [] });
    expect(server.requests).toHaveLength(1);
    expect(relevance(store, engramId)).toEqual({ nodejs: [0.3, 1, 0], typescript: [0.3, 1, 0] });
    expect(store.activity.judgements('s1')).toEqual([expect.objectContaining({ engram_id: engramId, score: 3, judged_by: 'fake-model-served', evidence: 'As the memory says, Postgres must run' })]);
    expect(store.activity.evaluation('s1')).toMatchObject({ eval_status: 'completed', eval_attempts: 1 });
  });

  it('lowers an unquoted strong positive, and treats an unusable answer as no judgement', async () => {
    expect(scoreFromAnswer('{"score": 3, "evidence": "something never said"}', 'the excerpt')).toEqual({ score: 1, evidence: 'something never said' });
    expect(scoreFromAnswer('```json\n{"score": -2}\n```', '')).toEqual({ score: -2, evidence: null });
    expect(scoreFromAnswer('{"score": 9, "evidence": "the excerpt text"}', 'in the excerpt text here')).toEqual({ score: 3, evidence: 'the excerpt text' });
    expect(scoreFromAnswer('no idea', '')).toBeNull();
  });

  it('an unusable answer is not stored as a judgement: the next drain asks again, within the LLM budget, and engram status counts it', async () => {
    const store = tempStore();
    const { engramId } = session(store);
    const server = await fakeOpenAi([completion('I think it helped a bit?'), completion('{"score": 2, "evidence": "starting docker compose up -d db"}')]);
    const llm = createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'judge' }), { store });
    const first = await evaluateSession(store, 's1', { llm });
    expect(first).toMatchObject({ outcome: 'failed', error: expect.stringContaining(`unusable answer for EG#${engramId}`) });
    expect(store.activity.judgements('s1')).toEqual([]);
    expect(relevance(store, engramId)).toEqual({});
    const status = () => storeStatus(store, llmSettings({})).evaluations;
    expect(status()).toMatchObject({ completed: 0, retrying: 1, gave_up: 0, unusable_answer: 1 });

    // The next drain (a session ending, a queued job) retries it.
    const log = createLogger({ dir: tempDir(), name: 'jobs' });
    expect(await runPendingJobs({ store, log, now: () => new Date(), llm })).toEqual({ ran: 0, failed: 0 });
    expect(server.requests).toHaveLength(2);
    expect(store.activity.judgements('s1')).toEqual([expect.objectContaining({ engram_id: engramId, score: 2 })]);
    expect(store.activity.evaluation('s1')).toMatchObject({ eval_status: 'completed', eval_attempts: 2 });
    expect(status()).toMatchObject({ completed: 1, retrying: 0, unusable_answer: 0 });
    // Judged now: a later drain asks nothing more.
    await runPendingJobs({ store, log, now: () => new Date(), llm });
    expect(server.requests).toHaveLength(2);
  });

  it('a spent daily LLM budget does not use up the retries of an evaluation', async () => {
    const store = tempStore();
    session(store);
    const server = await fakeOpenAi([completion('not JSON at all')]);
    const llm = createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'judge', max_calls_per_day: 1 }), { store });
    expect((await evaluateSession(store, 's1', { llm })).outcome).toBe('failed');
    const log = createLogger({ dir: tempDir(), name: 'jobs' });
    for (let drain = 0; drain < 4; drain++) await runPendingJobs({ store, log, now: () => new Date(), llm });
    // One call was allowed today; the drains were refused by the cap before calling, and the session keeps its retries.
    expect(server.requests).toHaveLength(1);
    expect(store.activity.evaluation('s1')).toMatchObject({ eval_status: 'failed', eval_attempts: 1, eval_error: expect.stringContaining('max_calls_per_day') });
  });

  it('without an LLM judges nothing, changes no statistics, and says so', async () => {
    const store = tempStore();
    const { engramId } = session(store);
    const llm = createLlmClient(llmSettings({ provider: 'none' }), { store });
    const report = await evaluateSession(store, 's1', { llm });
    expect(report).toMatchObject({ outcome: 'skipped', error: expect.stringContaining('no LLM') });
    expect(relevance(store, engramId)).toEqual({});
    expect(store.activity.judgements('s1')).toEqual([expect.objectContaining({ score: null, judged_by: 'none' })]);
  });

  it('a failing model leaves the session to be retried, at most three times', async () => {
    const store = tempStore();
    session(store);
    const server = await fakeOpenAi([{ status: 500, body: { error: { message: 'down' } } }]);
    const llm = createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'judge', max_retries: 0 }), { store });
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect((await evaluateSession(store, 's1', { llm })).outcome).toBe('failed');
    }
    expect(await evaluateSession(store, 's1', { llm })).toMatchObject({ outcome: 'gave-up' });
    expect(store.activity.evaluation('s1')).toMatchObject({ eval_status: 'failed', eval_attempts: 3 });
  });

  it('runs from the session-end job the hooks queue', async () => {
    const store = tempStore();
    const { engramId } = session(store, 's9');
    const server = await fakeOpenAi([completion('{"score": 2, "evidence": "starting docker compose up -d db"}')]);
    const llm = createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'judge' }), { store });
    queueSessionEndWork(store, { sessionId: 's9', agent: 'claude', cwd: '/tmp', transcriptPath: null }, { now: () => new Date() });
    const log = createLogger({ dir: tempDir(), name: 'jobs' });
    expect(await runPendingJobs({ store, log, now: () => new Date(), llm })).toEqual({ ran: 1, failed: 0 });
    // 0 × 0.7 + (2 / 3) × 0.3 = 0.2
    expect(relevance(store, engramId)).toEqual({ nodejs: [0.2, 1, 0], typescript: [0.2, 1, 0] });
  });
});
