// Retrieval quality on every evaluation set × split × mode × embedder; bench/quality.mjs bundles and runs it.
// Prints a Markdown table (the one docs/SEARCH.md and the closing note carry) and, with --json FILE, every row as
// JSON. Asserts nothing.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSettings, readEnv, type EmbedderChoice } from '../src/core/index.js';
import {
  evalSetFiles,
  runRetrievalBench,
  searchTuning,
  type EvalSplit,
  type SearchMode,
} from '../src/services/index.js';
import { marginInterval } from './_bootstrap.js';
import { evalOptions } from './_eval-args.js';

const { option, root, sets, splits, embedders, modelDir } = evalOptions();

const json = option('--json', '');
const MODES: SearchMode[] = ['bm25', 'vector', 'hybrid'];
const K = 10;

function choiceOf(name: string): EmbedderChoice {
  if (name === 'use-lite') return { spec: { kind: 'use-lite', model: 'use-lite' }, reason: 'bench' };
  return { spec: { kind: 'transformers', model: name, modelDir, folder: join(modelDir, name), quantized: true }, reason: 'bench' };
}

interface Row {
  set: string;
  split: EvalSplit;
  embedder: string;
  mode: SearchMode;
  answerable: number;
  unanswerable: number;
  'recall@10': number;
  mrr: number;
  'recall@3': number;
  /** Answerable recall@3 once the abstain rule has silenced what it doubts, as a share of recall@3 without it. */
  'recall@3 kept': number;
  /** Share of unanswerable queries the search stayed silent on. */
  abstain: number;
  p50_ms: number;
}

const round = (value: number): number => Math.round(value * 1000) / 1000;
// Unrounded recall@10 per set|split|embedder|mode: the verdict below must not pass a margin that only rounding
// lifts to 0.01 (one query of 101 is 0.0099).
const exactRecall = new Map<string, number>();
// Per-query recall@10 by set|split|embedder|mode, keyed by the query's group and text: the paired bootstrap below.
const queryRecall = new Map<string, Map<string, number>>();
const rows: Row[] = [];
const settings = loadSettings(readEnv());
const tuning = searchTuning(settings.config);

for (const embedder of embedders) {
  for (const set of sets) {
    const memories = readFileSync(evalSetFiles(root, set, 'dev').memories, 'utf8').split('\n');
    // Dev before test whatever the order asked: the engine's state moves with its searches (the store's vector
    // reliability), and the tables were made with the test queries searched after the dev ones. A run without dev
    // searches the dev queries first anyway, unscored (`warmUp`), so `--splits test` reproduces those rows.
    const linesOf = (split: EvalSplit): string[] =>
      readFileSync(evalSetFiles(root, set, split).queries, 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '');
    const queries = (['dev', 'test'] as const).filter((split) => splits.includes(split)).flatMap((split) => linesOf(split).map((line) => ({ split, line })));
    const splitOf = new Map(queries.map(({ split, line }) => [(JSON.parse(line) as { q: string }).q, split]));
    const tallies = new Map<string, { n: number; un: number; recall: number; rr: number; r3: number; r3kept: number; silent: number; ms: number[] }>();
    const started = performance.now();
    await runRetrievalBench({
      memories,
      storePerGroup: evalSetFiles(root, set, 'dev').storePerGroup,
      queries: queries.map(({ line }) => line),
      ...(splits.includes('dev') ? {} : { warmUp: linesOf('dev') }),
      k: K,
      modes: MODES,
      embedder: choiceOf(embedder),
      tuning,
      search: { abstain: false },
      inspect(query, response, memoryIdsOf, mode) {
        const key = `${splitOf.get(query.q)}|${mode}`;
        const t = tallies.get(key) ?? { n: 0, un: 0, recall: 0, rr: 0, r3: 0, r3kept: 0, silent: 0, ms: [] };
        tallies.set(key, t);
        t.ms.push(response.timings.total_ms);
        // `weak` says the abstain rule would have silenced this answer (the bench asked for the ranking anyway).
        const silent = response.abstained !== null || response.results.length === 0 || (response.weak ?? null) !== null;
        if (query.relevant.length === 0) {
          t.un++;
          if (silent) t.silent++;
          return;
        }
        t.n++;
        const relevant = new Set(query.relevant);
        const found = (top: number): number =>
          new Set(response.results.slice(0, top).flatMap((hit) => memoryIdsOf(hit.id).filter((id) => relevant.has(id)))).size / relevant.size;
        const recall = found(K);
        t.recall += recall;
        const cell = `${set}|${splitOf.get(query.q)}|${embedder}|${mode}`;
        const perQuery = queryRecall.get(cell) ?? new Map<string, number>();
        queryRecall.set(cell, perQuery);
        perQuery.set(`${query.group ?? ''}\u0000${query.q}`, recall);
        const r3 = found(3);
        t.r3 += r3;
        if (!silent) t.r3kept += r3;
        const first = response.results.findIndex((hit) => memoryIdsOf(hit.id).some((id) => relevant.has(id)));
        if (first >= 0 && first < K) t.rr += 1 / (first + 1);
      },
    });
    for (const split of splits) {
      for (const mode of MODES) {
        const t = tallies.get(`${split}|${mode}`);
        if (!t) continue;
        const sorted = [...t.ms].sort((a, b) => a - b);
        exactRecall.set(`${set}|${split}|${embedder}|${mode}`, t.recall / t.n);
        rows.push({
          set,
          split,
          embedder,
          mode,
          answerable: t.n,
          unanswerable: t.un,
          'recall@10': round(t.recall / t.n),
          mrr: round(t.rr / t.n),
          'recall@3': round(t.r3 / t.n),
          'recall@3 kept': t.r3 === 0 ? 1 : round(t.r3kept / t.r3),
          abstain: t.un === 0 ? 0 : round(t.silent / t.un),
          p50_ms: round(sorted[Math.floor(sorted.length / 2)] ?? 0),
        });
      }
    }
    console.error(`${embedder} ${set}: ${Math.round(performance.now() - started)} ms`);
  }
}

const lines = [
  '| set | split | embedder | mode | n (+none) | recall@10 | MRR | abstain | recall@3 kept |',
  '|---|---|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.set} | ${r.split} | ${r.embedder} | ${r.mode} | ${r.answerable} (+${r.unanswerable}) | ${r['recall@10'].toFixed(3)} | ${r.mrr.toFixed(3)} | ${(100 * r.abstain).toFixed(0)} % | ${(100 * r['recall@3 kept']).toFixed(0)} % |`,
  ),
];
console.log(lines.join('\n'));
// Does hybrid beat the best single signal by 0.01 everywhere?
const verdicts = rows
  .filter((r) => r.mode === 'hybrid')
  .map((h) => {
    const exact = (mode: string): number => exactRecall.get(`${h.set}|${h.split}|${h.embedder}|${mode}`) ?? 0;
    const best = Math.max(...MODES.filter((m) => m !== 'hybrid' && exactRecall.has(`${h.set}|${h.split}|${h.embedder}|${m}`)).map(exact));
    return { set: h.set, split: h.split, embedder: h.embedder, margin: exact('hybrid') - best };
  });
console.log(`\nhybrid minus best single signal (recall@10, unrounded): ${verdicts.map((v) => `${v.set}/${v.split}/${v.embedder} ${v.margin >= 0 ? '+' : ''}${v.margin.toFixed(4)}`).join(', ')}`);
// The same margins with a 95 % paired bootstrap interval over the cell's answerable queries (bench/_bootstrap.ts).
const intervals = verdicts.map((v) => {
  const cell = `${v.set}|${v.split}|${v.embedder}`;
  const hybrid = queryRecall.get(`${cell}|hybrid`) ?? new Map<string, number>();
  const keys = [...hybrid.keys()];
  const singles = MODES.filter((m) => m !== 'hybrid' && queryRecall.has(`${cell}|${m}`)).map((m) => {
    const perQuery = queryRecall.get(`${cell}|${m}`) ?? new Map<string, number>();
    return keys.map((key) => perQuery.get(key) ?? 0);
  });
  const interval = marginInterval({ hybrid: keys.map((key) => hybrid.get(key) ?? 0), singles }, cell);
  return `${v.set}/${v.split}/${v.embedder} ${interval.low >= 0 ? '+' : ''}${interval.low.toFixed(4)} … ${interval.high >= 0 ? '+' : ''}${interval.high.toFixed(4)}`;
});
console.log(`95 % paired bootstrap interval of that margin over each cell's answerable queries (2,000 resamples): ${intervals.join(', ')}`);
const short = verdicts.filter((v) => v.margin < 0.01 - 1e-9);
console.log(`hybrid ≥ best + 0.01 everywhere: ${short.length === 0 ? 'yes' : `no (${verdicts.length - short.length} of ${verdicts.length} cells)`}`);
if (json) writeFileSync(json, `${JSON.stringify(rows, null, 1)}\n`);
