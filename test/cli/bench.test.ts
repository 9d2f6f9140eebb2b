import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, hasModels, MODELS_DIR, tempDir } from '../_helpers.js';

const SET = join(import.meta.dirname, '../../fixtures/eval-lessons');

/** The hybrid line of `engram bench retrieval` (one JSON line per mode; --mode hybrid prints one). */
async function hybrid(args: string[]): Promise<Record<string, unknown>> {
  const home = tempDir();
  // A real model: the hash embedder's vectors move no lesson in or out of a top 10, warm or cold.
  const env = { ENGRAM_EMBEDDER: 'transformers', ENGRAM_MODEL: 'ctx-use-256', ENGRAM_MODEL_DIR: MODELS_DIR };
  const result = await cli(['bench', 'retrieval', '--mode', 'hybrid', ...args], { home, env });
  expect(result.code, result.stderr).toBe(0);
  return result.json as Record<string, unknown>;
}

describe('engram bench retrieval', () => {
  it.skipIf(!hasModels('ctx-use-256'))('--set with --split test searches the set\'s dev queries first, unscored, as docs/SEARCH.md\'s tables ran', async () => {
    const bySet = await hybrid(['--set', 'lessons', '--split', 'test']);
    const files = ['--memories', join(SET, 'memories.jsonl'), '--queries', join(SET, 'queries-test.jsonl')];
    const warmed = await hybrid([...files, '--warm-up', join(SET, 'queries-dev.jsonl')]);
    const cold = await hybrid(files);
    const empty = join(tempDir(), 'none.jsonl');
    writeFileSync(empty, '');
    const { p50_ms: _a, p95_ms: _b, embed_p50_ms: _c, ...scores } = bySet;
    expect(warmed).toMatchObject(scores);
    expect(await hybrid([...files, '--warm-up', empty])).toMatchObject({ 'recall@k': cold['recall@k'], mrr: cold.mrr });
    // The set's 119 test queries, scored; the dev ones were searched and counted nowhere.
    expect(bySet).toMatchObject({ mode: 'hybrid', model: 'transformers:ctx-use-256', n: 101, no_answer: { n: 18 } });
    expect([cold['recall@k'], cold.mrr]).not.toEqual([bySet['recall@k'], bySet.mrr]);
  }, 120_000);
});
