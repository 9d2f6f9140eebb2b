// Fusion tuning on the DEV splits only: collects each query's BM25 and vector lists once per set and embedder
// (cached), then scores fusion settings on them. bench/tune.mjs bundles and runs it. The test splits are refused in
// code (services/recall tuningQueryFile): numbers reported on them were never seen while choosing.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadSettings, readEnv, type EmbedderChoice } from '../src/core/index.js';
import { EVAL_SET_NAMES, evalSetFiles, runRetrievalBench, searchTuning, TUNING, tuningQueryFile, type EvalSetName } from '../src/services/index.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 ? (args[index + 1] as string) : fallback;
};
const root = option('--root', process.cwd());
// Refused before anything is read: `--split test` is a mistake, not a request.
const split = option('--split', 'dev');
const sets = option('--sets', EVAL_SET_NAMES.join(',')).split(',') as EvalSetName[];
for (const set of sets) tuningQueryFile(root, set, split);
const embedders = option('--embedders', 'use-lite,ctx-use-256,static-use-256').split(',');
const modelDir = resolve(option('--model-dir', join(root, '..', 'shared', 'models')));
const cacheDir = join(root, 'node_modules', '.cache', 'engram-tune');
mkdirSync(cacheDir, { recursive: true });

export interface ListEntry {
  ids: string[];
  score: number;
}
export interface QueryLists {
  q: string;
  relevant: string[];
  bm25: ListEntry[];
  vector: ListEntry[];
}

function choiceOf(name: string): EmbedderChoice {
  if (name === 'use-lite') return { spec: { kind: 'use-lite', model: 'use-lite' }, reason: 'tune' };
  return { spec: { kind: 'transformers', model: name, modelDir, folder: join(modelDir, name), quantized: true }, reason: 'tune' };
}

/** Each dev query's two ranked lists (top 50 after gates), from the real search engine. */
export async function collect(set: EvalSetName, embedder: string): Promise<QueryLists[]> {
  // Every memory's score, not just the top of each list: fusion settings that look up a signal for the other
  // list's candidates can be scored too. (The sets hold at most a few hundred memories.)
  (TUNING as { pool: number }).pool = 1_000;
  const cache = join(cacheDir, `${embedder}-${set}.json`);
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')) as QueryLists[];
  const byQuery = new Map<string, QueryLists>();
  await runRetrievalBench({
    memories: readFileSync(evalSetFiles(root, set, 'dev').memories, 'utf8').split('\n'),
    queries: readFileSync(tuningQueryFile(root, set), 'utf8').split('\n'),
    k: 1_000,
    modes: ['bm25', 'vector'],
    embedder: choiceOf(embedder),
    tuning: searchTuning(loadSettings(readEnv()).config),
    search: { abstain: false },
    inspect(query, response, memoryIdsOf, mode) {
      const entry = byQuery.get(query.q) ?? { q: query.q, relevant: query.relevant, bm25: [], vector: [] };
      byQuery.set(query.q, entry);
      const list = response.results.map((hit) => ({
        ids: [...memoryIdsOf(hit.id)],
        score: (mode === 'bm25' ? hit.signals.bm25 : hit.signals.vector) ?? 0,
      }));
      if (mode === 'bm25') entry.bm25 = list;
      else entry.vector = list;
    },
  });
  const lists = [...byQuery.values()];
  writeFileSync(cache, JSON.stringify(lists));
  return lists;
}

const out: Record<string, QueryLists[]> = {};
for (const embedder of embedders) for (const set of sets) out[`${embedder}|${set}`] = await collect(set, embedder);
writeFileSync(join(cacheDir, 'lists.json'), JSON.stringify(out));
console.log(`dev lists for ${Object.keys(out).length} set × embedder pairs in ${join(cacheDir, 'lists.json')}`);
