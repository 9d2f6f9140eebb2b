import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/core/index.js';
import { runRetrievalBench, searchTuning } from '../../../src/services/index.js';

const TEST_EMBEDDER = { spec: { kind: 'test' as const, model: 'test:hash' as const }, reason: 'test' };
const tuning = { rrfK: 60, weights: { bm25: 1, vector: 0.5 }, topK: 10 };
const lines = (rows: object[]) => rows.map((row) => JSON.stringify(row));

describe('runRetrievalBench', () => {
  it('computes recall@k, hit@k and MRR per mode, and keeps grouped queries inside their group', async () => {
    const memories = lines([
      { id: 'a', text: 'Run the payments tests with make test-payments.', group: 'payments' },
      { id: 'b', text: 'Run the mobile tests with yarn test:mobile.', group: 'mobile' },
      { id: 'c', text: 'Docker layer caching needs BuildKit.' },
      { id: 'd', text: 'Docker compose files live in deploy/.' },
      { id: 'e', text: 'Prefer rebase over merge for feature branches.' },
    ]);
    const queries = lines([
      { q: 'how to run the tests', relevant: ['b'], group: 'mobile', kind: 'grouped' },
      { q: 'docker caching buildkit', relevant: ['c'], kind: 'lexical' },
      { q: 'docker', relevant: ['c', 'd'], kind: 'lexical' },
      { q: 'kubernetes helm chart values', relevant: ['e'], kind: 'miss' },
      { q: 'terraform state locking', relevant: [] },
    ]);
    const reports = await runRetrievalBench({ memories, queries, k: 1, modes: ['bm25', 'hybrid'], embedder: TEST_EMBEDDER, tuning });
    const bm25 = reports[0]!;
    expect(bm25).toMatchObject({ mode: 'bm25', model: null, k: 1, n: 4, no_answer: { n: 1, empty_rate: 1 } });
    // grouped: hit (1); lexical buildkit: hit (1); docker with two relevant at k=1: recall 0.5, hit 1; miss: 0.
    expect(bm25['recall@k']).toBeCloseTo((1 + 1 + 0.5 + 0) / 4, 4);
    expect(bm25['hit@k']).toBeCloseTo(3 / 4, 4);
    expect(bm25.mrr).toBeCloseTo(3 / 4, 4);
    expect(bm25.by_kind).toEqual({
      grouped: { n: 1, 'recall@k': 1, 'hit@k': 1, mrr: 1 },
      lexical: { n: 2, 'recall@k': 0.75, 'hit@k': 1, mrr: 1 },
      miss: { n: 1, 'recall@k': 0, 'hit@k': 0, mrr: 0 },
    });
    expect(reports[1]).toMatchObject({ mode: 'hybrid', model: 'test:hash' });
  });

  it('with storePerGroup, loads each group into its own store: a query sees its conversation only, IDF included', async () => {
    // "maya" is in every turn of the first conversation and nowhere in the second: in one store it would be a rare,
    // telling word; in its own store it is the most common one.
    const memories = lines([
      { id: 'm1', text: 'Maya: I adopted a greyhound called Pepper.', group: 'maya' },
      { id: 'm2', text: 'Maya: I ran fifteen kilometres this morning.', group: 'maya' },
      { id: 'm3', text: 'Maya: My grandmother turned ninety.', group: 'maya' },
      { id: 'p1', text: 'Priya: I sold thirty loaves at the market.', group: 'priya' },
      { id: 'p2', text: 'Priya: Maya told me about her greyhound.', group: 'priya' },
    ]);
    const queries = lines([
      { q: 'which dog did Maya adopt', relevant: ['m1'], group: 'maya' },
      { q: 'what did Priya sell', relevant: ['p1'], group: 'priya' },
    ]);
    const seen: string[][] = [];
    const reports = await runRetrievalBench({
      memories,
      queries,
      k: 5,
      modes: ['bm25'],
      embedder: null,
      tuning,
      storePerGroup: true,
      search: { explain: true },
      inspect: (query, response, ids) => {
        seen.push(response.results.flatMap((hit) => ids(hit.id)));
        if (query.group === 'maya') expect(response.explain?.abstain.terms.find((t) => t.term === 'maya')?.weight).toBeLessThan(0.5);
      },
    });
    expect(reports[0]).toMatchObject({ n: 2, 'recall@k': 1 });
    expect(seen[0]?.every((id) => id.startsWith('m'))).toBe(true);
    expect(seen[1]?.every((id) => id.startsWith('p'))).toBe(true);
    await expect(runRetrievalBench({ memories: lines([{ id: 'x', text: 'no group' }]), queries: [], k: 5, modes: ['bm25'], embedder: null, tuning, storePerGroup: true })).rejects.toThrow(/every memory and query needs a group/);
  });

  it('rejects bad input with line numbers and unknown labels by id', async () => {
    const base = { queries: [], k: 10, modes: ['bm25' as const], embedder: null, tuning };
    await expect(runRetrievalBench({ ...base, memories: ['{"id":"a","text":"x"}', '{"id":"b"}'] })).rejects.toThrow(/memories: 1 invalid line\(s\); line 2/);
    await expect(runRetrievalBench({ ...base, memories: ['{"id":"a","text":"x"}', '{"id":"a","text":"y"}'] })).rejects.toThrow(/duplicate id 'a'/);
    await expect(
      runRetrievalBench({ ...base, memories: ['{"id":"a","text":"x"}'], queries: ['{"q":"x","relevant":["zz"]}'] }),
    ).rejects.toThrow(/not among the memories: zz/);
    await expect(runRetrievalBench({ ...base, memories: ['{"id":"a","text":"x","extra":1}'] })).rejects.toThrow(/line 1/);
  });

  it('searches every memory of the set, even one review would park as contradicting another', async () => {
    // The second memory contradicts the first (governance's rules): stored by a person it would wait in review, hidden
    // from search, and its label could never be found.
    const memories = lines([
      { id: 'use', text: 'Use pnpm to install dependencies in this repository.' },
      { id: 'never', text: 'Never use pnpm in this repository; install dependencies with npm.' },
    ]);
    const queries = lines([{ q: 'never pnpm install with npm', relevant: ['never'] }]);
    const [bm25] = await runRetrievalBench({ memories, queries, k: 2, modes: ['bm25'], embedder: null, tuning });
    expect(bm25!['recall@k']).toBe(1);
  });
});

describe('runRetrievalBench warm-up', () => {
  // The engine keeps state across searches (the store's vector reliability moves with each hybrid search), so a split
  // searched alone is not the split searched after another. The real lessons set, the hash embedder (no model files).
  const root = join(dirname(fileURLToPath(import.meta.url)), '../../../fixtures/eval-lessons');
  const read = (file: string) => readFileSync(join(root, file), 'utf8').split('\n').filter((line) => line.trim() !== '');
  const memories = read('memories.jsonl');
  const dev = read('queries-dev.jsonl');
  const test = read('queries-test.jsonl');
  const testQueries = new Set(test.map((line) => (JSON.parse(line) as { q: string }).q));
  // The shipped tuning: no fixed vector weight, so the store's running reliability decides it.
  const shipped = searchTuning(configSchema().parse({}));

  async function rankings(queries: string[], warmUp?: string[]): Promise<Map<string, number[]>> {
    const seen = new Map<string, number[]>();
    await runRetrievalBench({
      memories,
      queries,
      ...(warmUp ? { warmUp } : {}),
      k: 10,
      modes: ['hybrid'],
      embedder: TEST_EMBEDDER,
      tuning: shipped,
      inspect(query, response) {
        // Warm-up queries are scored nowhere: inspect never sees them.
        if (warmUp) expect(testQueries.has(query.q)).toBe(true);
        if (testQueries.has(query.q)) seen.set(query.q, response.results.map((hit) => hit.id));
      },
    });
    return seen;
  }

  it('searches the warm-up queries first, unscored: the test split alone then ranks as it does after the dev split', async () => {
    const afterDev = await rankings([...dev, ...test]);
    const warmed = await rankings(test, dev);
    const cold = await rankings(test);
    expect(warmed.size).toBe(testQueries.size);
    expect(warmed).toEqual(afterDev);
    // Without the warm-up the same queries rank differently: what the option exists for.
    expect(cold).not.toEqual(afterDev);
  }, 120_000);
});
