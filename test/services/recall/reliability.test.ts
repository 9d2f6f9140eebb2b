import { describe, expect, it } from 'vitest';
import type { EmbedderChoice, Store } from '../../../src/core/index.js';
import {
  addEngram,
  createSearchEngine,
  createVectorReliability,
  judgedFactor,
  recordSessionStart,
  TUNING,
  vectorWeight,
  vectorWeightFor,
} from '../../../src/services/index.js';
import { tempDir, tempStore } from '../../_helpers.js';
describe('vector reliability', () => {
  it('starts at the prior and moves with where the vector list ranks BM25’s best hit', () => {
    const reliability = createVectorReliability();
    expect(reliability.estimate()).toBeCloseTo(TUNING.reliability.prior, 12);
    for (let i = 0; i < 40; i++) reliability.observe(1);
    expect(reliability.estimate()).toBeGreaterThan(0.8);
    const poor = createVectorReliability();
    for (let i = 0; i < 40; i++) poor.observe(i % 2 === 0 ? null : 8);
    expect(poor.estimate()).toBeLessThan(0.15);
  });

  it('forgets beyond its window, so a store whose vectors change is followed', () => {
    const reliability = createVectorReliability();
    for (let i = 0; i < 1_000; i++) reliability.observe(1);
    for (let i = 0; i < TUNING.reliability.window; i++) reliability.observe(null);
    expect(reliability.weight()).toBe(TUNING.reliability.window);
    expect(reliability.estimate()).toBeLessThan(0.4);
  });

  it('turns the estimate into a vector weight: weak up to `low`, strong from `high`, linear between', () => {
    const { low, high, weak, strong } = TUNING.reliability;
    expect(vectorWeightFor(0)).toBe(weak);
    expect(vectorWeightFor(low)).toBe(weak);
    expect(vectorWeightFor((low + high) / 2)).toBeCloseTo((weak + strong) / 2, 12);
    expect(vectorWeightFor(high)).toBe(strong);
    expect(vectorWeightFor(1)).toBe(strong);
  });
});

describe("the learning loop's verdicts on what each list led hooks to inject", () => {
  const verdicts = (vector: [number, number], bm25: [number, number]) => ({
    vector: { useful: vector[0], judged: vector[1] },
    bm25: { useful: bm25[0], judged: bm25[1] },
  });

  it('say nothing until each side has enough verdicts, then compare the useful rates with a prior, clamped', () => {
    const { minJudged, min, max } = TUNING.judged;
    expect(judgedFactor(verdicts([0, minJudged - 1], [9, 10]))).toBeNull();
    expect(judgedFactor(verdicts([3, 6], [3, 6]))).toBeCloseTo(1, 12);
    // (4 + 1) / (8 + 2) against (6 + 1) / (8 + 2).
    expect(judgedFactor(verdicts([4, 8], [6, 8]))).toBeCloseTo(5 / 7, 12);
    expect(judgedFactor(verdicts([0, 20], [20, 20]))).toBe(min);
    expect(judgedFactor(verdicts([20, 20], [1, 20]))).toBe(max);
  });

  it('scale the weight the store’s agreement earned, within bounds', () => {
    const { weak, strong } = TUNING.reliability;
    expect(vectorWeight(0, null)).toBe(weak);
    expect(vectorWeight(0, 0.5)).toBeCloseTo(weak * 0.5, 12);
    expect(vectorWeight(1, 2)).toBe(strong);
    expect(vectorWeight(0, 1.5)).toBeCloseTo(weak * 1.5, 12);
  });

  it('lower the vector weight of a store whose vector-led injections were judged useless', async () => {
    const store: Store = tempStore();
    const lesson = addEngram(store, { text: 'Run npm run build before npm test; the e2e tests import dist bundles.', category: 'testing' }).engram;
    const other = addEngram(store, { text: 'Docker builds need BuildKit for cache mounts.', category: 'ops/docker' }).engram;
    addEngram(store, { text: 'Postgres migrations must be idempotent.', category: 'database' });
    // Six sessions: each injected `other` because only the vector list ranked it (judged useless) and `lesson`
    // because BM25 did (judged useful).
    for (let i = 1; i <= 6; i++) {
      const id = `s${i}`;
      const at = `2026-11-0${i}T10:00:00.000Z`;
      recordSessionStart(store, { sessionId: id, agent: 'claude', cwd: tempDir(), transcriptPath: null }, 'startup', { now: () => new Date(at) });
      store.write(() => {
        store.activity.recordShown([
          { session_id: id, engram_id: other.id, event: 'UserPromptSubmit', query: 'q', score: 1, rank: 1, chars: 50, answered_by: 'server', at, bm25_rank: null, vector_rank: 1 },
          { session_id: id, engram_id: lesson.id, event: 'UserPromptSubmit', query: 'q', score: 1, rank: 2, chars: 50, answered_by: 'server', at, bm25_rank: 1, vector_rank: 9 },
        ]);
        for (const [engram, score] of [[other.id, -2], [lesson.id, 2]] as const) {
          store.activity.recordJudgement({ session_id: id, engram_id: engram, source: 'evaluation', score, evidence: null, judged_by: 'test', at });
        }
      });
    }
    expect(store.activity.judgedByList(TUNING.judged.lead)).toEqual({ vector: { useful: 0, judged: 6 }, bm25: { useful: 6, judged: 6 } });
    const choice: EmbedderChoice = { spec: { kind: 'test', model: 'test:hash' }, reason: 'test' };
    const engine = createSearchEngine(store, { embedder: choice, tuning: { rrfK: TUNING.rrfK, weights: { bm25: 1 }, topK: 10 }, indexDir: tempDir(), skipDecisive: false });
    const response = await engine.search({ query: 'npm test build', explain: true });
    const reliability = response.explain?.fusion.reliability;
    expect(reliability?.judged).toMatchObject({ vector: { useful: 0, judged: 6 }, bm25: { useful: 6, judged: 6 }, factor: TUNING.judged.min });
    expect(response.explain?.fusion.weights.vector).toBeCloseTo(vectorWeightFor(reliability?.estimate as number) * TUNING.judged.min, 6);
    expect(response.explain?.fusion.weights.vector).toBeLessThan(TUNING.reliability.weak);
  });
});
