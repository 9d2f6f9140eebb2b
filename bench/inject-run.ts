// What hooks would inject for the labelled queries: the retrieval bench's searches (abstain rule on, as in hooks),
// then the hooks' relevance rule (services/inject). Bundled and run by bench/inject.mjs. Prints a table and JSON;
// asserts nothing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSettings, readEnv, type EmbedderChoice } from '../src/core/index.js';
import {
  chooseHits,
  evalSetFiles,
  INJECT,
  runRetrievalBench,
  searchTuning,
  tuningQueryFile,
  type SearchResponse,
  type SearchMode,
} from '../src/services/index.js';
import { evalOptions } from './_eval-args.js';

const { args, option, root, sets, splits, embedders, modelDir } = evalOptions();


function choiceOf(name: string): EmbedderChoice {
  if (name === 'none') return { spec: null, reason: 'bench: BM25 only' };
  if (name === 'use-lite') return { spec: { kind: 'use-lite', model: 'use-lite' }, reason: 'bench' };
  return { spec: { kind: 'transformers', model: name, modelDir, folder: join(modelDir, name), quantized: true }, reason: 'bench' };
}
const kindOf = (name: string): string | null => (name === 'none' ? null : name === 'use-lite' ? 'use-lite' : 'transformers');

interface Tally {
  answerable: number;
  injectedSome: number;
  relevantInjected: number;
  injected: number;
  unanswerable: number;
  silent: number;
}
const pct = (a: number, b: number): string => (b === 0 ? '-' : `${((100 * a) / b).toFixed(1)} %`);
// --sweep: the hooks' thresholds over a grid, on the dev splits only (tuningQueryFile refuses test).
const sweep = args.includes('--sweep');
const seen: Array<{ set: string; query: { q: string; relevant: string[]; event?: string; hook_query?: string }; response: SearchResponse; ids: (id: number) => readonly string[] }> = [];
const rows: Array<Record<string, string | number>> = [];
// --dump FILE: every hook-mode response with its hits (dev analysis of the relevance rule).
const dump = args.includes('--dump') ? option('--dump', '') : null;
const dumped: unknown[] = [];
const settings = loadSettings(readEnv());

for (const embedder of embedders) {
  for (const set of sets) {
    for (const split of splits) {
      const files = sweep ? { memories: evalSetFiles(root, set, 'dev').memories, queries: tuningQueryFile(root, set, split) } : evalSetFiles(root, set, split);
      const tallies = new Map<string, Tally>();
      const tally = (key: string): Tally => {
        const t = tallies.get(key) ?? { answerable: 0, injectedSome: 0, relevantInjected: 0, injected: 0, unanswerable: 0, silent: 0 };
        tallies.set(key, t);
        return t;
      };
      await runRetrievalBench({
        memories: readFileSync(files.memories, 'utf8').split('\n'),
        storePerGroup: evalSetFiles(root, set, 'dev').storePerGroup,
        queries: readFileSync(files.queries, 'utf8').split('\n'),
        k: INJECT.candidates,
        modes: embedder === 'none' ? ['bm25'] : ['bm25', 'hybrid'],
        embedder: choiceOf(embedder),
        tuning: searchTuning(settings.config),
        inspect(query, response, memoryIdsOf, mode) {
          // Tool events search with BM25 alone (INJECT.toolMode); prompts with the warm server's hybrid.
          const hookMode: SearchMode = query.event && query.event !== 'UserPromptSubmit' ? INJECT.toolMode : embedder === 'none' ? 'bm25' : 'hybrid';
          const max = query.event && query.event !== 'UserPromptSubmit' ? INJECT.toolMax : INJECT.promptMax;
          if (sweep && mode === hookMode) seen.push({ set, query, response, ids: memoryIdsOf });
          if (dump && mode === hookMode) {
            dumped.push({
              set, split, embedder, q: query.q, hook_query: query.hook_query ?? null, event: query.event ?? null, relevant: query.relevant,
              abstained: response.abstained, weak: response.weak, model: response.model ? kindOf(embedder) : null,
              results: response.results.map((hit) => ({ id: hit.id, mem: [...memoryIdsOf(hit.id)], score: hit.score, ranks: hit.ranks, signals: hit.signals, title: hit.engram.title, text: hit.engram.text, category: hit.engram.category, tags: hit.engram.tags, updated_at: hit.engram.updated_at, created_at: hit.engram.created_at })),
            });
          }
          // Hooks search with the abstain rule on; the bench asks for the ranking anyway, and `weak` says the rule
          // would have stayed silent (the hook then injects nothing).
          const chosen = response.abstained || response.weak
            ? []
            : chooseHits(response.results, query.hook_query ?? query.q, {
                max,
                alreadyShown: new Set(),
                embedderKind: response.model ? kindOf(embedder) : null,
                keywordMargin: Boolean(query.event && query.event !== 'UserPromptSubmit') && mode === 'bm25',
                promptWinner: !query.event || query.event === 'UserPromptSubmit',
                hybrid: mode === 'hybrid',
              });
          for (const key of [mode, ...(mode === hookMode ? ['as hooks run'] : [])]) {
            const t = tally(key);
            if (query.relevant.length === 0) {
              t.unanswerable++;
              if (chosen.length === 0) t.silent++;
              continue;
            }
            t.answerable++;
            const relevant = new Set(query.relevant);
            const good = chosen.filter((c) => memoryIdsOf(c.hit.id).some((id) => relevant.has(id))).length;
            t.injected += chosen.length;
            t.relevantInjected += good;
            if (good > 0) t.injectedSome++;
          }
        },
      });
      for (const [mode, t] of tallies) {
        rows.push({
          set,
          split,
          embedder,
          mode,
          answerable: t.answerable,
          'relevant injected': pct(t.injectedSome, t.answerable),
          precision: pct(t.relevantInjected, t.injected),
          'per answerable': (t.injected / Math.max(1, t.answerable)).toFixed(2),
          unanswerable: t.unanswerable,
          'silent on unanswerable': pct(t.silent, t.unanswerable),
        });
      }
    }
  }
}
console.log(
  [
    '| set | split | embedder | mode | relevant injected | precision | injected per answerable | silent on unanswerable |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.set} | ${r.split} | ${r.embedder} | ${r.mode} | ${r['relevant injected']} | ${r.precision} | ${r['per answerable']} | ${r['silent on unanswerable']} |`),
  ].join('\n'),
);
if (args.includes('--json')) console.log(JSON.stringify(rows));
if (dump) (await import('node:fs')).writeFileSync(dump, JSON.stringify(dumped));

if (sweep) {
  const tunable = INJECT as unknown as { relativeScore: number; promptMax: number; lexical: Record<string, number> };
  const out: string[] = [];
  for (const max of [1, 2, 3]) for (const rel of [0, 0.6, 0.75, 0.9]) for (const cov of [0.5, 0.67]) {
    Object.assign(tunable, { relativeScore: rel });
    tunable.lexical.minCoverage = cov;
    const per: string[] = [];
    let worstRecall = 1, worstPrecision = 1;
    for (const set of sets) {
      let ans = 0, some = 0, inj = 0, good = 0, un = 0, silent = 0;
      for (const { set: s2, query, response, ids } of seen) {
        if (s2 !== set) continue;
        const tool = query.event && query.event !== 'UserPromptSubmit';
        const chosen = response.abstained || response.weak ? [] : chooseHits(response.results, query.hook_query ?? query.q, { max: tool ? Math.min(max, INJECT.toolMax) : max, alreadyShown: new Set(), embedderKind: response.model ? kindOf(embedders[0] as string) : null });
        if (query.relevant.length === 0) { un++; if (chosen.length === 0) silent++; continue; }
        ans++;
        const rel = new Set(query.relevant);
        const g = chosen.filter((c) => ids(c.hit.id).some((id) => rel.has(id))).length;
        inj += chosen.length; good += g; if (g > 0) some++;
      }
      worstRecall = Math.min(worstRecall, some / ans);
      worstPrecision = Math.min(worstPrecision, good / Math.max(1, inj));
      per.push(`${set} ${(100 * some / ans).toFixed(0)}%/${(100 * good / Math.max(1, inj)).toFixed(0)}%/${(100 * silent / Math.max(1, un)).toFixed(0)}%`);
    }
    out.push(`max ${max} rel ${rel} cov ${cov}: worst injected ${(100 * worstRecall).toFixed(0)}% worst precision ${(100 * worstPrecision).toFixed(0)}% | ${per.join(' | ')}`);
  }
  console.log(out.join('\n'));
}
