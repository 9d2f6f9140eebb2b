// Dev analysis of what hooks inject: reads the responses `node bench/inject.mjs --splits dev --dump FILE` wrote and
// replays the hooks' choice (services/inject chooseHits) with variants. Dev only: the dump refuses nothing itself,
// so it checks every row's split.
import { readFileSync } from 'node:fs';
import { chooseHits, contentTerms, INJECT, relevance } from '../src/services/inject/index.js';
import { searchTerms, type SearchHit } from '../src/services/recall/index.js';

const args = process.argv.slice(2);
const file = args[args.indexOf('--dump') + 1] as string;
interface Row { set: string; split: string; embedder: string; q: string; hook_query: string | null; event: string | null; relevant: string[]; abstained: string | null; weak: string | null; model: string | null; results: Array<{ id: number; mem: string[]; score: number; ranks: SearchHit['ranks']; signals: SearchHit['signals']; title: string | null; text: string; category: string; tags: string[] }> }
const rows = JSON.parse(readFileSync(file, 'utf8')) as Row[];
if (rows.some((r) => r.split !== 'dev')) throw new Error('dev rows only');
const hitOf = (r: Row['results'][number]): SearchHit => ({ id: r.id, score: r.score, ranks: r.ranks, signals: r.signals, engram: { id: r.id, title: r.title, text: r.text, category: r.category, tags: r.tags } as never });
/** What main's hooks inject for a hybrid prompt row (the choice every round's variants are compared with). */
const shippedChoice = (hits: SearchHit[], row: Row): ReturnType<typeof chooseHits> =>
  chooseHits(hits, row.hook_query ?? row.q, { max: INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, promptWinner: true, hybrid: true });
/** The hybrid prompt rows of one set (every set with null) the weak-match rule let speak, with main's choice for each. */
function* shippedPromptRows(set: string | null): Generator<{ row: Row; hits: SearchHit[]; query: string; chosen: ReturnType<typeof chooseHits> }> {
  for (const row of rows) {
    if ((set !== null && row.set !== set) || !hybridRow(row) || row.abstained || row.weak) continue;
    const hits = row.results.map(hitOf);
    yield { row, hits, query: row.hook_query ?? row.q, chosen: shippedChoice(hits, row) };
  }
}
const verbose = args.includes('--verbose');
/** Prompts searched with a model are hybrid searches (inject.mjs dumps the mode hooks use; tool events are BM25). */
const hybridRow = (row: Row): boolean => row.model !== null && (row.event === null || row.event === 'UserPromptSubmit');

/**
 * One line per variant: for each set × embedder (the lesson set only, unless `--all`), relevant injected / precision /
 * silent on unanswerable, in %, of what `choose` picks from each dumped row.
 */
function printVariants<V extends { name: string }>(variants: readonly V[], choose: (row: Row, v: V) => Array<{ hit: SearchHit }>, pad: number): void {
  const keys = [...new Set(rows.map((r) => `${r.set}|${r.embedder}`))];
  for (const v of variants) {
    const parts: string[] = [];
    for (const key of keys) {
      let ans = 0, some = 0, inj = 0, good = 0, un = 0, silent = 0;
      for (const row of rows) {
        if (`${row.set}|${row.embedder}` !== key) continue;
        const chosen = choose(row, v);
        if (row.relevant.length === 0) { un++; if (chosen.length === 0) silent++; continue; }
        ans++;
        const rel = new Set(row.relevant);
        const g = chosen.filter((c) => (row.results.find((r) => r.id === c.hit.id)?.mem ?? []).some((m) => rel.has(m))).length;
        inj += chosen.length; good += g; if (g > 0) some++;
      }
      const [set, emb] = key.split('|') as [string, string];
      if (args.includes('--all') || set === 'lessons') parts.push(`${set.slice(0, 4)}/${emb.slice(0, 3)} ${((100 * some) / ans).toFixed(1)}/${((100 * good) / Math.max(1, inj)).toFixed(1)}/${((100 * silent) / Math.max(1, un)).toFixed(0)}`);
    }
    console.log(`${v.name.padEnd(pad)} ${parts.join(' | ')}`);
  }
}
for (const row of rows) {
  if (!verbose || row.set !== (args[args.indexOf('--verbose') + 1] ?? 'lessons') || row.embedder !== 'static-use-256') continue;
  const tool = row.event !== null && row.event !== 'UserPromptSubmit';
  const chosen = row.abstained || row.weak ? [] : chooseHits(row.results.map(hitOf), row.hook_query ?? row.q, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool });
  const rel = new Set(row.relevant);
  const good = (h: SearchHit): boolean => (row.results.find((r) => r.id === h.id)?.mem ?? []).some((m) => rel.has(m));
  const bad = chosen.filter((c) => !good(c.hit));
  if (bad.length === 0) continue;
  console.log(`\n### ${row.event ?? 'prompt'} ${JSON.stringify(row.hook_query ?? row.q).slice(0, 160)}  relevant ${row.relevant.join(',') || '(none)'}`);
  row.results.slice(0, 5).forEach((r, i) => {
    const c = chosen.find((x) => x.hit.id === r.id);
    console.log(`  ${i + 1}. ${c ? (good(hitOf(r)) ? 'INJ+' : 'INJ-') : '    '} ${r.mem.join(',')} ${rel.has(r.mem[0] as string) ? '*' : ' '} s${r.score.toFixed(3)} b${r.signals.bm25?.toFixed(2)} v${r.signals.vector} r${JSON.stringify(r.ranks)} ${c ? `m${c.relevance.matched} c${c.relevance.coverage.toFixed(2)} ${c.relevance.reason}` : ''} | ${r.text.slice(0, 110)}`);
  });
}

// Where the wrong injections come from: by hook event and by which clause of the relevance rule let them in.
if (args.includes('--breakdown')) {
  const set = args[args.indexOf('--breakdown') + 1] ?? 'lessons';
  const stats = new Map<string, [number, number]>();
  for (const row of rows) {
    if (row.set !== set) continue;
    const tool = row.event !== null && row.event !== 'UserPromptSubmit';
    const chosen = row.abstained || row.weak ? [] : chooseHits(row.results.map(hitOf), row.hook_query ?? row.q, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model });
    const rel = new Set(row.relevant);
    chosen.forEach((c, i) => {
      const good = (row.results.find((r) => r.id === c.hit.id)?.mem ?? []).some((m) => rel.has(m));
      const r = c.relevance;
      const clause = r.reason === 'semantic' ? 'semantic' : r.matched >= 4 ? 'strong' : r.matched >= 2 && r.coverage >= 0.5 ? 'm2c.5' : 'short';
      for (const key of [`${row.embedder} ${row.event ?? 'none'} pos${i + 1}`, `${row.embedder} ${clause} ${row.relevant.length ? 'ans' : 'UNANS'}`, `${row.embedder} ALL`]) {
        const s = stats.get(key) ?? [0, 0];
        s[0]++;
        if (good) s[1]++;
        stats.set(key, s);
      }
    });
  }
  for (const [k, [n, g]] of [...stats].sort()) console.log(`${k.padEnd(50)} ${g}/${n} = ${((100 * g) / n).toFixed(0)} %`);
}

// Keyed by the text, not the id: every set's store numbers its engrams from 1, so ids repeat across sets.
const termCache = new Map<string, Set<string>>();
function termsOfHit(h: SearchHit): Set<string> {
  const text = `${h.engram.title ?? ''} ${h.engram.text}`;
  let t = termCache.get(text);
  if (!t) { t = new Set(searchTerms(text)); termCache.set(text, t); }
  return t;
}
function jaccard(a: Set<string>, b: Set<string>): number {
  let n = 0;
  for (const x of a) if (b.has(x)) n++;
  return n / Math.max(1, a.size + b.size - n);
}
// Variants of the hooks' choice, scored like bench/inject.mjs (relevant injected over answerable, precision over
// what answerable queries got, silence on unanswerable), per set and embedder.
interface Variant { name: string; exemptSingle?: boolean; shipped?: boolean; toolGapMulti?: number; promptRel?: number; gapShortOnly?: boolean; dupJ?: number; promptBm25Gap?: number; toolGap?: number; promptGap?: number; gapUnlessStrong?: boolean; noShortTool?: boolean; toolMax?: number; promptMax?: number }
function chooseVariant(row: Row, v: Variant) {
  const tool = row.event !== null && row.event !== 'UserPromptSubmit';
  if (row.abstained || row.weak) return [];
  const hits = row.results.map(hitOf);
  (INJECT as unknown as { relativeScore: number }).relativeScore = !tool && v.promptRel !== undefined ? v.promptRel : 0.9;
  let chosen = chooseHits(hits, row.hook_query ?? row.q, { max: tool ? (v.toolMax ?? INJECT.toolMax) : (v.promptMax ?? INJECT.promptMax), alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool && v.shipped === true });
  if (tool && v.noShortTool) chosen = chosen.filter((c) => c.relevance.reason === 'semantic' || c.relevance.matched >= 2);
  const gap = tool ? v.toolGap : v.promptGap;
  const single = contentTerms(row.hook_query ?? row.q).size <= 1;
  if (gap !== undefined && chosen.length > 0 && hits.length > 1 && !(v.exemptSingle && single)) {
    const first = chosen[0] as (typeof chosen)[number];
    const strong = first.relevance.matched >= INJECT.lexical.strongMatched;
    const a = hits[0] as SearchHit;
    const termsA = termsOfHit(a);
    // The runner-up that is not a near-duplicate of the first (word overlap below dupJ).
    const b = (v.dupJ === undefined ? hits[1] : hits.slice(1).find((h) => jaccard(termsA, termsOfHit(h)) < (v.dupJ as number))) as SearchHit | undefined;
    if (!b) return chosen;
    const ratio = tool ? (a.signals.bm25 ?? 0) / Math.max(1e-9, b.signals.bm25 ?? 0) : a.score / Math.max(1e-9, b.score);
    const needed = first.relevance.matched >= 2 && v.toolGapMulti !== undefined && tool ? v.toolGapMulti : gap;
    if (ratio < needed && !(v.gapUnlessStrong && strong) && !(v.gapShortOnly && first.relevance.matched >= 2)) chosen = [];
  }
  return chosen;
}
if (args.includes('--variants')) {
  const variants: Variant[] = [{ name: 'before (no margin)' }, { name: 'shipped: clearKeywordWinner', shipped: true }, { name: 'no short clause on tool events', noShortTool: true }];
  for (const g of [1.05, 1.1, 1.15, 1.2, 1.3, 1.5]) {
    variants.push({ name: `tool BM25 gap ≥ ${g}`, toolGap: g });
    variants.push({ name: `tool BM25 gap ≥ ${g} unless strong`, toolGap: g, gapUnlessStrong: true });
    variants.push({ name: `tool BM25 gap ≥ ${g} unless strong, no short`, toolGap: g, gapUnlessStrong: true, noShortTool: true });
  }
  for (const g of [1.05, 1.1, 1.2]) variants.push({ name: `prompt score gap ≥ ${g}`, promptGap: g });
  for (const r of [0.6, 0.75, 0.8]) for (const g of [1.2, 1.3]) variants.push({ name: `tool gap ≥ ${g} unless strong, prompt rel ${r}`, toolGap: g, gapUnlessStrong: true, promptRel: r });
  for (const g of [1.1, 1.2, 1.3, 1.5, 2]) variants.push({ name: `tool gap ≥ ${g} for one-term matches only`, toolGap: g, gapShortOnly: true });
  variants.push({ name: 'one-term 1.5, others 1.2, one-word calls exempt', toolGap: 1.5, toolGapMulti: 1.2, gapUnlessStrong: true, exemptSingle: true });
  for (const g of [1.3, 1.5, 2]) for (const m of [1.05, 1.1, 1.15, 1.2, 1.3]) variants.push({ name: `tool gap one-term ≥ ${g}, others ≥ ${m} unless strong`, toolGap: g, toolGapMulti: m, gapUnlessStrong: true });
  for (const g of [1.2, 1.3, 1.5]) for (const j of [0.2]) variants.push({ name: `tool gap ≥ ${g} unless strong, dup J ${j}`, toolGap: g, gapUnlessStrong: true, dupJ: j });
  printVariants(variants, chooseVariant, 48);
}

// Round 5: `--misses set` — per embedder and hook event, what the shipped choice does with answerable inputs: a
// relevant memory injected, one withheld (in the results, not injected: by the weak-match rule, the tool-event margin
// or the relevance rule), or only wrong ones injected; `--verbose-misses` lists them.
if (args.includes('--misses')) {
  const set = args[args.indexOf('--misses') + 1] ?? 'lessons';
  const stats = new Map<string, Record<string, number>>();
  for (const row of rows) {
    if (row.set !== set) continue;
    const tool = row.event !== null && row.event !== 'UserPromptSubmit';
    const hits = row.results.map(hitOf);
    const rel = new Set(row.relevant);
    const isGood = (id: number): boolean => (row.results.find((r) => r.id === id)?.mem ?? []).some((m) => rel.has(m));
    const noMargin = row.abstained ? [] : chooseHits(hits, row.hook_query ?? row.q, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model });
    const shipped = row.abstained || row.weak ? [] : chooseHits(hits, row.hook_query ?? row.q, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool });
    const good = shipped.filter((c) => isGood(c.hit.id)).length;
    const bad = shipped.length - good;
    const relRank = row.results.findIndex((r) => isGood(r.id)) + 1;
    let outcome: string;
    if (row.relevant.length === 0) outcome = shipped.length ? 'UNANS spoke' : 'UNANS silent';
    else if (good > 0) outcome = bad > 0 ? 'right+wrong' : 'right';
    else if (bad > 0) outcome = `wrong (relevant at ${relRank || '-'})`;
    else if (relRank === 0) outcome = 'silent, relevant not in results';
    else if (row.weak) outcome = noMargin.some((c) => isGood(c.hit.id)) ? 'withheld by weak-match' : 'silent (weak, relevance rule too)';
    else if (noMargin.some((c) => isGood(c.hit.id))) outcome = 'withheld by tool margin';
    else outcome = `withheld by relevance rule (relevant at ${relRank})`;
    const key = `${row.embedder} ${tool ? 'tool' : 'prompt'}`;
    const s = stats.get(key) ?? {};
    const bucket = outcome.replace(/ \(.*\)/, '');
    s[bucket] = (s[bucket] ?? 0) + 1;
    stats.set(key, s);
    if (args.includes('--verbose-misses') && row.embedder === (args[args.indexOf('--verbose-misses') + 1] ?? 'use-lite') && !/^right$|UNANS silent/.test(outcome)) {
      console.log(`\n[${outcome}] ${row.event ?? 'prompt'} ${JSON.stringify(row.hook_query ?? row.q).slice(0, 150)} relevant ${row.relevant.join(',') || '-'} ${row.weak ? `WEAK: ${row.weak.slice(0, 100)}` : ''}`);
      row.results.slice(0, 4).forEach((r, i) => {
        const c = shipped.find((x) => x.hit.id === r.id);
        const n = noMargin.find((x) => x.hit.id === r.id);
        console.log(`  ${i + 1}. ${c ? 'INJ' : n ? 'cut' : '   '}${isGood(r.id) ? '+' : ' '} ${r.mem.join(',')} s${r.score.toFixed(3)} b${r.signals.bm25?.toFixed(2)} v${r.signals.vector?.toFixed(2)} ${n ? `m${n.relevance.matched}/${contentTerms(row.hook_query ?? row.q).size} ${n.relevance.reason}` : ''} | ${(r.title ?? '').slice(0, 40)} | ${r.text.slice(0, 90)}`);
      });
    }
  }
  for (const [k, s] of [...stats].sort()) console.log(`${k.padEnd(24)} ${Object.entries(s).sort().map(([b, n]) => `${b}: ${n}`).join(' · ')}`);
}

// Round 5: `--round5` — variants that admit a first hit the relevance rule withholds when the keyword ranking has a
// clear winner, scored per set × embedder (relevant injected / precision / silent on unanswerable), dev only.
interface R5 { name: string; production?: boolean; fewerExempt?: boolean; promptCoverage?: number; toolOne?: number; toolTerms?: number; promptRatio?: number; promptMatched?: number; toolRatio?: number; toolMatched?: number; promptFused?: number; cell?: (row: Row) => boolean }
function bm25Ratio(hits: readonly SearchHit[], first: SearchHit): number {
  const own = first.signals.bm25 ?? 0;
  let next = 0;
  for (const h of hits) if (h !== first) next = Math.max(next, h.signals.bm25 ?? 0);
  return next > 0 ? own / next : Infinity;
}
function chooseR5(row: Row, v: R5) {
  const tool = row.event !== null && row.event !== 'UserPromptSubmit';
  if (row.abstained || row.weak) return [];
  const hits = row.results.map(hitOf);
  const query = row.hook_query ?? row.q;
  const margin = INJECT.toolMargin as unknown as { oneTerm: number; terms: number };
  const saved = { ...margin };
  if (v.production) return chooseHits(hits, query, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool, promptWinner: !tool });
  // Round 4's margins unless the variant says otherwise (INJECT holds the shipped ones).
  margin.oneTerm = v.toolOne ?? 1.5;
  margin.terms = v.toolTerms ?? 1.2;
  const chosen = chooseHits(hits, query, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool });
  Object.assign(margin, saved);
  if (tool && v.fewerExempt && chosen.length === 0 && hits.length > 1) {
    // The margin is waived when the runner-up holds fewer of the call's content terms than the first hit.
    const loose = chooseHits(hits, query, { max: INJECT.toolMax, alreadyShown: new Set(), embedderKind: row.model });
    const top = loose[0];
    if (top && top.hit.id === hits[0]!.id) {
      const second = relevance(hits[1] as SearchHit, contentTerms(query), row.model);
      if (second.matched < top.relevance.matched) return loose;
    }
  }
  if (chosen.length > 0) return chosen;
  const first = hits[0];
  if (!first || first.ranks.bm25 !== 1) return chosen;
  const ratio = tool ? v.toolRatio : v.promptRatio;
  const minMatched = (tool ? v.toolMatched : v.promptMatched) ?? 1;
  if (ratio === undefined) return chosen;
  if (!tool && v.promptFused !== undefined && first.score < v.promptFused) return chosen;
  const found = relevance(first, contentTerms(query), row.model);
  if (found.matched < minMatched) return chosen;
  if (!tool && v.promptCoverage !== undefined && found.coverage < v.promptCoverage) return chosen;
  if (bm25Ratio(hits, first) < ratio) return chosen;
  return [{ hit: first, relevance: found }];
}
if (args.includes('--round5')) {
  const variants: R5[] = [{ name: 'round 4 (tool 1.5/1.2)' }, { name: 'shipped (services/inject as it is)', production: true }];
  if (args.includes('--grid')) {
    variants.length = 2;
    for (const [o, t] of [[1.5, 1.2], [1.5, 1.25], [1.5, 1.3], [1.7, 1.3], [2, 1.3], [1.5, 1.4]]) for (const r of [undefined, 1.4, 1.5, 1.7]) variants.push({ name: `tool ${o}/${t}, prompt admit ${r ?? '-'}`, toolOne: o, toolTerms: t, ...(r ? { promptRatio: r, promptMatched: 2 } : {}) });
    for (const [o, t] of [[1.5, 1.2], [1.5, 1.3], [1.5, 1.5], [2, 1.5], [2, 2]]) for (const r of [undefined, 1.7]) variants.push({ name: `fewer-exempt tool ${o}/${t}, prompt admit ${r ?? '-'}`, fewerExempt: true, toolOne: o, toolTerms: t, ...(r ? { promptRatio: r, promptMatched: 2, promptCoverage: 0.4 } : {}) });
    for (const [o, t] of [[1.5, 1.2], [1.5, 1.25], [1.5, 1.3]]) for (const r of [1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 2]) for (const c of [0.34, 0.4]) variants.push({ name: `tool ${o}/${t}, prompt admit ${r} cov ${c}`, toolOne: o, toolTerms: t, promptRatio: r, promptMatched: 2, promptCoverage: c });
  }
  else for (const r of [1.2, 1.3, 1.4, 1.5, 1.7, 2]) for (const m of [1, 2]) variants.push({ name: `prompt admit ratio ${r} matched ${m}`, promptRatio: r, promptMatched: m });
  for (const r of [1.3, 1.5, 1.7, 2]) for (const f of [0.9, 1]) variants.push({ name: `prompt admit ratio ${r} fused ≥ ${f}`, promptRatio: r, promptMatched: 1, promptFused: f });
  for (const r of [1.2, 1.3, 1.5, 2]) for (const m of [1, 2]) variants.push({ name: `tool admit ratio ${r} matched ${m}`, toolRatio: r, toolMatched: m });
  printVariants(variants, chooseR5, 40);
}
if (args.includes('--admitted')) {
  const v: R5 = { name: 'probe', promptRatio: Number(option5('--admitted', '1.4')), promptMatched: 2, toolRatio: 99 };
  for (const row of rows) {
    const tool = row.event !== null && row.event !== 'UserPromptSubmit';
    if (tool || row.abstained || row.weak || row.embedder !== 'use-lite') continue;
    const hits = row.results.map(hitOf);
    const shipped = chooseHits(hits, row.hook_query ?? row.q, { max: INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model });
    const after = chooseR5(row, v);
    if (shipped.length > 0 || after.length === 0) continue;
    const c = after[0] as (typeof after)[number];
    const good = (row.results[0]?.mem ?? []).some((m) => row.relevant.includes(m));
    console.log(`${row.set.padEnd(13)} ${good ? 'GOOD' : row.relevant.length ? 'bad ' : 'UNAN'} m${c.relevance.matched}/${contentTerms(row.hook_query ?? row.q).size} cov ${c.relevance.coverage.toFixed(2)} ratio ${bm25Ratio(hits, hits.find((h) => h.id === c.hit.id) as SearchHit).toFixed(2)} fused ${c.hit.score.toFixed(2)} ranks ${JSON.stringify(c.hit.ranks)} sim ${c.hit.signals.vector?.toFixed(2)} | ${(row.hook_query ?? row.q).slice(0, 70)} | ${c.hit.engram.text.slice(0, 60)}`);
  }
}
function option5(name: string, fallback: string): string { const i = args.indexOf(name); return i >= 0 && args[i + 1] && !args[i + 1]!.startsWith('--') ? (args[i + 1] as string) : fallback; }

// Round 6: `--misses6 set [--embedder e]` — the shipped choice (prompt winner and tool margins as hooks run): each
// answerable input where no relevant memory was injected or a wrong one was, with the top results' signals.
if (args.includes('--misses6')) {
  const set = args[args.indexOf('--misses6') + 1] ?? 'lessons';
  const only = args.includes('--embedder') ? args[args.indexOf('--embedder') + 1] : 'use-lite';
  for (const row of rows) {
    if (row.set !== set || row.embedder !== only) continue;
    const tool = row.event !== null && row.event !== 'UserPromptSubmit';
    const hits = row.results.map(hitOf);
    const query = row.hook_query ?? row.q;
    const rel = new Set(row.relevant);
    const isGood = (id: number): boolean => (row.results.find((r) => r.id === id)?.mem ?? []).some((m) => rel.has(m));
    const shipped = row.abstained || row.weak ? [] : chooseHits(hits, query, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool, promptWinner: !tool, hybrid: hybridRow(row) });
    const good = shipped.filter((c) => isGood(c.hit.id)).length;
    const bad = shipped.length - good;
    if (row.relevant.length > 0 && good > 0 && bad === 0) continue;
    if (row.relevant.length === 0 && shipped.length === 0) continue;
    const terms = contentTerms(query);
    const label = row.relevant.length === 0 ? 'UNANS-SPOKE' : good > 0 ? 'RIGHT+WRONG' : bad > 0 ? 'WRONG' : row.results.some((r) => isGood(r.id)) ? (row.weak ? 'MISS-weak' : 'MISS-withheld') : 'MISS-absent';
    console.log(`\n[${label}] ${tool ? row.event : 'prompt'} ${JSON.stringify(query).slice(0, 140)} terms ${[...terms].join(',')}`);
    row.results.slice(0, 4).forEach((r, i) => {
      const c = shipped.find((x) => x.hit.id === r.id);
      const rv = relevance(hitOf(r), terms, row.model);
      console.log(`  ${i + 1}. ${c ? 'INJ' : '   '}${isGood(r.id) ? '+' : ' '} s${r.score.toFixed(3)} b${r.signals.bm25?.toFixed(2)} v${r.signals.vector?.toFixed(2)} r${r.ranks.bm25 ?? '-'}/${r.ranks.vector ?? '-'} m${rv.matched}/${terms.size} ${rv.reason ?? ''} | ${(r.title ?? '').slice(0, 40)} | ${r.text.slice(0, 80)}`);
    });
  }
}

// Round 6: `--round6` — the shipped choice plus one extra admission or veto at a time (dev only).
interface R6 { name: string; ignoreWeak?: 'all' | 'tool' | 'prompt'; toolAdmitGap?: number; toolAdmitMin?: number; toolAdmitTerms?: number; moreTerms?: boolean; moreWindow?: number; moreDepth?: number; morePrompt?: boolean; secondVeto?: number; promptGap?: number; promptCov?: number; promptMatched?: number; promptAgree?: number; toolMaxTerms?: number }
function chooseR6(row: Row, v: R6) {
  const tool = row.event !== null && row.event !== 'UserPromptSubmit';
  const ignore = v.ignoreWeak === 'all' || (v.ignoreWeak === 'tool' && tool) || (v.ignoreWeak === 'prompt' && !tool);
  if (row.abstained || (row.weak && !ignore)) return [];
  const hits = row.results.map(hitOf);
  const query = row.hook_query ?? row.q;
  const pw = INJECT.promptWinner as unknown as { bm25Gap: number; minCoverage: number; minMatched: number };
  const saved = { ...pw };
  if (v.promptGap !== undefined) pw.bm25Gap = v.promptGap;
  if (v.promptCov !== undefined) pw.minCoverage = v.promptCov;
  if (v.promptMatched !== undefined) pw.minMatched = v.promptMatched;
  let chosen = chooseHits(hits, query, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool, promptWinner: !tool });
  Object.assign(pw, saved);
  const terms = contentTerms(query);
  if (!tool && v.promptAgree !== undefined && chosen.length === 0 && hits[0] && hits[0].ranks.bm25 === 1 && (hits[0].ranks.vector ?? 99) <= v.promptAgree) {
    const r = relevance(hits[0], terms, row.model);
    if (r.matched >= 2 && bm25Ratio(hits, hits[0]) >= (v.promptGap ?? 1.3)) chosen = [{ hit: hits[0], relevance: r }];
  }
  if (tool && chosen.length === 0 && v.toolAdmitGap !== undefined && hits[0]) {
    const r = relevance(hits[0], terms, row.model);
    if (r.matched >= (v.toolAdmitMin ?? 1) && terms.size <= (v.toolAdmitTerms ?? 99) && bm25Ratio(hits, hits[0]) >= v.toolAdmitGap) chosen = [{ hit: hits[0], relevance: r }];
  }
  if (v.moreTerms && chosen.length > 0 && (tool || v.morePrompt)) {
    // A result close behind that holds more of the call's terms than the chosen first one takes its place.
    const first = chosen[0] as (typeof chosen)[number];
    const better = hits.slice(1, v.moreDepth ?? 3).map((h) => ({ hit: h, relevance: relevance(h, terms, row.model) })).find((c) => c.relevance.matched > first.relevance.matched && c.hit.score >= (v.moreWindow ?? 0.8) * first.hit.score);
    if (better) chosen = tool ? [better] : [better, ...chosen.filter((c) => c.hit.id !== better.hit.id)].slice(0, INJECT.promptMax);
  }
  if (v.secondVeto !== undefined && chosen.length > 1) chosen = chosen.filter((c, i) => i === 0 || c.hit.score >= v.secondVeto! * (chosen[0] as (typeof chosen)[number]).hit.score);
  return chosen;
}
if (args.includes('--round6')) {
  const variants: R6[] = [{ name: 'shipped' }];
  for (const g of [1.5, 1.7, 2, 2.5, 3]) for (const m of [1, 2]) for (const t of [3, 4, 99]) variants.push({ name: `tool admit first: gap ${g}, matched ${m}, ≤ ${t} terms`, toolAdmitGap: g, toolAdmitMin: m, toolAdmitTerms: t });
  for (const w of [0.6, 0.7, 0.75, 0.8, 0.85, 0.9]) for (const d of [2, 3, 4]) variants.push({ name: `tool: a result within ${w} (top ${d}) holding more terms replaces the first`, moreTerms: true, moreWindow: w, moreDepth: d });
  for (const w of [0.7, 0.8]) variants.push({ name: `tool+prompt: a result within ${w} holding more terms goes first`, moreTerms: true, moreWindow: w, morePrompt: true });
  for (const s of [0.92, 0.95]) variants.push({ name: `second and third need ${s} of the first`, secondVeto: s });
  for (const g of [1.3, 1.4, 1.5, 1.6]) for (const c of [0.3, 0.4]) variants.push({ name: `prompt winner gap ${g}, coverage ${c}`, promptGap: g, promptCov: c });
  for (const a of [1, 2, 3, 5]) for (const g of [1.2, 1.3, 1.5]) variants.push({ name: `prompt: first in both lists (vector ≤ ${a}), gap ${g}, 2 terms`, promptAgree: a, promptGap: g });
  for (const w of ['all', 'tool', 'prompt'] as const) variants.push({ name: `weak-match ignored (${w})`, ignoreWeak: w });
  printVariants(variants, chooseR6, 58);
}

// Round 6: `--idf` — prompts judged by IDF-weighted coverage (each content term weighs its IDF over the set's
// memories, as the weak-match rule weighs it) instead of the share of terms. Dev only.
if (args.includes('--idf')) {
  const { join } = await import('node:path');
  const idfOf = new Map<string, (t: string) => number>();
  for (const set of new Set(rows.map((r) => r.set))) {
    const file = join(process.cwd(), 'fixtures', ({ eval: 'eval', conversations: 'eval-conversations', lessons: 'eval-lessons', dialogue: 'eval-dialogue' } as Record<string, string>)[set] as string, 'memories.jsonl');
    const df = new Map<string, number>();
    let n = 0;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const m = JSON.parse(line) as { text: string; title?: string; category?: string; tags?: string[] };
      n++;
      for (const t of new Set(searchTerms(`${m.title ?? ''} ${m.text} ${m.category ?? ''} ${(m.tags ?? []).join(' ')}`))) df.set(t, (df.get(t) ?? 0) + 1);
    }
    idfOf.set(set, (t) => Math.log((n - (df.get(t) ?? 0) + 0.5) / ((df.get(t) ?? 0) + 0.5) + 1));
  }
  interface V6 { name: string; admit?: number; minMatched?: number; replace?: number; gap?: number }
  const choose = (row: Row, v: V6) => {
    const tool = row.event !== null && row.event !== 'UserPromptSubmit';
    if (row.abstained || row.weak) return [];
    const hits = row.results.map(hitOf);
    const query = row.hook_query ?? row.q;
    const chosen = chooseHits(hits, query, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool, promptWinner: !tool });
    if (tool || chosen.length > 0 || v.admit === undefined) return chosen;
    const terms = contentTerms(query);
    const idf = idfOf.get(row.set) as (t: string) => number;
    const total = [...terms].reduce((s, t) => s + idf(t), 0);
    const first = hits[0];
    if (!first || total <= 0) return chosen;
    if (v.gap !== undefined && bm25Ratio(hits, first) < v.gap) return chosen;
    const engramTerms = new Set(searchTerms(`${first.engram.title ?? ''} ${first.engram.text}`));
    const heldTerms = [...terms].filter((t) => engramTerms.has(t) || searchTerms(`${first.engram.category} ${first.engram.tags.join(' ')}`).includes(t));
    const held = heldTerms.reduce((s, t) => s + idf(t), 0);
    if (args.includes('--idf-debug') && v.admit === 0.5 && v.minMatched === 2 && v.gap === undefined && row.embedder === 'use-lite') console.log(`DBG ${row.set} ${heldTerms.length} ${(held / total).toFixed(2)} ${query.slice(0, 60)}`);
    if (heldTerms.length >= (v.minMatched ?? 2) && held / total >= v.admit) return [{ hit: first, relevance: relevance(first, terms, row.model) }];
    return chosen;
  };
  const variants: V6[] = [{ name: 'shipped' }];
  for (const w of [0.25, 0.3, 0.35, 0.4, 0.45]) for (const m of [2, 3]) for (const g of [undefined, 1.1, 1.2, 1.3]) variants.push({ name: `prompt: first hit holding ≥ ${w} of the IDF weight, ${m} terms${g ? `, BM25 gap ${g}` : ''}`, admit: w, minMatched: m, ...(g ? { gap: g } : {}) });
  printVariants(variants, choose, 64);
}

// Round 6: `--timing` — what fullerMatch costs a tool event's choice: chooseHits over every dumped tool event,
// fullerMatch on (depth 3) and off (depth 0), alternating rounds, median per call.
if (args.includes('--timing')) {
  const tools = rows.filter((r) => r.event !== null && r.event !== 'UserPromptSubmit' && !r.abstained && !r.weak).map((r) => ({ hits: r.results.map(hitOf), query: r.hook_query ?? r.q, model: r.model }));
  const fuller = INJECT.fullerMatch as unknown as { depth: number };
  const run = (depth: number): number => {
    fuller.depth = depth;
    const started = performance.now();
    for (let i = 0; i < 20; i++) for (const t of tools) chooseHits(t.hits, t.query, { max: INJECT.toolMax, alreadyShown: new Set(), embedderKind: t.model, keywordMargin: true });
    return ((performance.now() - started) * 1000) / (20 * tools.length);
  };
  const on: number[] = [];
  const off: number[] = [];
  run(3);
  for (let round = 0; round < 7; round++) { off.push(run(0)); on.push(run(3)); }
  fuller.depth = 3;
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  console.log(`${tools.length} tool events; chooseHits per call, median of 7 rounds: fullerMatch off ${median(off).toFixed(2)} µs, on ${median(on).toFixed(2)} µs`);
}

// Round 7: `--round7` — the shipped choice (with round 7's semantic agreement and prompt winner) against variants:
// how deep in BM25's list a semantic match must sit, the prompt winner only at the fused first place (round 5/6), and
// a floor on the first injected result's score relative to the first result (dev only).
if (args.includes('--round7')) {
  interface R7 { name: string; depth?: number; noAgreement?: boolean; winnerFirstOnly?: boolean; floor?: number; winnerGap?: number; agreedGap?: number; laterMatched?: boolean; promptMax?: number; lowGapVector?: number }
  const tunable = INJECT as unknown as { semanticKeywordDepth: number };
  const shippedDepth = tunable.semanticKeywordDepth;
  const choose7 = (row: Row, v: R7) => {
    const tool = row.event !== null && row.event !== 'UserPromptSubmit';
    if (row.abstained || row.weak) return [];
    const hits = row.results.map(hitOf);
    tunable.semanticKeywordDepth = v.depth ?? shippedDepth;
    const pw = INJECT.promptWinner as unknown as { bm25Gap: number };
    const gap = pw.bm25Gap;
    pw.bm25Gap = v.winnerGap ?? gap;
    let chosen = chooseHits(hits, row.hook_query ?? row.q, { max: tool ? INJECT.toolMax : (v.promptMax ?? INJECT.promptMax), alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool, promptWinner: !tool, hybrid: !v.noAgreement && hybridRow(row) });
    tunable.semanticKeywordDepth = shippedDepth;
    pw.bm25Gap = gap;
    const first = hits[0];
    if (!tool && v.agreedGap !== undefined && chosen.length === 0 && first && first.ranks.bm25 === 1 && first.ranks.vector === 1) {
      // Round 6's "both lists' first": the first result is BM25's and the vector list's first, BM25 agreedGap × ahead, two terms.
      const r = relevance(first, contentTerms(row.hook_query ?? row.q), row.model);
      if (r.matched >= 2 && bm25Ratio(hits, first) >= v.agreedGap) chosen = [{ hit: first, relevance: r }];
    }
    const won = chosen[0];
    // A winner below the shipped gap (winnerGap) counts only when the vector list ranks it in its top lowGapVector.
    if (!tool && v.lowGapVector !== undefined && won?.relevance.reason === 'clear-winner' && bm25Ratio(hits, won.hit) < gap && (won.hit.ranks.vector ?? 99) > v.lowGapVector) chosen = [];
    if (!tool && v.laterMatched && chosen.length > 1) chosen = chosen.filter((c, i) => i === 0 || c.relevance.matched >= (chosen[0] as (typeof chosen)[number]).relevance.matched);
    if (v.winnerFirstOnly) chosen = chosen.filter((c) => c.relevance.reason !== 'clear-winner' || c.hit === hits[0]);
    if (v.floor !== undefined && !tool && hits[0]) chosen = chosen.filter((c) => c.hit.score >= (v.floor as number) * (hits[0] as SearchHit).score);
    return chosen;
  };
  const variants: R7[] = [
    { name: 'round 6 (before): no agreement, winner at the first place', noAgreement: true, winnerFirstOnly: true },
    { name: 'semantic agreement alone (BM25 top 3)', winnerFirstOnly: true },
    { name: 'prompt winner anywhere alone', noAgreement: true },
    { name: 'shipped (both)' },
  ];
  for (const d of [1, 2, 4, 5, 10, 20, 50, Infinity]) variants.push({ name: `semantic agreement: BM25 top ${d}`, depth: d });
  for (const g of [1.3, 1.4, 1.5, 1.6]) variants.push({ name: `shipped, prompt winner gap ${g} (was 1.7)`, winnerGap: g });
  for (const g of [1.3, 1.4, 1.5]) for (const d of [2, 3]) variants.push({ name: `shipped, prompt winner gap ${g} when the vector list ranks it ≤ ${d}`, winnerGap: g, lowGapVector: d });
  for (const g of [1.2, 1.3, 1.5]) variants.push({ name: `shipped + both lists' first, BM25 ${g} × ahead, two terms`, agreedGap: g });
  variants.push({ name: 'shipped + a second or third injection holds as many terms as the first', laterMatched: true });
  variants.push({ name: 'shipped, at most 2 per prompt (was 3)', promptMax: 2 });
  for (const f of [0.5, 0.6, 0.7, 0.75, 0.8, 0.9]) variants.push({ name: `round 6 + first injected ≥ ${f} of the first result`, noAgreement: true, winnerFirstOnly: true, floor: f });
  printVariants(variants, choose7, 58);
}

// Round 8: the wrong injections on prompts (hybrid searches), per model, with what each signal said about them.
if (args.includes('--wrong8')) {
  const set = args[args.indexOf('--wrong8') + 1] ?? 'lessons';
  for (const { row, hits, query, chosen } of shippedPromptRows(set)) {
    const rel = new Set(row.relevant);
    for (const c of chosen) {
      const good = (row.results.find((r) => r.id === c.hit.id)?.mem ?? []).some((m) => rel.has(m));
      const relInTop = row.results.slice(0, 10).filter((r) => r.mem.some((m) => rel.has(m))).map((r) => r.ranks);
      console.log(`${row.embedder.padEnd(15)} ${good ? 'GOOD' : row.relevant.length ? 'bad ' : 'UNAN'} ${c.relevance.reason} m${c.relevance.matched}/${contentTerms(query).size} cov ${c.relevance.coverage.toFixed(2)} pos ${hits.indexOf(c.hit) + 1} ratio ${bm25Ratio(hits, c.hit).toFixed(2)} ranks ${JSON.stringify(c.hit.ranks)} sim ${c.hit.signals.vector?.toFixed(2)} relAt ${JSON.stringify(relInTop)} | ${query.slice(0, 70)} | ${c.hit.engram.text.slice(0, 50)}`);
    }
  }
}

// Round 8 variants: a hit injected on a prompt searched hybrid must be supported by the keywords — its BM25 score at
// least `share` × the best BM25 score among the results (a vector-led result the keywords put far behind is refused).
if (args.includes('--round8')) {
  interface R8 { name: string; depth?: number; share?: number; scope?: 'all' | 'notFirst' | 'oneTerm' | 'vectorLed'; nullBm25?: boolean }
  const choose8 = (row: Row, v: R8) => {
    const tool = row.event !== null && row.event !== 'UserPromptSubmit';
    if (row.abstained || row.weak) return [];
    const hits = row.results.map(hitOf);
    let chosen = chooseHits(hits, row.hook_query ?? row.q, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool, promptWinner: !tool, hybrid: hybridRow(row) });
    if (tool || !hybridRow(row)) return chosen;
    const best = Math.max(0, ...hits.map((h) => h.signals.bm25 ?? 0));
    const supported = (c: (typeof chosen)[number]): boolean => {
      if (c.relevance.reason === 'clear-winner') return true;
      if (v.depth !== undefined && hits.indexOf(c.hit) >= v.depth) return false;
      const inScope = v.scope === 'notFirst' ? c.hit !== hits[0] : v.scope === 'oneTerm' ? c.relevance.matched <= 1 : v.scope === 'vectorLed' ? (c.hit.ranks.vector ?? 99) < (c.hit.ranks.bm25 ?? 99) : true;
      if (!inScope) return true;
      if (v.nullBm25 && c.hit.ranks.bm25 === null) return false;
      return v.share === undefined || (c.hit.signals.bm25 ?? 0) >= v.share * best;
    };
    if (args.includes('--show8') && v.share === Number(args[args.indexOf('--show8') + 1]) && v.scope === 'all') for (const c of chosen.filter((x) => !supported(x))) console.log(`REMOVED ${row.set} ${row.embedder} ${row.relevant.length ? ((row.results.find((r) => r.id === c.hit.id)?.mem ?? []).some((m) => row.relevant.includes(m)) ? 'GOOD' : 'bad') : 'UNAN'} ${c.relevance.reason} m${c.relevance.matched} pos ${hits.indexOf(c.hit) + 1} b ${(c.hit.signals.bm25 ?? 0).toFixed(1)}/${best.toFixed(1)} ranks ${JSON.stringify(c.hit.ranks)} | ${(row.hook_query ?? row.q).slice(0, 60)} | ${c.hit.engram.text.slice(0, 50)}`);
    chosen = chosen.filter(supported);
    return chosen;
  };
  const variants: R8[] = [{ name: 'shipped' }, { name: 'no BM25 rank: refused', nullBm25: true }];
  // The rule as choose.ts runs it (INJECT.keywordSupport: a hit the keywords score below the share is skipped).
  const support = INJECT as unknown as { keywordSupport: number };
  const shippedSupport = support.keywordSupport;
  const inChoose = (share: number) => (row: Row) => {
    support.keywordSupport = share;
    const tool = row.event !== null && row.event !== 'UserPromptSubmit';
    const out = row.abstained || row.weak ? [] : chooseHits(row.results.map(hitOf), row.hook_query ?? row.q, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool, promptWinner: !tool, hybrid: hybridRow(row) });
    support.keywordSupport = shippedSupport;
    return out;
  };
  printVariants([0, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7].map((share) => ({ name: `choose.ts keywordSupport ${share}`, share })), (row, v) => inChoose(v.share)(row), 40);
  for (const scope of ['all', 'notFirst', 'oneTerm', 'vectorLed'] as const) for (const share of [0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9]) variants.push({ name: `BM25 ≥ ${share} × best, ${scope}`, share, scope });
  for (const depth of [3, 4, 5, 6, 8]) variants.push({ name: `within the first ${depth} results`, depth });
  for (const depth of [4, 5]) for (const share of [0.5, 0.55]) variants.push({ name: `first ${depth}, or BM25 ≥ ${share} × best`, depth, share, scope: 'all' });
  printVariants(variants, choose8, 40);
}

// Round 8: answerable prompts (hybrid) where a relevant result in the first three was not injected.
if (args.includes('--missed8')) {
  const set = args[args.indexOf('--missed8') + 1] ?? 'lessons';
  for (const row of rows) {
    if (row.set !== set || !hybridRow(row) || row.relevant.length === 0) continue;
    const hits = row.results.map(hitOf);
    const query = row.hook_query ?? row.q;
    const chosen = row.abstained || row.weak ? [] : shippedChoice(hits, row);
    const rel = new Set(row.relevant);
    const isRel = (id: number): boolean => (row.results.find((r) => r.id === id)?.mem ?? []).some((m) => rel.has(m));
    if (chosen.some((c) => isRel(c.hit.id))) continue;
    const firstRel = hits.slice(0, 3).findIndex((h) => isRel(h.id));
    if (firstRel < 0) continue;
    const terms = contentTerms(query);
    const desc = hits.slice(0, 3).map((h, i) => { const r = relevance(h, terms, row.model, true); return `${i + 1}${isRel(h.id) ? '*' : ' '}${chosen.some((c) => c.hit.id === h.id) ? 'INJ' : ''} s${h.score.toFixed(2)} b${(h.signals.bm25 ?? 0).toFixed(1)} r${h.ranks.bm25 ?? '-'}/${h.ranks.vector ?? '-'} v${h.signals.vector?.toFixed(2)} m${r.matched} ${r.reason ?? '-'}`; });
    console.log(`${row.embedder.padEnd(15)} ${row.abstained ?? row.weak ? 'ABST' : '    '} |${terms.size}| ${query.slice(0, 60).padEnd(60)} | ${desc.join(' ; ')}`);
  }
}

// Round 8: the cost of keyword support — chooseHits per hybrid prompt with `keywordSupport` 0 (off) and shipped,
// alternating, median of 7 rounds.
if (args.includes('--timing8')) {
  const prompts = rows.filter((r) => hybridRow(r) && !r.abstained && !r.weak).map((r) => ({ hits: r.results.map(hitOf), query: r.hook_query ?? r.q, model: r.model }));
  const support = INJECT as unknown as { keywordSupport: number };
  const shipped = support.keywordSupport;
  const run = (share: number): number => {
    support.keywordSupport = share;
    const started = performance.now();
    for (let i = 0; i < 20; i++) for (const p of prompts) chooseHits(p.hits, p.query, { max: INJECT.promptMax, alreadyShown: new Set(), embedderKind: p.model, promptWinner: true, hybrid: true });
    return ((performance.now() - started) * 1000) / (20 * prompts.length);
  };
  const on: number[] = [];
  const off: number[] = [];
  run(shipped);
  for (let round = 0; round < 7; round++) { off.push(run(0)); on.push(run(shipped)); }
  support.keywordSupport = shipped;
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  console.log(`${prompts.length} hybrid prompts; chooseHits per call, median of 7 rounds: keyword support off ${median(off).toFixed(2)} µs, on (${shipped}) ${median(on).toFixed(2)} µs`);
}

// Round 9: prompts where nothing was injected and one result is first in both BM25's and the vector list (the two
// signals' first agree). `--agreed9 SET` lists them (GOOD / bad / UNAN) with the BM25 gap to every other result, the
// matched content terms and the similarity margin over the next result the vectors rank; `--round9` prints variants.
const agreedFirst = (hits: readonly SearchHit[]): SearchHit | undefined => hits.find((h) => h.ranks.bm25 === 1 && h.ranks.vector === 1);
const vectorMargin = (hits: readonly SearchHit[], first: SearchHit): number => {
  let next = 0;
  for (const h of hits) if (h !== first && h.signals.vector !== null) next = Math.max(next, h.signals.vector);
  return (first.signals.vector ?? 0) - next;
};
if (args.includes('--agreed9')) {
  const set = args[args.indexOf('--agreed9') + 1] ?? 'lessons';
  for (const { row, hits, query, chosen } of shippedPromptRows(set)) {
    if (chosen.length > 0) continue;
    const first = agreedFirst(hits);
    if (!first) continue;
    const rel = new Set(row.relevant);
    const good = (row.results.find((r) => r.id === first.id)?.mem ?? []).some((m) => rel.has(m));
    const found = relevance(first, contentTerms(query), row.model, true);
    console.log(`${row.embedder.padEnd(15)} ${good ? 'GOOD' : row.relevant.length ? 'bad ' : 'UNAN'} m${found.matched}/${contentTerms(query).size} pos ${hits.indexOf(first) + 1} gap ${bm25Ratio(hits, first).toFixed(2)} sim ${first.signals.vector?.toFixed(2)} vmargin ${vectorMargin(hits, first).toFixed(3)} | ${query.slice(0, 60)} | ${first.engram.text.slice(0, 50)}`);
  }
}
// Round 9: the second and third injections of a prompt, with what separates them from the first.
if (args.includes('--second9')) {
  for (const { row, query, chosen } of shippedPromptRows(null)) {
    const rel = new Set(row.relevant);
    const first = chosen[0];
    if (!first) continue;
    chosen.slice(1).forEach((c) => {
      const good = (row.results.find((r) => r.id === c.hit.id)?.mem ?? []).some((m) => rel.has(m));
      const firstGood = (row.results.find((r) => r.id === first.hit.id)?.mem ?? []).some((m) => rel.has(m));
      const ratio = (c.hit.signals.bm25 ?? 0) / Math.max(1e-9, first.hit.signals.bm25 ?? 0);
      console.log(`${row.set.padEnd(13)} ${row.embedder.padEnd(15)} ${good ? 'GOOD' : row.relevant.length ? 'bad ' : 'UNAN'} first ${firstGood ? 'G' : 'b'} ${c.relevance.reason} m${c.relevance.matched}-vs-${first.relevance.matched} b/first ${ratio.toFixed(2)} ranks ${c.hit.ranks.bm25}/${c.hit.ranks.vector} first ${first.hit.ranks.bm25}/${first.hit.ranks.vector} | ${query.slice(0, 50)}`);
    });
  }
}
// Round 9: the semantic floor calibrated per store — the q-quantile of the similarity of the nearest vector over the
// cell's own prompts (what a store's running estimate would converge to) instead of one floor per embedder kind.
if (args.includes('--calibrated9')) {
  const sims = new Map<string, number[]>();
  for (const row of rows) {
    if (!hybridRow(row)) continue;
    const nearest = row.results.find((r) => r.ranks.vector === 1)?.signals.vector;
    if (nearest != null) sims.set(`${row.set}|${row.embedder}`, [...(sims.get(`${row.set}|${row.embedder}`) ?? []), nearest]);
  }
  const quantile = (xs: number[], q: number): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number; };
  for (const [key, xs] of sims) console.log(`${key.padEnd(30)} nearest similarity: q50 ${quantile(xs, 0.5).toFixed(3)} q75 ${quantile(xs, 0.75).toFixed(3)} q90 ${quantile(xs, 0.9).toFixed(3)}; the kind's floor sits at q${Math.round(100 * xs.filter((x) => x < (INJECT.similarity[key.includes('use-lite') ? 'use-lite' : 'transformers'] ?? 1)).length / xs.length)}`);
  const floors = INJECT.similarity;
  const shipped = { ...floors };
  const choose = (row: Row, v: { name: string; q: number | null }) => {
    const tool = row.event !== null && row.event !== 'UserPromptSubmit';
    if (row.abstained || row.weak) return [];
    if (v.q !== null && row.model) floors[row.model] = quantile(sims.get(`${row.set}|${row.embedder}`) ?? [1], v.q);
    const out = chooseHits(row.results.map(hitOf), row.hook_query ?? row.q, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool, promptWinner: !tool, hybrid: hybridRow(row) });
    Object.assign(floors, shipped);
    return out;
  };
  printVariants([{ name: 'shipped (floor per kind)', q: null }, ...[0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95].map((q) => ({ name: `floor = store's q${Math.round(q * 100)}`, q }))], choose, 30);
}
// Round 9: prompts the weak-match rule silenced (abstain.ts) although the relevance rule would inject from the ranking:
// how often that withheld injection was right, by which clause would have chosen it.
if (args.includes('--silenced9')) {
  const tally = new Map<string, { good: number; bad: number; unan: number }>();
  for (const row of rows) {
    if (!row.weak || row.abstained === 'no-content') continue;
    const tool = row.event !== null && row.event !== 'UserPromptSubmit';
    const hits = row.results.map(hitOf);
    const query = row.hook_query ?? row.q;
    const chosen = chooseHits(hits, query, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool, promptWinner: !tool, hybrid: hybridRow(row) });
    const rel = new Set(row.relevant);
    for (const c of chosen) {
      const good = (row.results.find((r) => r.id === c.hit.id)?.mem ?? []).some((m) => rel.has(m));
      const key = `${row.set}|${row.embedder}|${tool ? 'tool' : 'prompt'}|${c.relevance.reason}|m${Math.min(c.relevance.matched, 3)}|bm25 ${c.hit.ranks.bm25 === 1 ? '1' : 'other'}`;
      const t = tally.get(key) ?? { good: 0, bad: 0, unan: 0 };
      if (row.relevant.length === 0) t.unan++; else if (good) t.good++; else t.bad++;
      tally.set(key, t);
    }
  }
  for (const [key, t] of [...tally].sort()) console.log(`${key.padEnd(60)} good ${t.good} bad ${t.bad} unanswerable ${t.unan}`);
}
// Round 9 variants: when a prompt's choice is empty, the result first in both BM25's and the vector list is injected
// when BM25 scores it `gap` × every other result, it holds `minMatched` content terms and its similarity stands
// `margin` above every other result's (both signals single it out).
if (args.includes('--round9')) {
  interface V9 { name: string; gap: number; margin: number; minMatched: number }
  const choose9 = (row: Row, v: V9) => {
    const tool = row.event !== null && row.event !== 'UserPromptSubmit';
    if (row.abstained || row.weak) return [];
    const hits = row.results.map(hitOf);
    const query = row.hook_query ?? row.q;
    const chosen = chooseHits(hits, query, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool, promptWinner: !tool, hybrid: hybridRow(row) });
    if (tool || !hybridRow(row) || chosen.length > 0 || v.gap <= 0) return chosen;
    const first = agreedFirst(hits);
    if (!first) return chosen;
    const found = relevance(first, contentTerms(query), row.model, true);
    if (bm25Ratio(hits, first) >= v.gap && found.matched >= v.minMatched && vectorMargin(hits, first) >= v.margin) return [{ hit: first, relevance: found }];
    return chosen;
  };
  const variants: V9[] = [{ name: 'shipped', gap: 0, margin: 0, minMatched: 0 }];
  for (const minMatched of [1, 2]) for (const gap of [1.2, 1.3, 1.4, 1.5]) for (const margin of [0, 0.05, 0.1, 0.15, 0.2]) variants.push({ name: `both first, gap ${gap}, margin ${margin}, m ≥ ${minMatched}`, gap, margin, minMatched });
  printVariants(variants, choose9, 40);
  // The shipped-then-withdrawn version in choose.ts (INJECT.bothFirst, commit 59c0285) gave the same rows as
  // `both first, gap 1.3–1.45, margin 0.1–0.2, m ≥ 2` here; docs/SEARCH.md "Round 9".
}

// Round 10: every lesson-set injection as hooks run (tool events and prompts), with its place among the injections,
// event, clause and signals; `--list10 SET` prints them, `--tally10` counts right / wrong per event and place.
// The hooks' choice as main ships it (round 10's rule, measured in choose.ts on commit 74882c5 and withdrawn after the
// test read, is replayed below as `keywordLedLater`).
const production = (row: Row): Array<{ hit: SearchHit; relevance: ReturnType<typeof relevance> }> => {
  const tool = row.event !== null && row.event !== 'UserPromptSubmit';
  if (row.abstained || row.weak) return [];
  return chooseHits(row.results.map(hitOf), row.hook_query ?? row.q, { max: tool ? INJECT.toolMax : INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, keywordMargin: tool, promptWinner: !tool, hybrid: hybridRow(row) });
};
const isRelevantHit = (row: Row, id: number): boolean => (row.results.find((r) => r.id === id)?.mem ?? []).some((m) => row.relevant.includes(m));
if (args.includes('--tally10') || args.includes('--list10')) {
  const set = args.includes('--list10') ? (args[args.indexOf('--list10') + 1] as string) : null;
  const tally = new Map<string, { good: number; bad: number; unan: number }>();
  for (const row of rows) {
    if (set !== null && row.set !== set) continue;
    const chosen = production(row);
    const query = row.hook_query ?? row.q;
    chosen.forEach((c, i) => {
      const good = isRelevantHit(row, c.hit.id);
      const key = `${row.set}|${row.embedder}|${row.event ?? 'prompt'}|place ${i + 1}`;
      const t = tally.get(key) ?? { good: 0, bad: 0, unan: 0 };
      if (row.relevant.length === 0) t.unan++; else if (good) t.good++; else t.bad++;
      tally.set(key, t);
      if (set !== null && (row.embedder === 'use-lite' || hybridRow(row))) {
        const hits = row.results.map(hitOf);
        console.log(`${row.embedder.padEnd(15)} ${(row.event ?? 'prompt').slice(0, 10).padEnd(10)} ${good ? 'GOOD' : row.relevant.length ? 'bad ' : 'UNAN'} #${i + 1}/${chosen.length} ${c.relevance.reason} m${c.relevance.matched}/${contentTerms(query).size} pos ${hits.indexOf(c.hit) + 1} s${c.hit.score.toFixed(3)} b${(c.hit.signals.bm25 ?? 0).toFixed(2)} ratio ${bm25Ratio(hits, c.hit).toFixed(2)} r${c.hit.ranks.bm25 ?? '-'}/${c.hit.ranks.vector ?? '-'} v${c.hit.signals.vector?.toFixed(2) ?? '-'} | ${query.slice(0, 60)} | ${c.hit.engram.text.slice(0, 50)}`);
      }
    });
  }
  if (args.includes('--tally10')) for (const [key, t] of [...tally].sort()) console.log(`${key.padEnd(50)} good ${t.good} bad ${t.bad} unanswerable ${t.unan}`);
}

// Round 10 variants: each sets INJECT fields for its run (restored after) and may filter the production choice.
// Every variant runs on main's choice.
interface V10 { name: string; set?: Record<string, unknown>; filter?: (row: Row, chosen: ReturnType<typeof production>) => ReturnType<typeof production> }
function choose10(row: Row, v: V10): ReturnType<typeof production> {
  const inject = INJECT as unknown as Record<string, unknown>;
  const saved: Record<string, unknown> = {};
  for (const [k, value] of Object.entries(v.set ?? {})) { saved[k] = inject[k]; inject[k] = value; }
  try {
    const chosen = production(row);
    return v.filter ? v.filter(row, chosen) : chosen;
  } finally {
    for (const [k, value] of Object.entries(saved)) inject[k] = value;
  }
}
// The round-10 rule (commit 74882c5, withdrawn): with a distilled model (embedder kind `transformers`), a prompt's
// later hit the vectors lead is skipped and the choice goes on to the next result — replayed by running the choice
// over the results without those hits once a first injection is made.
const vectorLedHit = (h: SearchHit): boolean => h.ranks.vector !== null && (h.ranks.bm25 === null || h.ranks.vector < h.ranks.bm25);
function keywordLedLater(row: Row, chosen: ReturnType<typeof production>): ReturnType<typeof production> {
  const first = chosen[0];
  if (!first || !hybridRow(row) || row.model !== 'transformers' || row.abstained || row.weak) return chosen;
  const hits = row.results.map(hitOf).filter((h) => h.id === first.hit.id || !vectorLedHit(h));
  return chooseHits(hits, row.hook_query ?? row.q, { max: INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, promptWinner: true, hybrid: true });
}
const round10Variants: V10[] = [{ name: 'main' }, { name: 'round 10 rule (withdrawn): keywordLedLater', filter: keywordLedLater }];
// (Measured on commit a7dd639 through a seam since removed: a prompt's content terms keeping the tool, path or
// error words GENERIC_TERMS drops — docs/SEARCH.md "Round 10".)
// A hit the vectors lead (vector rank above its BM25 rank) injected together with a hit BM25 ranks higher: the two
// signals order the pair differently; keep the keywords' one.
const bm25Rank = (c: { hit: SearchHit }): number => c.hit.ranks.bm25 ?? 999;
const vectorLed = (c: { hit: SearchHit }): boolean => (c.hit.ranks.vector ?? 999) < bm25Rank(c);
for (const scope of ['any', 'bm25-first', 'vector-first']) round10Variants.push({
  name: `vector-led rides with a BM25-higher one: dropped (${scope})`,
  filter: (row, chosen) => {
    if (!hybridRow(row) || chosen.length < 2) return chosen;
    return chosen.filter((c) => !(vectorLed(c) && chosen.some((o) => o !== c && bm25Rank(o) < bm25Rank(c) && (scope === 'any' || (scope === 'bm25-first' ? bm25Rank(o) === 1 : c.hit.ranks.vector === 1)))));
  },
});
round10Variants.push({ name: 'prompt: at most one injection', filter: (row, chosen) => (hybridRow(row) ? chosen.slice(0, 1) : chosen) });
round10Variants.push({ name: 'prompt: second+ must be BM25-led', filter: (row, chosen) => (hybridRow(row) ? chosen.filter((c, i) => i === 0 || !vectorLed(c)) : chosen) });
const distilled = (row: Row): boolean => row.model === 'transformers';
round10Variants.push({ name: 'K1 distilled: second+ must be BM25-led', filter: (row, chosen) => (hybridRow(row) && distilled(row) ? chosen.filter((c, i) => i === 0 || !vectorLed(c)) : chosen) });
for (const scope of ['any', 'vector-first']) round10Variants.push({
  name: `K2 distilled: vector-led rides with BM25-higher dropped (${scope})`,
  filter: (row, chosen) => {
    if (!hybridRow(row) || !distilled(row) || chosen.length < 2) return chosen;
    return chosen.filter((c) => !(vectorLed(c) && chosen.some((o) => o !== c && bm25Rank(o) < bm25Rank(c) && (scope === 'any' || c.hit.ranks.vector === 1))));
  },
});
for (const depth of [1, 2, 3]) round10Variants.push({ name: `K1b distilled: second+ needs BM25 rank <= ${depth}`, filter: (row, chosen) => (hybridRow(row) && distilled(row) ? chosen.filter((c, i) => i === 0 || bm25Rank(c) <= depth) : chosen) });
for (const gap of [1, 2, 3]) round10Variants.push({ name: `K1c distilled: second+ vector-led by >= ${gap} ranks dropped`, filter: (row, chosen) => (hybridRow(row) && distilled(row) ? chosen.filter((c, i) => i === 0 || bm25Rank(c) - (c.hit.ranks.vector ?? 999) < gap) : chosen) });
round10Variants.push({ name: 'K1d all models: second+ vector-led dropped when the first is BM25-led', filter: (row, chosen) => (hybridRow(row) && chosen[0] && !vectorLed(chosen[0]) ? chosen.filter((c, i) => i === 0 || !vectorLed(c)) : chosen) });
round10Variants.push({ name: 'K1e distilled: second+ vector-led dropped when the first is BM25-led', filter: (row, chosen) => (hybridRow(row) && distilled(row) && chosen[0] && !vectorLed(chosen[0]) ? chosen.filter((c, i) => i === 0 || !vectorLed(c)) : chosen) });
round10Variants.push({ name: 'K1f distilled: second+ vector-led with fewer terms than the first dropped', filter: (row, chosen) => (hybridRow(row) && distilled(row) && chosen[0] ? chosen.filter((c, i) => i === 0 || !(vectorLed(c) && c.relevance.matched < chosen[0]!.relevance.matched)) : chosen) });
round10Variants.push({ name: 'K1g distilled: second+ vector-led with no more terms than the first dropped', filter: (row, chosen) => (hybridRow(row) && distilled(row) && chosen[0] ? chosen.filter((c, i) => i === 0 || !(vectorLed(c) && c.relevance.matched <= chosen[0]!.relevance.matched)) : chosen) });
round10Variants.push({ name: 'K1h all: second+ vector-led with fewer terms than the first dropped', filter: (row, chosen) => (hybridRow(row) && chosen[0] ? chosen.filter((c, i) => i === 0 || !(vectorLed(c) && c.relevance.matched < chosen[0]!.relevance.matched)) : chosen) });
round10Variants.push({ name: 'K4 distilled: at most one injection', filter: (row, chosen) => (hybridRow(row) && distilled(row) ? chosen.slice(0, 1) : chosen) });
// Coverage over the prompt's terms some memory of the set holds (the store's vocabulary; dialogue: the union of its
// conversations, an approximation): a word no memory holds cannot be matched by any, so it should not dilute coverage.
const setDirs: Record<string, string> = { eval: 'eval', conversations: 'eval-conversations', lessons: 'eval-lessons', dialogue: 'eval-dialogue' };
const vocab = new Map<string, Set<string>>();
function vocabOf(set: string): Set<string> {
  let v = vocab.get(set);
  if (!v) {
    v = new Set();
    for (const line of readFileSync(`fixtures/${setDirs[set]}/memories.jsonl`, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const m = JSON.parse(line) as { text: string; title?: string; category?: string; tags?: string[] };
      for (const t of searchTerms(`${m.title ?? ''} ${m.text} ${m.category ?? ''} ${(m.tags ?? []).join(' ')}`)) v.add(t);
    }
    vocab.set(set, v);
  }
  return v;
}
round10Variants.push({
  name: 'prompt coverage over held terms',
  filter: (row, chosen) => {
    if (row.event !== null && row.event !== 'UserPromptSubmit') return chosen;
    if (row.abstained || row.weak) return chosen;
    const all = contentTerms(row.hook_query ?? row.q);
    const held = new Set([...all].filter((t) => vocabOf(row.set).has(t)));
    if (held.size === 0 || held.size === all.size) return chosen;
    // Replay chooseHits with the held terms only: pass a query made of them (terms are already stems; searchTerms of a stem is the stem, mostly).
    return chooseHits(row.results.map(hitOf), [...held].join(' '), { max: INJECT.promptMax, alreadyShown: new Set(), embedderKind: row.model, promptWinner: true, hybrid: hybridRow(row) });
  },
});
// The prompt winner (gap 1.7 kept) with its coverage counted over the terms some memory holds.
for (const gap of [1.7, 1.5]) round10Variants.push({
  name: `prompt winner over held terms, gap ${gap}`,
  filter: (row, chosen) => {
    if (!hybridRow(row) || chosen.length > 0 || row.abstained || row.weak) return chosen;
    const all = contentTerms(row.hook_query ?? row.q);
    const held = new Set([...all].filter((t) => vocabOf(row.set).has(t)));
    const hits = row.results.map(hitOf);
    const first = hits.find((h) => h.ranks.bm25 === 1);
    if (!first || held.size === 0 || bm25Ratio(hits, first) < gap) return chosen;
    const found = relevance(first, held, row.model);
    return found.matched >= 2 && found.coverage >= INJECT.promptWinner.minCoverage ? [{ hit: first, relevance: found }] : chosen;
  },
});
// Phrase evidence: a result holding two of the prompt's content words side by side, in the prompt's order (stems,
// stop words out, as BM25 reads both).
function sharedPairs(query: string, text: string): number {
  const q = searchTerms(query).filter((t) => contentTerms(t).size > 0);
  const h = searchTerms(text);
  const pairs = new Set<string>();
  for (let i = 0; i + 1 < h.length; i++) pairs.add(`${h[i]} ${h[i + 1]}`);
  let n = 0;
  for (let i = 0; i + 1 < q.length; i++) if (q[i] !== q[i + 1] && pairs.has(`${q[i]} ${q[i + 1]}`)) n++;
  return n;
}
for (const where of ['bm25-first', 'first']) for (const gap of [1, 1.2, 1.4]) for (const minMatched of [2]) round10Variants.push({
  name: `A2 phrase admit (${where}, gap ${gap}, m>=${minMatched})`,
  filter: (row, chosen) => {
    if (!hybridRow(row) || chosen.length > 0 || row.abstained || row.weak) return chosen;
    const hits = row.results.map(hitOf);
    const first = where === 'first' ? hits[0] : hits.find((h) => h.ranks.bm25 === 1);
    if (!first) return chosen;
    const query = row.hook_query ?? row.q;
    const found = relevance(first, contentTerms(query), row.model, true);
    if (found.matched < minMatched || bm25Ratio(hits, first) < gap) return chosen;
    if (sharedPairs(query, `${first.engram.title ?? ''} ${first.engram.text}`) < 1) return chosen;
    return [{ hit: first, relevance: found }];
  },
});
// Per event kind: the lexical rule's numbers for tool events or prompts alone.
const withLexical = (lexical: Record<string, number>, kind: 'tool' | 'prompt') => (row: Row, chosen: ReturnType<typeof production>): ReturnType<typeof production> => {
  const tool = row.event !== null && row.event !== 'UserPromptSubmit';
  if ((kind === 'tool') !== tool) return chosen;
  const lex = INJECT.lexical as unknown as Record<string, number>;
  const saved = { ...lex };
  Object.assign(lex, lexical);
  try { return production(row); } finally { Object.assign(lex, saved); }
};
for (const kind of ['tool', 'prompt'] as const) {
  for (const minCoverage of [0.34, 0.4, 0.45, 0.6, 0.67]) round10Variants.push({ name: `${kind}: minCoverage ${minCoverage}`, filter: withLexical({ minCoverage }, kind) });
  for (const strongMatched of [3, 5]) round10Variants.push({ name: `${kind}: strongMatched ${strongMatched}`, filter: withLexical({ strongMatched }, kind) });
  for (const shortQueryTerms of [1, 3]) round10Variants.push({ name: `${kind}: shortQueryTerms ${shortQueryTerms}`, filter: withLexical({ shortQueryTerms }, kind) });
  round10Variants.push({ name: `${kind}: minMatched 3`, filter: withLexical({ minMatched: 3 }, kind) });
}
// A prompt's later injections admitted from further behind the first (relativeScore, prompts only), on main's choice
// or with the round-10 rule (the vector-led ones the distilled models add are dropped first).
for (const rel of [0.85, 0.8, 0.75]) for (const withRule of [false, true]) round10Variants.push({
  name: `prompt relativeScore ${rel}${withRule ? ' + keywordLedLater' : ''}`,
  filter: (row, chosen) => {
    if (row.event !== null && row.event !== 'UserPromptSubmit') return chosen;
    const inject = INJECT as unknown as { relativeScore: number };
    const saved = inject.relativeScore;
    inject.relativeScore = rel;
    try { return withRule ? keywordLedLater(row, production(row)) : production(row); } finally { inject.relativeScore = saved; }
  },
});
// The semantic floor lowered where both lists put the hit first (the keywords agree completely), per kind.
for (const [tf, uf] of [[0.45, 0.65], [0.4, 0.6], [0.35, 0.55], [0.45, 0.7], [0.4, 0.7]] as const) round10Variants.push({
  name: `both first: floor ${tf} / use-lite ${uf}`,
  filter: (row, chosen) => {
    if (!hybridRow(row) || chosen.length > 0 || row.abstained || row.weak) return chosen;
    const hits = row.results.map(hitOf);
    const first = hits.find((h) => h.ranks.bm25 === 1 && h.ranks.vector === 1);
    if (!first || (first.signals.vector ?? 0) < (row.model === 'use-lite' ? uf : tf)) return chosen;
    return [{ hit: first, relevance: { ...relevance(first, contentTerms(row.hook_query ?? row.q), row.model, true), reason: 'semantic' as const } }];
  },
});
// When the first injection is vector-led, BM25's first hit rides along if the relevance rule keeps it (the keywords'
// answer next to the vectors'), on the shipped choice; distilled only or every model.
for (const kinds of ['distilled', 'all']) round10Variants.push({
  name: `vector-led first: BM25's first rides along (${kinds})`,
  filter: (row, main) => {
    const chosen = keywordLedLater(row, main);
    if (!hybridRow(row) || (kinds === 'distilled' && !distilled(row)) || !chosen[0] || !vectorLed(chosen[0]) || chosen.length >= INJECT.promptMax) return chosen;
    const hits = row.results.map(hitOf);
    const top = hits.find((h) => h.ranks.bm25 === 1);
    if (!top || chosen.some((c) => c.hit.id === top.id)) return chosen;
    const found = relevance(top, contentTerms(row.hook_query ?? row.q), row.model, true);
    return found.reason === 'lexical' ? [...chosen, { hit: top, relevance: found }] : chosen;
  },
});
// The mirror of round 7: a prompt's lexical injection needs the vector list's top N (the vectors must not contradict
// the keywords), for every lexical hit or only the weakest clause (two terms at coverage under 0.6).
for (const scope of ['all', 'weak']) for (const depth of [3, 5, 10, 20]) for (const kinds of ['all', 'distilled']) round10Variants.push({
  name: `M lexical needs vector top ${depth} (${scope}, ${kinds})`,
  filter: (row, chosen) => {
    if (!hybridRow(row) || (kinds === 'distilled' && !distilled(row))) return chosen;
    return chosen.filter((c) => {
      if (c.relevance.reason !== 'lexical') return true;
      if (scope === 'weak' && !(c.relevance.matched < INJECT.lexical.strongMatched && c.relevance.coverage < 0.6)) return true;
      return c.hit.ranks.vector !== null && c.hit.ranks.vector <= depth;
    });
  },
});
if (args.includes('--round10')) printVariants(round10Variants, choose10, 44);
if (args.includes('--dropped10')) {
  for (const row of rows) {
    if (!hybridRow(row)) continue;
    const chosen = production(row);
    if (chosen.length < 2) continue;
    const terms = contentTerms(row.hook_query ?? row.q);
    for (const c of chosen) {
      if (!vectorLed(c)) continue;
      const higher = chosen.filter((o) => o !== c && bm25Rank(o) < bm25Rank(c));
      if (higher.length === 0) continue;
      const good = isRelevantHit(row, c.hit.id);
      const hg = higher.map((o) => (isRelevantHit(row, o.hit.id) ? 'G' : 'b')).join('');
      console.log(`${row.set.padEnd(13)} ${row.embedder.padEnd(15)} ${good ? 'GOOD' : row.relevant.length ? 'bad ' : 'UNAN'} place ${chosen.indexOf(c) + 1}/${chosen.length} higher ${hg} r${c.hit.ranks.bm25}/${c.hit.ranks.vector} vs ${higher.map((o) => `${o.hit.ranks.bm25}/${o.hit.ranks.vector}`).join(',')} m${c.relevance.matched}/${terms.size} vs ${higher.map((o) => o.relevance.matched).join(',')} b/best ${((c.hit.signals.bm25 ?? 0) / Math.max(...higher.map((o) => o.hit.signals.bm25 ?? 0))).toFixed(2)} sim ${c.hit.signals.vector?.toFixed(2)} vs ${higher.map((o) => o.hit.signals.vector?.toFixed(2)).join(',')} only ${chosen.some((o) => o !== c && isRelevantHit(row, o.hit.id)) ? 'no' : 'YES'} | ${(row.hook_query ?? row.q).slice(0, 50)}`);
    }
  }
}
// Round 10: a prompt's first injection by its BM25 lead over every other result (ratio), per set, model and outcome.
if (args.includes('--ratio10')) {
  const buckets = [0.8, 1.0, 1.05, 1.1, 1.2, 1.3, 1.5, 2, 1e9];
  const tally = new Map<string, number[]>();
  for (const row of rows) {
    if (!hybridRow(row)) continue;
    const chosen = production(row);
    const first = chosen[0];
    if (!first) continue;
    const hits = row.results.map(hitOf);
    const own = first.hit.signals.bm25 ?? 0;
    let next = 0;
    for (const h of hits) if (h.id !== first.hit.id) next = Math.max(next, h.signals.bm25 ?? 0);
    const ratio = next > 0 ? own / next : 99;
    const b = buckets.findIndex((x) => ratio < x);
    const outcome = row.relevant.length === 0 ? 'UNAN' : isRelevantHit(row, first.hit.id) ? 'GOOD' : 'bad';
    const key = `${row.set}|${row.embedder}|${outcome}`;
    const arr = tally.get(key) ?? buckets.map(() => 0);
    arr[b]!++;
    tally.set(key, arr);
  }
  console.log(`ratio < ${buckets.join(' | ')}`);
  for (const [k, arr] of [...tally].sort()) console.log(`${k.padEnd(34)} ${arr.join(' | ')}`);
}
// Round 10: tool events by tool name: injected right / wrong / unanswerable spoke, and withheld by the margin
// (the relevance rule keeps a relevant first hit the margin refuses) — dev, one model (tool events are BM25 alone).
if (args.includes('--tools10')) {
  const tally = new Map<string, Record<string, number>>();
  for (const row of rows) {
    if (row.embedder !== 'use-lite' || row.event === null || row.event === 'UserPromptSubmit') continue;
    const tool = `${row.event}:${(row.hook_query ?? row.q).split(' ')[0]}`;
    const chosen = production(row);
    const hits = row.results.map(hitOf);
    const noMargin = row.abstained || row.weak ? [] : chooseHits(hits, row.hook_query ?? row.q, { max: INJECT.toolMax, alreadyShown: new Set(), embedderKind: row.model });
    const t = tally.get(tool) ?? {};
    const add = (k: string): void => { t[k] = (t[k] ?? 0) + 1; };
    add(row.relevant.length ? 'answerable' : 'unanswerable');
    if (chosen.length) add(row.relevant.length === 0 ? 'UNAN-spoke' : isRelevantHit(row, chosen[0]!.hit.id) ? 'right' : 'wrong');
    else if (noMargin.length) add(row.relevant.length === 0 ? 'margin-saved-unan' : isRelevantHit(row, noMargin[0]!.hit.id) ? 'margin-withheld-right' : 'margin-withheld-wrong');
    tally.set(tool, t);
  }
  for (const [k, t] of [...tally].sort()) console.log(`${k.padEnd(30)} ${Object.entries(t).sort().map(([a, b]) => `${a} ${b}`).join(' · ')}`);
}
// `--diff10 NAME`: the rows where the round-10 variant NAME (a prefix) chooses differently from main's choice.
if (args.includes('--diff10')) {
  const prefix = args[args.indexOf('--diff10') + 1] as string;
  const v = round10Variants.find((x) => x.name.startsWith(prefix));
  if (!v) throw new Error(`no variant ${prefix}`);
  const tag = (row: Row, cs: ReturnType<typeof production>): string => cs.map((c) => `${row.relevant.length === 0 ? 'U' : isRelevantHit(row, c.hit.id) ? 'G' : 'b'}${c.hit.ranks.bm25 ?? '-'}/${c.hit.ranks.vector ?? '-'}:m${c.relevance.matched}`).join(',') || '∅';
  for (const row of rows) {
    const a = choose10(row, { name: 'main' });
    const b = choose10(row, v);
    if (a.map((c) => c.hit.id).join() === b.map((c) => c.hit.id).join()) continue;
    if (row.embedder !== 'use-lite' && row.event !== null && row.event !== 'UserPromptSubmit') continue;
    console.log(`${row.set.padEnd(13)} ${row.embedder.padEnd(15)} ${(row.event ?? 'prompt').slice(0, 10).padEnd(10)} ${tag(row, a)} → ${tag(row, b)} |${contentTerms(row.hook_query ?? row.q).size}| ${(row.hook_query ?? row.q).slice(0, 70)}`);
  }
}
// Round 10: a prompt's second and third injections, by embedder kind and whether the vectors lead them (vector rank
// above BM25 rank): right / wrong / on an unanswerable prompt, and how often it was the prompt's only right one.
if (args.includes('--later10')) {
  const tally = new Map<string, { good: number; bad: number; unan: number; onlyGood: number }>();
  for (const row of rows) {
    if (!hybridRow(row)) continue;
    const chosen = production(row);
    chosen.slice(1).forEach((c) => {
      const key = `${row.set}|${row.model}|${vectorLed(c) ? 'vector-led' : 'BM25-led'}`;
      const t = tally.get(key) ?? { good: 0, bad: 0, unan: 0, onlyGood: 0 };
      const good = isRelevantHit(row, c.hit.id);
      if (row.relevant.length === 0) t.unan++; else if (good) t.good++; else t.bad++;
      if (good && !chosen.some((o) => o !== c && isRelevantHit(row, o.hit.id))) t.onlyGood++;
      tally.set(key, t);
    });
  }
  for (const [k, t] of [...tally].sort()) console.log(`${k.padEnd(40)} right ${t.good} (the prompt's only right one ${t.onlyGood}) wrong ${t.bad} unanswerable ${t.unan}`);
}
if (args.includes('--semantic10')) {
  for (const row of rows) {
    if (!hybridRow(row)) continue;
    const chosen = production(row);
    const hits = row.results.map(hitOf);
    const terms = contentTerms(row.hook_query ?? row.q);
    for (const c of chosen) {
      if (c.relevance.reason !== 'semantic') continue;
      const vm = vectorMargin(hits, hits.find((h) => h.id === c.hit.id)!);
      console.log(`${row.set.padEnd(13)} ${row.embedder.padEnd(15)} ${row.relevant.length === 0 ? 'UNAN' : isRelevantHit(row, c.hit.id) ? 'GOOD' : 'bad '} place ${chosen.indexOf(c) + 1} r${c.hit.ranks.bm25}/${c.hit.ranks.vector} sim ${c.hit.signals.vector?.toFixed(2)} vmargin ${vm.toFixed(3)} m${c.relevance.matched}/${terms.size} ratio ${bm25Ratio(hits, hits.find((h) => h.id === c.hit.id)!).toFixed(2)} | ${(row.hook_query ?? row.q).slice(0, 60)}`);
    }
  }
}
// Round 10: a prompt's first injection, by embedder kind, whether the vectors lead it, and whether another injection
// BM25 ranks higher rides with it: right / wrong / unanswerable.
if (args.includes('--first10')) {
  const tally = new Map<string, { good: number; bad: number; unan: number }>();
  for (const row of rows) {
    if (!hybridRow(row)) continue;
    const chosen = production(row);
    const c = chosen[0];
    if (!c) continue;
    const rides = chosen.slice(1).some((o) => bm25Rank(o) < bm25Rank(c));
    const key = `${row.set}|${row.model}|${vectorLed(c) ? 'vector-led' : 'BM25-led'}|${c.relevance.reason}${rides ? '|a BM25-higher one rides' : ''}`;
    const t = tally.get(key) ?? { good: 0, bad: 0, unan: 0 };
    if (row.relevant.length === 0) t.unan++; else if (isRelevantHit(row, c.hit.id)) t.good++; else t.bad++;
    tally.set(key, t);
  }
  for (const [k, t] of [...tally].sort()) console.log(`${k.padEnd(64)} right ${t.good} wrong ${t.bad} unanswerable ${t.unan}`);
}
// (`--timing10`, the rule's cost in chooseHits, ran in choose.ts on commit 74882c5.)
