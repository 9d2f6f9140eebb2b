import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, engramProcess, hasModels, MODELS_DIR, ROOT, tempDir } from '../_helpers.js';

const LESSONS = [
  { text: 'Run npm run build before npm test; the e2e tests import the bundles in dist.', category: 'testing', tags: ['npm'] },
  { text: 'Postgres migrations must be idempotent: CREATE INDEX IF NOT EXISTS, because deploys re-run them.', category: 'database/postgres' },
  { text: 'The user wants small commits with imperative subject lines under 60 characters.', category: 'preferences', tags: ['git'] },
  { text: 'Docker builds need BuildKit for cache mounts; set DOCKER_BUILDKIT=1 on CI.', category: 'ops/docker', tags: ['docker', 'ci'] },
];
const jsonl = (rows: object[]) => rows.map((row) => JSON.stringify(row)).join('\n');

describe('engram search, import, reindex (CLI)', () => {
  it('imports minimal lines, embeds them in batches, and finds them by keyword and by meaning', async () => {
    const home = tempDir();
    const env = { ENGRAM_EMBEDDER: 'test' };
    const imported = await cli(['import', '-'], { home, stdin: jsonl(LESSONS), env });
    expect(imported.code).toBe(0);
    expect(imported.json).toMatchObject({ created: 4, vectors: { model: 'test:hash', embedded: 4, remaining: 0 }, note: null });

    const found = await cli(['search', 'docker buildkit cache'], { home, env });
    expect(found.code).toBe(0);
    // Every word sits in one lesson that stands out: BM25 is decisive and the vector half is skipped.
    expect(found.json.results[0]).toMatchObject({ id: 4, ranks: { bm25: 1, vector: null }, engram: { category: 'ops/docker' } });
    expect(found.json.timings.vectors).toBe('skipped');
    expect(found.json.results[0].score).toBeGreaterThan(0.9);
    expect(Object.keys(found.json)).toEqual(['query', 'mode', 'model', 'abstained', 'weak', 'degraded', 'results', 'timings']);

    // Silent on what the store cannot answer, and --explain says why; --no-abstain shows the nearest anyway.
    const unknown = await cli(['search', 'docker kubernetes helm chart rollout', '--explain'], { home, env });
    expect(unknown.json).toMatchObject({ abstained: 'weak-match', results: [] });
    expect(unknown.json.explain.abstain.weak).toMatch(/covers \d+ % of the query's weight/);
    expect(unknown.json.explain.fusion).toMatchObject({ k: 5, weights: { bm25: 1, vector: 0.3, anchor: 0.3 } });
    const explained = await cli(['search', 'docker kubernetes helm chart rollout', '--explain', '--pretty'], { home, env });
    expect(explained.stdout).toContain('No confident match');
    expect(explained.stdout).toMatch(/query terms \(weight = IDF in this store\): docker \d\.\d+, kubernet/);
    const anyway = await cli(['search', 'docker kubernetes helm chart rollout', '--no-abstain'], { home, env });
    expect(anyway.json.abstained).toBeNull();
    expect(anyway.json.weak).toBe(unknown.json.weak);

    const filtered = await cli(['search', 'build', '--category', 'ops', '--tags', 'docker,ci', '--top-k', '1', '--mode', 'bm25'], { home, env });
    expect(filtered.json.results.map((r: { id: number }) => r.id)).toEqual([4]);
    const none = await cli(['search', 'ok do it'], { home, env });
    expect(none.json).toMatchObject({ abstained: 'no-content', results: [] });
    const pretty = await cli(['search', 'postgres index', '--pretty'], { home, env });
    expect(pretty.stdout).toMatch(/^#2 {2}\d\.\d{3} {2}\(bm25 1 · vector (\d+|–)[^)]*\) {2}\[database\/postgres\]/);
  });

  it('rejects bad arguments with a usage error', async () => {
    const home = tempDir();
    expect((await cli(['search', 'x', '--mode', 'fuzzy'], { home })).code).toBe(2);
    expect((await cli(['search', 'x', '--top-k', '0'], { home })).code).toBe(2);
    expect((await cli(['search', 'x', '--category', 'Bad Category!!'], { home })).code).toBe(2);
    const badEmbedder = await cli(['search', 'x'], { home, env: { ENGRAM_EMBEDDER: 'magic' } });
    expect(badEmbedder.code).toBe(2);
    expect(badEmbedder.stderr).toContain('ENGRAM_EMBEDDER must be one of');
  });

  it('with no model, imports and searches on BM25 and says so; reindex embeds once a model is there', async () => {
    const home = tempDir();
    const noModel = { ENGRAM_EMBEDDER: 'transformers', ENGRAM_MODEL: 'Xenova/all-MiniLM-L6-v2' };
    const imported = await cli(['import', '-'], { home, stdin: jsonl(LESSONS), env: noModel });
    expect(imported.code).toBe(0);
    expect(imported.json.vectors).toBeNull();
    expect(imported.json.note).toContain('engram model pull Xenova/all-MiniLM-L6-v2');
    const found = await cli(['search', 'postgres migrations'], { home, env: noModel });
    expect(found.code).toBe(0);
    expect(found.json.results[0].id).toBe(2);
    expect(found.json.degraded).toContain('vector search unavailable');
    const doctor = await cli(['doctor'], { home, env: noModel });
    expect(doctor.json.checks.find((c: { name: string }) => c.name === 'embeddings')).toMatchObject({ status: 'degraded', fix: 'engram model pull' });

    // Switching to a model: vectors are missing until reindex, which embeds them all; the old space stays.
    const env = { ENGRAM_EMBEDDER: 'test' };
    const reindex = await cli(['reindex'], { home, env });
    expect(reindex.json).toMatchObject({ bm25: { docs: 4 }, vectors: { model: 'test:hash', embedded: 4, remaining: 0, scope: 'stale' } });
    const status = await cli(['model', 'status'], { home, env });
    expect(status.json).toMatchObject({ embedder: { kind: 'test', model: 'test:hash' }, vector_spaces: [{ model: 'test:hash', dim: 64, vectors: 4, pending: 0 }] });
  });

  it.skipIf(!hasModels('ctx-use-256'))('a real process finds a paraphrase with a real local model (ENGRAM_MODEL_DIR + ENGRAM_MODEL)', () => {
    const home = tempDir();
    const file = join(home, 'lessons.jsonl');
    writeFileSync(file, jsonl(LESSONS));
    const env = { ENGRAM_MODEL_DIR: MODELS_DIR, ENGRAM_MODEL: 'ctx-use-256' };
    const run = (args: string[]) => engramProcess(args, { home, env });
    expect(run(['import', file]).status).toBe(0);
    // The distilled model ranks the paraphrase first but with a cosine far below what counts as sure, and no word
    // is shared: the abstain rule calls it weak; --no-abstain shows the ranking.
    const result = run(['search', 'image layers are not reused between pipeline runs', '--mode', 'vector', '--no-abstain']);
    expect(result.status).toBe(0);
    const response = JSON.parse(result.stdout);
    expect(response.model).toBe('transformers:ctx-use-256');
    expect(response.results[0].id).toBe(4);
    expect(response.weak).toMatch(/covers 0 % of the query's weight/);
    expect(result.stderr).toBe('');
    expect(JSON.parse(run(['search', 'image layers are not reused between pipeline runs', '--mode', 'vector']).stdout)).toMatchObject({ abstained: 'weak-match', results: [] });
  });
});

/** The recorded figures of the shipped labelled set (see its `about`). */
const BASELINE_FILE = join(ROOT, 'test', 'e2e', 'retrieval-baseline.json');
const METRICS = ['recall@k', 'hit@k', 'mrr'] as const;

describe('engram bench retrieval', () => {
  it('scores the shipped labelled set in every mode, as well as the recorded baseline, without touching the user store', async () => {
    const baseline = JSON.parse(readFileSync(BASELINE_FILE, 'utf8')) as {
      tolerance: number;
      k: number;
      sets: Record<string, Record<string, Record<(typeof METRICS)[number], number>>>;
    };
    const home = tempDir();
    const measured: typeof baseline.sets = {};
    for (const set of Object.keys(baseline.sets)) {
      const result = await cli(
        ['bench', 'retrieval', '--memories', join(ROOT, 'fixtures/eval/memories.jsonl'), '--queries', join(ROOT, 'fixtures/eval', set), '--k', String(baseline.k)],
        { home, env: { ENGRAM_EMBEDDER: 'test' } },
      );
      expect(result.code).toBe(0);
      const reports = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
      expect(reports.map((r) => r.mode)).toEqual(['bm25', 'vector', 'hybrid']);
      for (const report of reports) {
        expect(Object.keys(report)).toEqual(['mode', 'model', 'k', 'n', 'recall@k', 'hit@k', 'mrr', 'p50_ms', 'p95_ms', 'embed_p50_ms', 'no_answer', 'by_kind', 'degraded']);
        expect(report.n).toBeGreaterThan(50);
        expect(report.by_kind.lexical.n).toBeGreaterThan(10);
      }
      expect(reports[0].model).toBeNull();
      expect(reports[1].model).toBe('test:hash');
      measured[set] = Object.fromEntries(reports.map((r) => [r.mode, Object.fromEntries(METRICS.map((m) => [m, r[m]]))]));
    }
    if (process.env.RECORD_BASELINE === '1') {
      writeFileSync(BASELINE_FILE, `${JSON.stringify({ ...baseline, sets: measured }, null, 2)}\n`);
      return;
    }
    // Every figure within the tolerance of its baseline: lower is a regression; higher is an improvement to record.
    const off = Object.entries(measured).flatMap(([set, modes]) =>
      Object.entries(modes).flatMap(([mode, figures]) =>
        METRICS.filter((m) => Math.abs(figures[m] - (baseline.sets[set]?.[mode]?.[m] ?? Number.NaN)) > baseline.tolerance || Number.isNaN(baseline.sets[set]?.[mode]?.[m])).map(
          (m) => `${set} ${mode} ${m}: ${figures[m]} (baseline ${baseline.sets[set]?.[mode]?.[m]})`,
        ),
      ),
    );
    expect(off, `outside ±${baseline.tolerance} of ${BASELINE_FILE} (an improvement: RECORD_BASELINE=1 npx vitest run test/e2e/search.test.ts)`).toEqual([]);
    // Nothing was written to the user's store.
    const status = await cli(['status'], { home });
    expect(status.json.engrams.total).toBe(0);
  }, 60_000);
});
