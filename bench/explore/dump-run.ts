// EXPLORATION ONLY (not committed): raw materials per set × split × embedder for offline ranker experiments.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { embeddingText, loadEmbedder, loadSettings, readEnv, type EmbedderChoice } from '../../src/core/index.js';
import { EVAL_SET_NAMES, evalSetFiles, runRetrievalBench, searchTuning, TUNING, type EvalSetName, type EvalSplit } from '../../src/services/index.js';
import { searchTerms } from '../../src/services/recall/text.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => { const i = args.indexOf(name); return i >= 0 ? (args[i + 1] as string) : fallback; };
const root = option('--root', process.cwd());
const sets = option('--sets', EVAL_SET_NAMES.join(',')).split(',') as EvalSetName[];
const split = option('--split', 'dev') as EvalSplit;
const embedders = option('--embedders', 'use-lite,ctx-use-256,static-use-256').split(',');
const modelDir = resolve(join(root, '..', 'shared', 'models'));
const outDir = option('--out', '/tmp/s2/dump');
mkdirSync(outDir, { recursive: true });
function choiceOf(name: string): EmbedderChoice {
  if (name === 'use-lite') return { spec: { kind: 'use-lite', model: 'use-lite' }, reason: 'x' };
  return { spec: { kind: 'transformers', model: name, modelDir, folder: join(modelDir, name), quantized: true }, reason: 'x' };
}
(TUNING as { pool: number }).pool = 1000;
(TUNING as any).vectorFloor = { transformers: -1, 'use-lite': -1, test: -1 };
for (const embedder of embedders) {
  const model = await loadEmbedder(choiceOf(embedder).spec!);
  for (const set of sets) {
    const files = evalSetFiles(root, set, split);
    const engrams = new Map<number, { mids: string[]; text: string; project: string | null; terms: string[] }>();
    const queries = new Map<string, any>();
    await runRetrievalBench({
      memories: readFileSync(files.memories, 'utf8').split('\n'),
      queries: readFileSync(files.queries, 'utf8').split('\n'),
      k: 1000, modes: ['bm25', 'vector'], embedder: choiceOf(embedder),
      tuning: searchTuning(loadSettings(readEnv()).config), search: { abstain: false },
      inspect(query, response, ids, mode) {
        const e = queries.get(query.q) ?? { q: query.q, relevant: query.relevant, group: query.group ?? null, event: query.event ?? null, hook_query: query.hook_query ?? null, bm25: [], vector: [] };
        queries.set(query.q, e);
        for (const hit of response.results) if (!engrams.has(hit.id)) {
          const g = hit.engram;
          engrams.set(hit.id, { mids: [...ids(hit.id)], text: g.text, project: g.project, terms: [...new Set(searchTerms(`${g.title ?? ''} ${g.text} ${g.category} ${g.tags.join(' ')}`))] });
        }
        const list = response.results.map((h) => [h.id, mode === 'bm25' ? h.signals.bm25 : h.signals.vector]);
        if (mode === 'bm25') e.bm25 = list; else e.vector = list;
      },
    });
    const ids = [...engrams.keys()];
    const vecs: number[][] = [];
    for (let i = 0; i < ids.length; i += 32) {
      const out = await model.embed(ids.slice(i, i + 32).map((id) => embeddingText(engrams.get(id)!.text)));
      for (const v of out) vecs.push(Array.from(v, (x) => Math.round(x * 1e5) / 1e5));
    }
    const qs = [...queries.values()];
    for (const q of qs) q.terms = [...new Set(searchTerms(q.q))];
    writeFileSync(join(outDir, `${embedder}-${set}-${split}.json`), JSON.stringify({ engrams: ids.map((id, i) => ({ id, ...engrams.get(id), vec: vecs[i] })), queries: qs }));
    console.error(`${embedder} ${set} ${split}: ${ids.length} engrams, ${qs.length} queries`);
  }
}
