// What hooks would inject for the labelled queries: the retrieval bench's searches, then the hooks' relevance rule
// (services/inject). Bundled and run by bench/inject.mjs. Prints a table and JSON; asserts nothing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveEmbedder, loadSettings, readEnv } from '../src/core/index.js';
import { chooseHits, INJECT, runRetrievalBench, searchTuning, type SearchMode } from '../src/services/index.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 ? (args[index + 1] as string) : fallback;
};
const root = option('--root', process.cwd());
const split = option('--split', 'dev');
const lines = (file: string): string[] => readFileSync(join(root, 'fixtures', 'eval', file), 'utf8').split('\n');
const settings = loadSettings(readEnv());
const choice = resolveEmbedder(settings);

interface Tally {
  answerable: number;
  injectedSome: number;
  relevantInjected: number;
  injected: number;
  unanswerable: number;
  abstained: number;
}
const tallies = new Map<SearchMode, Tally>();
const seen: Array<{ query: { q: string; relevant: string[] }; response: any; ids: (id: number) => readonly string[]; mode: SearchMode }> = [];

await runRetrievalBench({
  memories: lines('memories.jsonl'),
  queries: lines(`queries-${split}.jsonl`),
  k: INJECT.candidates,
  modes: choice.spec ? ['bm25', 'hybrid'] : ['bm25'],
  embedder: choice,
  tuning: searchTuning(settings.config),
  inspect(query, response, memoryIdsOf, mode) {
    seen.push({ query, response, ids: memoryIdsOf, mode });
    const tally = tallies.get(mode) ?? { answerable: 0, injectedSome: 0, relevantInjected: 0, injected: 0, unanswerable: 0, abstained: 0 };
    tallies.set(mode, tally);
    const chosen = response.abstained
      ? []
      : chooseHits(response.results, query.q, { max: INJECT.promptMax, alreadyShown: new Set(), embedderKind: response.model ? (choice.spec?.kind ?? null) : null });
    if (query.relevant.length === 0) {
      tally.unanswerable++;
      if (chosen.length === 0) tally.abstained++;
      return;
    }
    tally.answerable++;
    const relevant = new Set(query.relevant);
    const good = chosen.filter((c) => memoryIdsOf(c.hit.id).some((id) => relevant.has(id))).length;
    tally.injected += chosen.length;
    tally.relevantInjected += good;
    if (good > 0) tally.injectedSome++;
  },
});

const pct = (a: number, b: number): string => (b === 0 ? '-' : `${((100 * a) / b).toFixed(1)}%`);
const rows = [...tallies].map(([mode, t]) => ({
  split,
  mode,
  model: mode === 'bm25' ? null : (choice.spec?.model ?? null),
  answerable: t.answerable,
  'relevant injected (recall@3)': pct(t.injectedSome, t.answerable),
  'precision of injected': pct(t.relevantInjected, t.injected),
  'injected per answerable query': (t.injected / Math.max(1, t.answerable)).toFixed(2),
  unanswerable: t.unanswerable,
  'abstained on unanswerable': pct(t.abstained, t.unanswerable),
}));
console.table(rows);
console.log(JSON.stringify(rows));

if (args.includes('--sweep')) {
  const tunable = INJECT as unknown as { lexical: Record<string, number>; similarity: Record<string, number> };
  const kind = choice.spec?.kind ?? 'none';
  const out: string[] = [];
  for (const minMatched of [2, 3]) for (const minCoverage of [0.34, 0.5]) for (const strongMatched of [3, 4]) for (const sim of [0.4, 0.5, 0.6, 0.7, 9]) {
    Object.assign(tunable.lexical, { minMatched, minCoverage, strongMatched });
    tunable.similarity[kind] = sim;
    for (const mode of ['bm25', 'hybrid'] as SearchMode[]) {
      if (mode === 'bm25' && sim !== 9) continue;
      let ans = 0, some = 0, inj = 0, good = 0, un = 0, abst = 0;
      for (const { query, response, ids, mode: m } of seen) {
        if (m !== mode) continue;
        const chosen = response.abstained ? [] : chooseHits(response.results, query.q, { max: 3, alreadyShown: new Set(), embedderKind: response.model ? kind : null });
        if (query.relevant.length === 0) { un++; if (chosen.length === 0) abst++; continue; }
        ans++;
        const rel = new Set(query.relevant);
        const g = chosen.filter((c) => ids(c.hit.id).some((id) => rel.has(id))).length;
        inj += chosen.length; good += g; if (g > 0) some++;
      }
      out.push(`${mode}\tmm=${minMatched}\tcov=${minCoverage}\tstrong=${strongMatched}\tsim=${sim}\trecall=${(some / ans).toFixed(3)}\tprec=${(good / Math.max(1, inj)).toFixed(3)}\tper=${(inj / ans).toFixed(2)}\tabstain=${(abst / un).toFixed(3)}`);
    }
  }
  console.log(out.join('\n'));
}
