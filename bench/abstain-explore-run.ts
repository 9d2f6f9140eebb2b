// Round 6 (gates): abstain rules replayed on the real engine's dev responses (bench/abstain-dump.mjs). Each rule
// says, per query, whether the search answers; scored like bench/quality.mjs (silence on unanswerable queries,
// answerable recall@3 kept), mean over the set × embedder cells and the worst cell. Dev only.
import { readFileSync } from 'node:fs';
import { queryNames } from './_eval-args.js';
import { searchTerms } from '../src/services/recall/index.js';

const args = process.argv.slice(2);
const file = args[args.indexOf('--dump') + 1] as string;
interface Hit { id: number; mem: string[]; ranks: { bm25: number | null; vector: number | null; anchor: number | null }; bm25: number | null; sim: number | null; held: string[]; text: string }
interface Row {
  set: string; embedder: string; store: number; q: string; relevant: string[]; kind: string | null; weak: string | null;
  nearest: { mean: number; sd: number; n: number } | null;
  /** Round 7: per k = 1…6, quantiles (10, 25, 50, 75, 90 %) of the BM25 score each memory gets for its own k rarest terms. */
  self?: Record<string, number[]>;
  abstain: { weak: string | null; terms: Array<{ term: string; weight: number }>; unknown: { terms: string[]; share: number }; best: unknown } | null;
  results: Hit[];
}
const rows = JSON.parse(readFileSync(file, 'utf8')) as Row[];

/** What a rule can read about one query. */
export interface Q {
  row: Row;
  top: Hit[];
  weights: Array<{ term: string; weight: number }>;
  unknown: Set<string>;
  unknownShare: number;
  known: number;
  total: number;
  /** Known-weight coverage of each top-3 hit. */
  cov: number[];
  /** Whole-query coverage of each top-3 hit. */
  covAll: number[];
  names: string[];
  shipped: boolean;
  /** BM25's first score over its second among the results. */
  gap: number;
  /** The vector list's first hit's similarity, as a z-score against the store's nearest-neighbour similarities. */
  zNear: number;
  simTop: number;
  kind: 'use-lite' | 'transformers';
}
const sureOf = { 'use-lite': 0.75, transformers: 0.6 } as const;


const qs: Q[] = rows.map((row) => {
  const weights = row.abstain?.terms ?? [];
  const unknown = new Set(row.abstain?.unknown.terms ?? []);
  const total = weights.reduce((s, t) => s + t.weight, 0);
  const unk = weights.reduce((s, t) => s + (unknown.has(t.term) ? t.weight : 0), 0);
  const known = total - unk;
  const top = row.results.slice(0, 3);
  const held = (h: Hit): number => weights.filter((t) => h.held.includes(t.term)).reduce((s, t) => s + t.weight, 0);
  const b = row.results.map((h) => h.bm25 ?? 0).filter((x) => x > 0).sort((x, y) => y - x);
  const vFirst = row.results.find((h) => h.ranks.vector === 1);
  const simTop = Math.max(0, ...row.results.map((h) => h.sim ?? 0));
  return {
    row, top, weights, unknown, unknownShare: total > 0 ? unk / total : 0, known, total,
    cov: top.map((h) => (known > 0 ? held(h) / known : 0)),
    covAll: top.map((h) => (total > 0 ? held(h) / total : 0)),
    names: queryNames(row.q, weights.map((t) => t.term)),
    shipped: row.weak === null,
    gap: b[1] ? (b[0] as number) / b[1] : b[0] ? 99 : 0,
    zNear: row.nearest && row.nearest.sd > 0 && vFirst?.sim != null ? (vFirst.sim - row.nearest.mean) / row.nearest.sd : Number.NaN,
    simTop,
    kind: row.embedder === 'use-lite' ? 'use-lite' : 'transformers',
  };
});

function recall3(q: Q): number {
  const rel = new Set(q.row.relevant);
  const found = new Set<string>();
  for (const h of q.top) for (const m of h.mem) if (rel.has(m)) found.add(m);
  return rel.size ? found.size / rel.size : 0;
}

type Rule = (q: Q) => boolean;
function score(rule: Rule): { s: number; k: number; ws: number; wk: number; per: Record<string, [number, number]> } {
  const cells = new Map<string, Q[]>();
  for (const q of qs) cells.set(`${q.row.set}|${q.row.embedder}`, [...(cells.get(`${q.row.set}|${q.row.embedder}`) ?? []), q]);
  let s = 0, k = 0, ws = 1, wk = 1;
  const per: Record<string, [number, number]> = {};
  for (const [key, list] of cells) {
    const un = list.filter((q) => q.row.relevant.length === 0);
    const an = list.filter((q) => q.row.relevant.length > 0);
    const si = un.filter((q) => !rule(q)).length / Math.max(1, un.length);
    const r3 = an.reduce((a, q) => a + recall3(q), 0);
    const ke = an.reduce((a, q) => a + (rule(q) ? recall3(q) : 0), 0) / Math.max(1e-9, r3);
    s += si; k += ke; ws = Math.min(ws, si); wk = Math.min(wk, ke);
    const set = key.split('|')[0] as string;
    const p = (per[set] ??= [0, 0]);
    p[0] += si / 3; p[1] += ke / 3;
  }
  return { s: s / cells.size, k: k / cells.size, ws, wk, per };
}

const out: Array<{ name: string; r: ReturnType<typeof score> }> = [];
const add = (name: string, rule: Rule): void => { out.push({ name, r: score(rule) }); };

// The shipped rule, recomputed from its parts (must equal `weak === null`).
const agreed = (h: Hit): boolean => (h.ranks.bm25 ?? 99) <= 3 && (h.ranks.vector ?? 99) <= 3;
const ruleWith = (u: number, c: number, a = 0.15) => (q: Q): boolean =>
  q.top.some((h, i) => (h.sim ?? 0) >= sureOf[q.kind] || (agreed(h) && (q.covAll[i] as number) >= a) || (q.unknownShare <= u && ((q.cov[i] as number) >= c || (agreed(h) && (q.cov[i] as number) >= a))));
add('the engine\'s verdict (weak === null: main\'s rule before round 10, round 10\'s after)', (q) => q.shipped);
add('shipped, recomputed (0.5 / 0.45)', ruleWith(0.5, 0.45));
for (const u of [0.4, 0.45, 0.55, 0.6]) add(`unknown ≤ ${u}, coverage 0.45`, ruleWith(u, 0.45));
for (const c of [0.4, 0.5, 0.55, 0.6]) add(`unknown ≤ 0.5, coverage ${c}`, ruleWith(0.5, c));

const base = ruleWith(0.5, 0.45);
const loose = ruleWith(0.6, 0.4);
// 1. Agreement of the two lists' first hits as evidence of an answer.
const topAgree = (q: Q): boolean => q.row.results.some((h) => h.ranks.bm25 === 1 && h.ranks.vector === 1);
add('shipped and (lists share their first hit or known coverage ≥ 0.6)', (q) => base(q) && (topAgree(q) || q.cov.some((c) => c >= 0.6)));
add('loose (0.6 / 0.4) and (lists share their first hit or known coverage ≥ 0.6)', (q) => loose(q) && (topAgree(q) || q.cov.some((c) => c >= 0.6)));
// 2. The vector list's first hit against the store's own nearest-neighbour similarities (z), with BM25's gap.
for (const z of [-1, -0.5, 0, 0.5, 1, 1.5]) for (const g of [1.2, 1.5, 2, 99]) {
  add(`shipped and (zNear ≥ ${z} or gap ≥ ${g} or vectors skipped)`, (q) => base(q) && (Number.isNaN(q.zNear) || q.zNear >= z || q.gap >= g));
  add(`loose and (zNear ≥ ${z} or gap ≥ ${g} or vectors skipped)`, (q) => loose(q) && (Number.isNaN(q.zNear) || q.zNear >= z || q.gap >= g));
}
// 3. Joint coverage in ONE hit: the query's names (or its heaviest term) and one more word, or the same hit near in
// vector space (the attribute matched by meaning).
const holds = (h: Hit, terms: string[]): boolean => terms.every((t) => h.held.includes(t));
for (const z of [0, 0.5, 1, 1.5, 99]) for (const rule of [['shipped', base], ['loose', loose]] as const) {
  add(`${rule[0]}, names + (another word, or zNear of the hit ≥ ${z}) in one top hit`, (q) => {
    if (!rule[1](q)) return false;
    if (q.names.length === 0) return true;
    return q.top.some((h) => {
      if (!holds(h, q.names)) return false;
      const other = h.held.some((t) => !q.names.includes(t));
      const zh = q.row.nearest && h.sim != null ? (h.sim - q.row.nearest.mean) / q.row.nearest.sd : -9;
      return other || zh >= z;
    });
  });
  add(`${rule[0]}, names + (zNear of the hit ≥ ${z}) in one top hit`, (q) => {
    if (!rule[1](q)) return false;
    if (q.names.length === 0) return true;
    return q.top.some((h) => {
      if (!holds(h, q.names)) return false;
      const zh = q.row.nearest && h.sim != null ? (h.sim - q.row.nearest.mean) / q.row.nearest.sd : -9;
      return zh >= z;
    });
  });
}
// 4. Absolute evidence: BM25's best score among the results (the IDF-weighted, saturated sum of the query words the
// best-matching memory holds), raw or in units of the store's unseen-word IDF (ln N: stores of different sizes).
const bm25Top = (q: Q): number => Math.max(0, ...q.row.results.map((h) => h.bm25 ?? 0));
const storeN = (q: Q): number => q.row.nearest?.n ?? q.row.results.length;
for (const t of [2, 4, 6, 8, 10, 12]) for (const rule of [['shipped', base], ['loose', loose], ['0.6 / 0.45', ruleWith(0.6, 0.45)], ['0.55 / 0.45', ruleWith(0.55, 0.45)]] as const) {
  add(`${rule[0]} and BM25 best ≥ ${t}`, (q) => rule[1](q) && bm25Top(q) >= t);
  add(`${rule[0]} and BM25 best ≥ ${t / 5} × ln N`, (q) => rule[1](q) && bm25Top(q) >= (t / 5) * Math.log(storeN(q)));
}
// 4b. The floor on the lexical path only (agreement and a sure similarity still answer on their own).
const ruleFloor = (u: number, c: number, floor: (q: Q) => boolean, a = 0.15) => (q: Q): boolean =>
  q.top.some((h, i) => (h.sim ?? 0) >= sureOf[q.kind] || (agreed(h) && (q.covAll[i] as number) >= a) || (floor(q) && q.unknownShare <= u && ((q.cov[i] as number) >= c || (agreed(h) && (q.cov[i] as number) >= a))));
const ruleAll = (u: number, c: number, floor: (q: Q) => boolean) => (q: Q): boolean => ruleWith(u, c)(q) && floor(q);
for (const m of [0.8, 0.9, 1, 1.1, 1.2]) for (const [u, c] of [[0.5, 0.45], [0.6, 0.45], [0.6, 0.4], [0.7, 0.4], [0.7, 0.35], [1, 0.35], [1, 0.3]] as const) {
  add(`fine: floor ${m} × ln N on every path, unknown ≤ ${u}, coverage ${c}`, ruleAll(u, c, (q) => bm25Top(q) >= m * Math.log(storeN(q))));
  add(`fine: floor ${m} × ln N on the lexical path, unknown ≤ ${u}, coverage ${c}`, ruleFloor(u, c, (q) => bm25Top(q) >= m * Math.log(storeN(q))));
}
if (args.includes('--floor-grid')) {
  for (const m of [0, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1]) for (const u of [0.45, 0.5, 0.55, 0.6, 0.65, 0.7]) for (const c of [0.35, 0.4, 0.425, 0.45, 0.5]) for (const path of ['every', 'lexical'] as const) {
    const floor = (q: Q): boolean => bm25Top(q) >= m * Math.log(storeN(q));
    add(`grid: floor ${m} × ln N (${path}), unknown ≤ ${u}, coverage ${c}`, path === 'every' ? ruleAll(u, c, floor) : ruleFloor(u, c, floor));
  }
}
// 5. A word no memory holds raises the coverage the known words need (the store does not know part of the topic).
if (args.includes('--unseen-grid')) {
  const ruleEsc = (u: number, c0: number, c1: number, a = 0.15) => (q: Q): boolean => {
    const c = q.unknown.size > 0 ? c1 : c0;
    return q.top.some((h, i) => (h.sim ?? 0) >= sureOf[q.kind] || (agreed(h) && (q.covAll[i] as number) >= a) || (q.unknownShare <= u && ((q.cov[i] as number) >= c || (agreed(h) && (q.cov[i] as number) >= a))));
  };
  for (const u of [0.5, 0.55, 0.6, 0.7, 1]) for (const c0 of [0.35, 0.4, 0.45]) for (const c1 of [0.45, 0.5, 0.6, 0.7, 0.8, 1.01]) add(`esc: unknown ≤ ${u}, coverage ${c0}, with an unknown word ${c1}`, ruleEsc(u, c0, c1));
}
// 6. Evidence that lets a stricter rule answer: both lists' first hit is the same memory, or BM25's best holds a rare
// word's worth of evidence.
if (args.includes('--or-grid')) {
  for (const [u, c] of [[0.4, 0.45], [0.45, 0.5], [0.4, 0.5], [0.5, 0.55], [0.5, 0.6], [0.4, 0.6]] as const) {
    const strict = ruleWith(u, c);
    for (const a of [0.2, 0.3, 0.45]) add(`or: strict ${u} / ${c}, or the lists' first hit is one memory holding ≥ ${a} of the known weight`, (q) => strict(q) || q.row.results.some((h, i) => i < 3 && h.ranks.bm25 === 1 && h.ranks.vector === 1 && (q.cov[i] ?? 0) >= a && q.unknownShare <= 0.5));
    for (const m of [1, 1.2, 1.4]) add(`or: strict ${u} / ${c}, or BM25 best ≥ ${m} × ln N and known coverage ≥ 0.45`, (q) => strict(q) || (bm25Top(q) >= m * Math.log(storeN(q)) && q.unknownShare <= 0.5 && q.cov.some((x) => x >= 0.45)));
  }
}
// 7. The agreement path's share and the sure similarity, with the unknown share and coverage.
if (args.includes('--agree-grid')) {
  const ruleAS = (u: number, c: number, a: number, sure: number) => (q: Q): boolean =>
    q.top.some((h, i) => (h.sim ?? 0) >= sureOf[q.kind] + sure || (agreed(h) && (q.covAll[i] as number) >= a) || (q.unknownShare <= u && ((q.cov[i] as number) >= c || (agreed(h) && (q.cov[i] as number) >= a))));
  for (const u of [0.45, 0.5, 0.55, 0.6]) for (const c of [0.4, 0.45, 0.5]) for (const a of [0.15, 0.2, 0.25, 0.3, 0.4]) for (const sure of [0, 0.05, 0.1, 1]) add(`agree: unknown ≤ ${u}, coverage ${c}, agreed ${a}, sure +${sure}`, ruleAS(u, c, a, sure));
}
// Round 7: BM25's best score per unit of the query's weight (ΣIDF of its terms): how much evidence the best memory
// holds for the words asked, length-aware by construction (a longer query needs more score). Within queries of the
// same number of terms it tells answers from unanswerable queries better than the raw score on the dialogue set.
if (args.includes('--round7')) {
  const perWeight = (q: Q): number => (q.total > 0 ? bm25Top(q) / q.total : 0);
  for (const x of [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2]) for (const [u, c] of [[0.5, 0.45], [0.55, 0.45], [0.6, 0.45], [0.6, 0.4], [0.7, 0.4], [0.7, 0.35], [1, 0.35], [1, 0.3]] as const) {
    add(`r7: BM25 best / ΣIDF ≥ ${x} on every path, unknown ≤ ${u}, coverage ${c}`, ruleAll(u, c, (q) => perWeight(q) >= x));
    add(`r7: BM25 best / ΣIDF ≥ ${x} on the lexical path, unknown ≤ ${u}, coverage ${c}`, ruleFloor(u, c, (q) => perWeight(q) >= x));
  }
  // The store's own scale (bench/abstain-dump.mjs `self`): BM25's best score against what a memory of this store scores
  // for a query of its own k rarest terms, k = the query's known terms (1…6): as a share of that median, or above a
  // low quantile of it.
  const selfAt = (q: Q, i: number): number => {
    const k = Math.max(1, Math.min(6, q.weights.length - q.unknown.size));
    return q.row.self?.[String(k)]?.[i] ?? Number.NaN;
  };
  for (const x of [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]) for (const [u, c] of [[0.5, 0.45], [0.55, 0.45], [0.6, 0.45], [0.6, 0.4], [0.7, 0.4], [1, 0.35]] as const) {
    const floor = (q: Q): boolean => !(bm25Top(q) < x * selfAt(q, 2));
    add(`r7: BM25 best ≥ ${x} × the store's median self-score on every path, unknown ≤ ${u}, coverage ${c}`, ruleAll(u, c, floor));
    add(`r7: BM25 best ≥ ${x} × the store's median self-score on the lexical path, unknown ≤ ${u}, coverage ${c}`, ruleFloor(u, c, floor));
  }
  for (const [i, name] of [[0, '10 %'], [1, '25 %']] as const) for (const [u, c] of [[0.5, 0.45], [0.55, 0.45], [0.6, 0.45], [0.6, 0.4], [0.7, 0.4], [1, 0.35]] as const) {
    const floor = (q: Q): boolean => !(bm25Top(q) < selfAt(q, i));
    add(`r7: BM25 best ≥ the store's ${name} self-score on every path, unknown ≤ ${u}, coverage ${c}`, ruleAll(u, c, floor));
    add(`r7: BM25 best ≥ the store's ${name} self-score on the lexical path, unknown ≤ ${u}, coverage ${c}`, ruleFloor(u, c, floor));
  }
  // A floor that grows with the query's length: m × ln N × (terms / 4)^p (p 0: round 6's family 4).
  for (const m of [0.6, 0.7, 0.8, 0.9, 1, 1.1, 1.2]) for (const pw of [0.25, 0.5, 0.75, 1]) for (const [u, c] of [[0.5, 0.45], [0.55, 0.45], [0.6, 0.45], [0.6, 0.4], [0.7, 0.4]] as const) {
    const floor = (q: Q): boolean => bm25Top(q) >= m * Math.log(storeN(q)) * (q.weights.length / 4) ** pw;
    add(`r7: floor ${m} × ln N × (terms / 4)^${pw} on every path, unknown ≤ ${u}, coverage ${c}`, ruleAll(u, c, floor));
    add(`r7: floor ${m} × ln N × (terms / 4)^${pw} on the lexical path, unknown ≤ ${u}, coverage ${c}`, ruleFloor(u, c, floor));
  }
}
// Round 10: what the combination of the query's words says, the wh-word's object, and the question without its
// wh-scaffolding as the vectors see it. Reads the store's memories as term sets (`--dump FILE` writes FILE.terms.json).
if (args.includes('--round10')) {
  const termsFile = JSON.parse(readFileSync(`${file}.terms.json`, 'utf8')) as Record<string, Record<string, Record<string, string[]>>>;
  const storeSets = new Map<string, Array<Set<string>>>();
  const storeOf = (q: Q): Array<Set<string>> => {
    const key = `${q.row.set}|${q.row.store}`;
    let list = storeSets.get(key);
    if (!list) {
      list = Object.values(termsFile[q.row.set]?.[String(q.row.store)] ?? {}).map((t) => new Set(t));
      storeSets.set(key, list);
    }
    return list;
  };
  type R10 = Row & { strip?: string; simFullTop?: number; simStripTop?: number; results: Array<Hit & { simFull?: number; simStrip?: number }> };
  /** The query's known terms, heaviest (rarest in the store) first. */
  const telling = (q: Q): string[] => q.weights.filter((t) => !q.unknown.has(t.term)).sort((a, b) => b.weight - a.weight).map((t) => t.term);
  const holdsAll = (held: readonly string[] | Set<string>, terms: string[]): boolean => terms.every((t) => (held instanceof Set ? held.has(t) : held.includes(t)));
  const storeCo = (q: Q, terms: string[]): number => storeOf(q).filter((m) => holdsAll(m, terms)).length;
  const df = (q: Q, t: string): number => storeOf(q).filter((m) => m.has(t)).length;
  const whObject = (q: Q): string | null => (/^\s*(what|which|who|whom|whose|where|when|why|how)\b/i.test(q.row.q) ? (q.weights[0]?.term ?? null) : null);
  const r10 = (q: Q): R10 => q.row as R10;
  // Signals, AUC among the queries the shipped rule answers: answerable with an answer in the top 3 against unanswerable.
  const answered = qs.filter((q) => q.shipped);
  const auc = (name: string, f: (q: Q) => number): void => {
    const pos = answered.filter((q) => q.row.relevant.length > 0 && recall3(q) > 0).map(f).filter((x) => !Number.isNaN(x));
    const neg = answered.filter((q) => q.row.relevant.length === 0).map(f).filter((x) => !Number.isNaN(x));
    let wins = 0;
    for (const a of pos) for (const b of neg) wins += a > b ? 1 : a === b ? 0.5 : 0;
    console.log(`AUC ${(wins / Math.max(1, pos.length * neg.length)).toFixed(3)} (${pos.length} answers / ${neg.length} unanswerable) | ${name}`);
  };
  auc('top-2 telling words held together by one top-3 result', (q) => { const t = telling(q).slice(0, 2); return t.length < 2 ? 1 : q.top.some((h) => holdsAll(h.held, t)) ? 1 : 0; });
  auc('top-2 telling words held together by one top-10 result', (q) => { const t = telling(q).slice(0, 2); return t.length < 2 ? 1 : q.row.results.some((h) => holdsAll(h.held, t)) ? 1 : 0; });
  auc('memories of the store holding the top-2 telling words together (log)', (q) => { const t = telling(q).slice(0, 2); return t.length < 2 ? 9 : Math.log1p(storeCo(q, t)); });
  auc('PMI of the top-2 telling words in the store', (q) => { const t = telling(q).slice(0, 2); if (t.length < 2) return 9; const n = storeOf(q).length; return Math.log((storeCo(q, t) + 0.5) * n / (df(q, t[0] as string) * df(q, t[1] as string))); });
  auc('best single top-3 coverage ÷ union coverage of the top 3', (q) => { const u = new Set(q.top.flatMap((h) => h.held)); const known = q.weights.filter((t) => !q.unknown.has(t.term)); const uw = known.filter((t) => u.has(t.term)).reduce((s, t) => s + t.weight, 0) / Math.max(1e-9, q.known); return uw > 0 ? Math.max(...q.cov) / uw : 0; });
  auc('the wh-word\'s object held by a top-3 result', (q) => { const w = whObject(q); return w === null ? 1 : q.top.some((h) => h.held.includes(w)) ? 1 : 0; });
  auc('the wh-word\'s object held by a top-3 result that holds the names', (q) => { const w = whObject(q); return w === null || q.names.length === 0 ? 1 : q.top.some((h) => h.held.includes(w) && holdsAll(h.held, q.names)) ? 1 : 0; });
  auc('best known coverage in the top 3 (shipped signal)', (q) => Math.max(...q.cov));
  auc('top similarity over the store, full question', (q) => r10(q).simFullTop ?? Number.NaN);
  auc('top similarity over the store, wh-scaffolding removed', (q) => r10(q).simStripTop ?? Number.NaN);
  auc('best top-3 similarity, wh-scaffolding removed', (q) => Math.max(...(r10(q).results.slice(0, 3) as Array<{ simStrip?: number }>).map((h) => h.simStrip ?? -1)));
  auc('wh-stripped minus full top similarity', (q) => (r10(q).simStripTop ?? Number.NaN) - (r10(q).simFullTop ?? Number.NaN));
  for (const set of ['eval', 'conversations', 'lessons', 'dialogue']) {
    const only = (f: (q: Q) => number) => (q: Q): number => (q.row.set === set ? f(q) : Number.NaN);
    auc(`[${set}] top-2 telling together in a top-3 result`, only((q) => { const t = telling(q).slice(0, 2); return t.length < 2 ? 1 : q.top.some((h) => holdsAll(h.held, t)) ? 1 : 0; }));
    auc(`[${set}] store memories holding the top-2 telling together`, only((q) => { const t = telling(q).slice(0, 2); return t.length < 2 ? 9 : Math.log1p(storeCo(q, t)); }));
    auc(`[${set}] top similarity, full`, only((q) => r10(q).simFullTop ?? Number.NaN));
    auc(`[${set}] top similarity, stripped`, only((q) => r10(q).simStripTop ?? Number.NaN));
  }
  // A memory that asks (its text ends with "?"): its words are no evidence of an answer. `question` is the hit's own
  // text; `asks` is the engine's round 10 verdict (a question whose reply — the next memory of its session — is not
  // among the results). Closed paths: the coverage path (lex), both lists agreeing (agr), the sure similarity (sem).
  type H10 = Hit & { question?: boolean; asks?: boolean; stated?: string[] };
  const ruleQ = (u: number, c: number, closed: { lex?: boolean; agr?: boolean; sem?: boolean }, discounted: (h: H10) => boolean, a = 0.15) => (q: Q): boolean =>
    q.top.some((h0, i) => {
      const h = h0 as H10;
      const off = discounted(h);
      if ((h.sim ?? 0) >= sureOf[q.kind] && !(off && closed.sem)) return true;
      if (agreed(h) && (q.covAll[i] as number) >= a && !(off && closed.agr)) return true;
      return q.unknownShare <= u && !(off && closed.lex) && ((q.cov[i] as number) >= c || (agreed(h) && (q.cov[i] as number) >= a));
    });
  add('r10 engine: the shipped rule with questions discounted (weak === null)', (q) => q.shipped);
  for (const [u, c] of [[0.5, 0.45], [0.55, 0.45], [0.5, 0.4], [0.45, 0.45]] as const) {
    for (const [name, closed] of [['agreement', { agr: true }], ['coverage', { lex: true }], ['coverage and agreement', { lex: true, agr: true }], ['similarity', { sem: true }], ['agreement and similarity', { agr: true, sem: true }], ['every path', { lex: true, agr: true, sem: true }]] as const) {
      add(`r10 questions: ${u} / ${c}, a question answers not by ${name} (no exception)`, ruleQ(u, c, closed, (h) => h.question === true));
      add(`r10 questions: ${u} / ${c}, a question whose reply is not among the results answers not by ${name}`, ruleQ(u, c, closed, (h) => h.asks === true));
    }
    // The sentence-level reading: a hit's words outside its questions (`stated`) are what it holds.
    add(`r10 questions: ${u} / ${c}, only words outside a hit's questions count (coverage and agreement)`, (q) => q.top.some((h0, i) => {
      const h = h0 as H10;
      const w = (terms: string[]): number => q.weights.filter((t) => terms.includes(t.term)).reduce((x, t) => x + t.weight, 0);
      const sc = q.known > 0 ? w(h.stated ?? h.held) / q.known : 0;
      const sa = q.total > 0 ? w(h.stated ?? h.held) / q.total : 0;
      return (h.sim ?? 0) >= sureOf[q.kind] || (agreed(h) && sa >= 0.15) || (q.unknownShare <= u && (sc >= c || (agreed(h) && sc >= 0.15)));
    }));
  }
  // The shipped rule with a discounted hit (`asks`) needing more similarity (+0.05, +0.1; +1 = the path closed), and
  // full coverage by BM25's first hit answering at a higher unknown share (to win back what a closed path costs).
  for (const more of [0.05, 0.1, 1]) {
    add(`r10 questions: the engine's rule, and a discounted hit answers by similarity only at the sure similarity + ${more}`, (q) =>
      q.shipped && q.top.some((h0, i) => {
        const h = h0 as H10;
        const terms = h.asks ? (h.stated ?? h.held) : h.held;
        const w = q.weights.filter((t) => terms.includes(t.term)).reduce((x, t) => x + t.weight, 0);
        const cv = q.known > 0 ? w / q.known : 0;
        const ca = q.total > 0 ? w / q.total : 0;
        return (h.sim ?? 0) >= sureOf[q.kind] + (h.asks ? more : 0) || (agreed(h) && ca >= 0.15) || (q.unknownShare <= 0.5 && (cv >= 0.45 || (agreed(h) && cv >= 0.15)));
      }));
  }
  for (const u of [0.6, 0.65, 0.7, 0.75]) for (const c of [0.8, 0.99]) {
    add(`r10: the engine's rule, or BM25's first hit holding ≥ ${c} of the known weight at unknown ≤ ${u}`, (q) => q.shipped || (q.unknownShare <= u && q.top.some((h, i) => h.ranks.bm25 === 1 && (q.cov[i] as number) >= c && !(h as H10).asks)));
  }
  // The heaviest word (the query's rarest; known to the store or not) must be held by a top result.
  const heaviest = (q: Q, knownOnly: boolean): Set<string> => {
    const list = q.weights.filter((t) => !knownOnly || !q.unknown.has(t.term));
    const max = Math.max(...list.map((t) => t.weight));
    return new Set(list.filter((t) => t.weight >= max - 1e-9).map((t) => t.term));
  };
  for (const knownOnly of [true, false]) for (const depth of [3, 10]) {
    const holdsHeaviest = (q: Q): boolean => { const h = heaviest(q, knownOnly); return h.size === 0 || q.row.results.slice(0, depth).some((x) => x.held.some((t) => h.has(t))); };
    add(`r10 heaviest ${knownOnly ? 'known ' : ''}word in a top-${depth} result, with the shipped rule`, (q) => base(q) && holdsHeaviest(q));
  }
  // The wh-word's object ("which hotel", "what instrument", "how many guests"): a word no memory holds.
  const WH_OBJECT = /^\s*(?:what\s+(?:kind|type|sort)s?\s+of|how\s+many|how\s+much|what|which|whose)\s+([A-Za-z][\w'-]*)/i;
  const AUXILIARY = new Set('is are was were do does did has have had can could should would will shall may might am be been being the a an'.split(' '));
  const whObjectTerm = (q: Q, verbs: boolean): string | null => {
    const word = WH_OBJECT.exec(q.row.q)?.[1]?.toLowerCase();
    if (!word || AUXILIARY.has(word) || (!verbs && word.endsWith('ed'))) return null;
    return searchTerms(word)[0] ?? null;
  };
  for (const verbs of [true, false]) {
    const unknownObject = (q: Q): boolean => { const t = whObjectTerm(q, verbs); return t !== null && q.unknown.has(t); };
    add(`r10 wh-object a word no memory holds: silent (every path)${verbs ? '' : ', -ed words not objects'}`, (q) => base(q) && !unknownObject(q));
    add(`r10 wh-object a word no memory holds closes the coverage path${verbs ? '' : ', -ed words not objects'}`, ruleFloor(0.5, 0.45, (q) => !unknownObject(q)));
  }
  // Per-store self-calibration without labels: pseudo-queries of 3 words of one memory (answerable) and 2 words of
  // one memory + 1 of an unrelated one (unanswerable); the coverage the rule needs = x × a quantile of the best
  // coverage any memory of the store gives the unanswerable ones (IDF from the store's own document frequencies).
  const calibration = new Map<string, number[]>();
  const pseudoUnanswerable = (q: Q): number[] => {
    const key = `${q.row.set}|${q.row.store}`;
    let list = calibration.get(key);
    if (list) return list;
    const memories = storeOf(q);
    const dfs = new Map<string, number>();
    for (const m of memories) for (const t of m) dfs.set(t, (dfs.get(t) ?? 0) + 1);
    const n = memories.length;
    const weight = (t: string): number => Math.log(1 + (n - (dfs.get(t) ?? 0) + 0.5) / ((dfs.get(t) ?? 0) + 0.5));
    let seed = 7;
    const random = (): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
    const pick = <T,>(xs: T[]): T => xs[Math.floor(random() * xs.length)] as T;
    const usable = memories.map((m) => [...m].filter((t) => (dfs.get(t) ?? 0) >= 2).sort()).filter((m) => m.length >= 3);
    list = [];
    for (let i = 0; i < 300; i++) {
      const a = pick(usable); const b = pick(usable);
      if (a === b) continue;
      const fromB = b.filter((t) => !a.includes(t));
      if (fromB.length === 0) continue;
      const shuffled = [...a].sort(() => random() - 0.5);
      const mix = [shuffled[0] as string, shuffled[1] as string, pick(fromB)];
      const total = mix.reduce((x, t) => x + weight(t), 0);
      list.push(Math.max(...memories.map((m) => mix.filter((t) => m.has(t)).reduce((x, t) => x + weight(t), 0) / total)));
    }
    list.sort((x, y) => x - y);
    calibration.set(key, list);
    return list;
  };
  for (const quantile of [0.1, 0.25, 0.5]) for (const x of [0.6, 0.7, 0.8]) {
    add(`r10 calibrated: coverage needed ${x} × the store's q${quantile * 100} of pseudo-unanswerable best coverage`, (q) => {
      const list = pseudoUnanswerable(q);
      return ruleWith(0.5, x * (list[Math.floor(quantile * list.length)] ?? 0.67))(q);
    });
  }
  // The nearest memory's similarity where the vector half ran (the vector list's floor, USE lite's is 0.3 already).
  for (const [fu, ft] of [[0.3, 0.2], [0.35, 0.15], [0.35, 0.2], [0.3, 0.25]] as const) {
    add(`r10 nearest memory's similarity ≥ USE lite ${fu} / distilled ${ft} where the vector half ran, with the shipped rule`, (q) => {
      const ran = q.row.results.some((h) => h.ranks.vector !== null);
      return base(q) && (!ran || (r10(q).simFullTop ?? 1) >= (q.kind === 'use-lite' ? fu : ft));
    });
  }
  // Rules: the shipped rule (or a looser one) and each signal as a further condition.
  const pair = (q: Q, n = 2): string[] => telling(q).slice(0, n);
  const together3 = (q: Q, n = 2): boolean => { const t = pair(q, n); return t.length < n || q.top.some((h) => holdsAll(h.held, t)); };
  const together10 = (q: Q, n = 2): boolean => { const t = pair(q, n); return t.length < n || q.row.results.some((h) => holdsAll(h.held, t)); };
  const inStore = (q: Q, n = 2): boolean => { const t = pair(q, n); return t.length < n || storeCo(q, t) > 0; };
  const whHeld = (q: Q): boolean => { const w = whObject(q); return w === null || q.top.some((h) => h.held.includes(w)); };
  const bases = [['shipped', base], ['0.55 / 0.45', ruleWith(0.55, 0.45)], ['0.6 / 0.4', loose], ['0.6 / 0.45', ruleWith(0.6, 0.45)], ['0.7 / 0.4', ruleWith(0.7, 0.4)]] as const;
  for (const [bn, b] of bases) {
    for (const n of [2, 3]) {
      add(`r10: ${bn} and the top-${n} telling words together in one top-3 result`, (q) => b(q) && together3(q, n));
      add(`r10: ${bn} and the top-${n} telling words together in one top-10 result`, (q) => b(q) && together10(q, n));
      add(`r10: ${bn} and the top-${n} telling words together in one memory of the store`, (q) => b(q) && inStore(q, n));
      for (const c of [0.6, 0.7, 0.8]) add(`r10: ${bn} and (the top-${n} telling words together in one top-3 result or known coverage ≥ ${c})`, (q) => b(q) && (together3(q, n) || q.cov.some((x) => x >= c)));
    }
    add(`r10: ${bn} and the wh-word's object in a top-3 result`, (q) => b(q) && whHeld(q));
    for (const f of [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5]) {
      add(`r10: ${bn} and the wh-stripped top similarity ≥ ${f} (USE lite ${(f + 0.1).toFixed(2)})`, (q) => b(q) && !((r10(q).simStripTop ?? 1) < f + (q.kind === 'use-lite' ? 0.1 : 0)));
      add(`r10: ${bn} and the full top similarity ≥ ${f} (USE lite ${(f + 0.1).toFixed(2)})`, (q) => b(q) && !((r10(q).simFullTop ?? 1) < f + (q.kind === 'use-lite' ? 0.1 : 0)));
    }
  }
}
out.sort((a, b) => b.r.k - a.r.k);
const p = (x: number): string => (100 * x).toFixed(1);
for (const { name, r } of out) console.log(`${p(r.s).padStart(5)} % silence ${p(r.k).padStart(5)} % kept (worst ${p(r.ws)} / ${p(r.wk)}) | ${Object.entries(r.per).map(([s, v]) => `${s.slice(0, 5)} ${p(v[0])}/${p(v[1])}`).join(' ')} | ${name}`);
