// Fits src/services/recall/ranker-weights.json on the DEV splits only (tuningQueryFile refuses test): collects every
// dev query's candidate and query signals from the real engine per set × embedder × mode, then fits the candidate
// and abstain models (services/recall/train.ts) and writes the weights with the fit's own numbers. bench/train-ranker.mjs
// bundles and runs it. Collected signals are cached in node_modules/.cache/engram-train (--fresh recollects).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadSettings, readEnv, type EmbedderChoice } from '../src/core/index.js';
import { EVAL_SET_NAMES, evalSetFiles, runRetrievalBench, searchTuning, tuningQueryFile, type EvalSetName, type SearchMode } from '../src/services/index.js';
import { trainRanker, type TrainingQuery } from '../src/services/recall/train.js';

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
const out = option('--out', join(root, 'src', 'services', 'recall', 'ranker-weights.json'));
const l2 = Number(option('--l2', '1'));
const keep = Number(option('--keep', '0.9'));
const cacheDir = join(root, 'node_modules', '.cache', 'engram-train');
mkdirSync(cacheDir, { recursive: true });

function choiceOf(name: string): EmbedderChoice | null {
  if (name === 'none') return null;
  if (name === 'use-lite') return { spec: { kind: 'use-lite', model: 'use-lite' }, reason: 'train' };
  return { spec: { kind: 'transformers', model: name, modelDir, folder: join(modelDir, name), quantized: true }, reason: 'train' };
}

/** Every dev query of one set, searched in the given modes with signals, labelled from the set's answers. */
async function collect(set: EvalSetName, embedder: string, modes: SearchMode[]): Promise<TrainingQuery[]> {
  const cache = join(cacheDir, `${set}-${embedder}-${modes.join('+')}.json`);
  if (existsSync(cache) && !args.includes('--fresh')) return JSON.parse(readFileSync(cache, 'utf8')) as TrainingQuery[];
  const queries: TrainingQuery[] = [];
  await runRetrievalBench({
    memories: readFileSync(evalSetFiles(root, set, 'dev').memories, 'utf8').split('\n'),
    queries: readFileSync(tuningQueryFile(root, set), 'utf8').split('\n'),
    k: 10,
    modes,
    embedder: choiceOf(embedder),
    tuning: searchTuning(loadSettings(readEnv()).config),
    // Both lists for every query: the decisive-BM25 shortcut would hide the vectors the hybrid model must see.
    engine: { skipDecisive: false },
    search: { abstain: false, signals: true },
    inspect(query, response, memoryIdsOf, mode) {
      if (!response.signals) return;
      const relevant = new Set(query.relevant);
      queries.push({
        cell: mode === 'bm25' ? set : `${set}|${embedder}`,
        set,
        mode: response.signals.model,
        q: query.q,
        answers: relevant.size,
        query: response.signals.query,
        candidates: response.signals.candidates.map(({ probability: _p, ...signals }) => ({
          ...signals,
          gain: relevant.size === 0 ? 0 : memoryIdsOf(signals.id).filter((id) => relevant.has(id)).length / relevant.size,
        })),
      });
    },
  });
  writeFileSync(cache, JSON.stringify(queries));
  return queries;
}

const collected: TrainingQuery[] = [];
for (const set of sets) {
  collected.push(...(await collect(set, 'none', ['bm25'])));
  for (const embedder of embedders) collected.push(...(await collect(set, embedder, ['vector', 'hybrid'])));
  console.error(`collected ${set}`);
}
const report = trainRanker(collected, { l2, keep });
writeFileSync(out, `${JSON.stringify(report.weights, null, 1)}\n`);

const pct = (v: number): string => `${Math.round(v * 100)} %`;
const lines = [
  `weights written to ${out}`,
  '',
  '| mode | cell | n | recall@10 fit | recall@10 cv | MRR fit | MRR cv |',
  '|---|---|---|---|---|---|---|',
  ...report.retrieval.map((r) => `| ${r.mode} | ${r.cell} | ${r.n} | ${r.fit.recall.toFixed(3)} | ${r.cv.recall.toFixed(3)} | ${r.fit.mrr.toFixed(3)} | ${r.cv.mrr.toFixed(3)} |`),
  '',
  '| mode | cell | silence on unanswerable (cv) | recall@3 kept (cv) |',
  '|---|---|---|---|',
  ...report.abstain.map((a) => `| ${a.mode} | ${a.cell} | ${pct(a.silence)} | ${pct(a.kept)} |`),
  '',
  `hit model, area under the ROC curve among the first three results (fit / cv): ${(['hybrid', 'bm25', 'vector'] as const).map((mode) => `${mode} ${report.hits[mode].auc.fit} / ${report.hits[mode].auc.cv}`).join(', ')}`,
  '',
  ...(['hybrid', 'bm25', 'vector'] as const).flatMap((mode) => [
    `${mode} abstain threshold ${report.thresholds[mode]}; trade-off (cv: threshold → silence worst/mean, kept worst/mean):`,
    report.curves[mode]
      .filter((p) => Math.round(p.threshold * 100) % 5 === 0)
      .map((p) => `${p.threshold.toFixed(2)} → ${pct(p.silence.worst)}/${pct(p.silence.mean)}, ${pct(p.kept.worst)}/${pct(p.kept.mean)}`)
      .join('; '),
  ]),
];
console.log(lines.join('\n'));
if (args.includes('--json')) writeFileSync(option('--json', ''), JSON.stringify(report, null, 1));
