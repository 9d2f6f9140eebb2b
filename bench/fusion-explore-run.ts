// Round 9 (fusion9): reads the per-query dump `node bench/feedback.mjs --dump FILE` writes (dev splits only: that bench
// refuses test) and asks where hybrid's top 10 differs from BM25's, and whether any signal the engine could read
// separates the relevant memories just outside it from the places they would take. Printed per set × embedder:
//  1. displaced / gained: relevant memories in BM25's top 10 that hybrid's lacks, and the reverse; what came in
//     (by BM25 and vector rank) and how often it was relevant;
//  2. candidate pools: BM25's 11–20 outside hybrid's top 10, by a signal (same session as BM25's first hit; two query
//     words side by side in the memory; the memory's length; the turn's role), against hybrid's own places 8–10 and the
//     BM25 top-10 hits hybrid displaced — a promotion pays only when its pool beats the places it takes;
//  3. what recall@10 would be if every vector-only entry (no BM25 rank) gave its place to the next fused entry BM25 found;
//  4. the session neighbours (±3) of hybrid's first two results still outside the top 10, by distance and list ranks.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { searchTerms } from '../src/services/recall/index.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => (args.includes(name) ? (args[args.indexOf(name) + 1] ?? fallback) : fallback);
const root = option('--root', '.');
const wanted = option('--sets', 'conversations,lessons,dialogue,eval').split(',');
const FIXTURES: Record<string, string> = { conversations: 'eval-conversations', lessons: 'eval-lessons', dialogue: 'eval-dialogue', eval: 'eval' };

type Ranks = { bm25: number | null; vector: number | null; anchor: number | null };
interface Row { cell: string; q: string; relevant: string[]; wide: Array<[number, Ranks]>; bm25: Array<[number, string[]]>; vector: Array<[number, string[], number]>; hybrid: Record<string, Array<{ id: number; ranks: Ranks; m: string[] }>> }
const rows = readFileSync(option('--dump', ''), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Row);

interface Memory { id: string; text: string; category?: string; tags?: string[] }
const texts = new Map<string, string>();
const order = new Map<string, string[]>();
for (const set of wanted) {
  const memories = readFileSync(join(root, 'fixtures', FIXTURES[set] as string, 'memories.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Memory);
  for (const m of memories) texts.set(`${set}|${m.id}`, `${m.text} ${m.category ?? ''} ${(m.tags ?? []).join(' ')}`);
  order.set(set, memories.map((m) => m.id));
}
const pairsOf = (terms: readonly string[]): Set<string> => {
  const pairs = new Set<string>();
  for (let i = 0; i + 1 < terms.length; i++) if (terms[i] !== terms[i + 1]) pairs.add([terms[i], terms[i + 1]].sort().join(' '));
  return pairs;
};
const memoryPairs = new Map<string, Set<string>>();
const pairsOfMemory = (key: string): Set<string> => {
  let pairs = memoryPairs.get(key);
  if (!pairs) memoryPairs.set(key, (pairs = pairsOf(searchTerms(texts.get(key) ?? ''))));
  return pairs;
};
const bucket = (rank: number | null | undefined): string => (rank == null ? 'none' : rank <= 3 ? '1-3' : rank <= 10 ? '4-10' : rank <= 20 ? '11-20' : '21-50');
const pct = ([hit, all]: [number, number]): string => `${hit} / ${all} (${((100 * hit) / Math.max(1, all)).toFixed(1)} %)`;

for (const cell of [...new Set(rows.map((r) => r.cell))].filter((c) => wanted.includes(c.split('/')[0] as string))) {
  const set = cell.split('/')[0] as string;
  const ids = order.get(set) ?? [];
  const position = new Map(ids.map((id, i) => [id, i]));
  const session = (memory: string): string => memory.split(':')[0] as string;
  const tally = new Map<string, [number, number]>();
  const add = (key: string, relevant: boolean): void => {
    const t = tally.get(key) ?? [0, 0];
    t[0] += relevant ? 1 : 0;
    t[1] += 1;
    tally.set(key, t);
  };
  let lost = 0;
  let gained = 0;
  let recallNow = 0;
  let recallWithout = 0;
  let queries = 0;
  for (const row of rows.filter((r) => r.cell === cell)) {
    const relevant = new Set(row.relevant);
    const isRelevant = (memories: readonly string[]): boolean => memories.some((m) => relevant.has(m));
    const hybrid = row.hybrid.shipped ?? Object.values(row.hybrid)[0] ?? [];
    const inHybrid = new Set(hybrid.map((x) => x.id));
    const bm25Top = new Set(row.bm25.slice(0, 10).map(([id]) => id));
    const memoriesOf = new Map<number, string[]>([...row.bm25, ...row.vector.map(([id, m]) => [id, m] as [number, string[]]), ...hybrid.map((x) => [x.id, x.m] as [number, string[]])]);
    const queryPairs = pairsOf(searchTerms(row.q));
    const holdsPair = (memories: readonly string[]): boolean => memories.some((m) => [...queryPairs].some((p) => pairsOfMemory(`${set}|${m}`).has(p)));
    const length = (memories: readonly string[]): string => ((texts.get(`${set}|${memories[0]}`) ?? '').length >= 400 ? '≥ 400 chars' : '< 400 chars');
    const role = (memories: readonly string[]): string => (set === 'conversations' ? (texts.get(`${set}|${memories[0]}`) ?? '').split(':')[0]?.slice(0, 12) ?? '' : '-');
    const first = row.bm25[0]?.[1]?.[0];
    // 1. displaced and gained
    for (const [id, m] of row.bm25.slice(0, 10)) if (!inHybrid.has(id)) { add('displaced: BM25 top-10 hits hybrid dropped', isRelevant(m)); if (isRelevant(m)) lost++; }
    hybrid.forEach((x, place) => {
      if (place >= 7) add("hybrid's own places 8-10", isRelevant(x.m));
      if (bm25Top.has(x.id)) return;
      if (isRelevant(x.m)) gained++;
      add(`entered: BM25 ${bucket(x.ranks.bm25)}, vector ${bucket(x.ranks.vector)}`, isRelevant(x.m));
    });
    // 2. candidate pools
    for (const [id, m] of row.bm25.slice(10, 20)) {
      if (inHybrid.has(id)) continue;
      const r = isRelevant(m);
      add('pool: BM25 11-20 outside hybrid', r);
      if (first && m[0] && set === 'conversations') add(`  … ${session(m[0]) === session(first) ? 'same session as' : 'another session than'} BM25's first`, r);
      add(`  … ${holdsPair(m) ? 'holds' : 'holds no'} two query words side by side, ${length(m)}`, r);
      if (set === 'conversations') add(`  … role ${role(m)}`, r);
    }
    // 3. vector-only entries give their place to the next fused entry BM25 found
    const recall = (list: readonly number[]): number => [...relevant].filter((m) => list.some((id) => (memoriesOf.get(id) ?? []).includes(m))).length / Math.max(1, relevant.size);
    const top = hybrid.map((x) => x.id);
    const keep = hybrid.filter((x) => x.ranks.bm25 !== null).map((x) => x.id);
    const fill = row.wide.filter(([id, ranks]) => ranks.bm25 !== null && !top.includes(id)).map(([id]) => id);
    recallNow += recall(top);
    recallWithout += recall([...keep, ...fill].slice(0, top.length));
    queries++;
    // 4. session neighbours of the first two results
    if (set === 'conversations' || set === 'dialogue') {
      const wide = new Map(row.wide);
      const idOf = new Map<string, number>();
      for (const [id, m] of memoriesOf) for (const memory of m) idOf.set(memory, id);
      const inTop = new Set(hybrid.flatMap((x) => x.m));
      const seen = new Set<string>();
      for (const seed of hybrid.slice(0, 2)) {
        const at = seed.m[0] ? position.get(seed.m[0]) : undefined;
        if (at === undefined) continue;
        for (let d = -3; d <= 3; d++) {
          const m = ids[at + d];
          if (d === 0 || !m || session(m) !== session(seed.m[0] as string) || inTop.has(m) || seen.has(m)) continue;
          seen.add(m);
          const id = idOf.get(m);
          const ranks = id === undefined ? undefined : wide.get(id);
          add(`neighbour ±${Math.abs(d)} ${d < 0 ? 'before' : 'after'}`, relevant.has(m));
          add(`neighbour, vector ${bucket(ranks?.vector)}`, relevant.has(m));
          add(`neighbour, anchor ${bucket(ranks?.anchor)}`, relevant.has(m));
        }
      }
    }
  }
  console.log(`\n${cell}: relevant displaced ${lost}, gained ${gained}; recall@10 ${(recallNow / queries).toFixed(4)}, with vector-only entries replaced ${(recallWithout / queries).toFixed(4)}`);
  for (const [key, t] of [...tally].sort((a, b) => (a[0] < b[0] ? -1 : 1))) console.log(`  ${key.padEnd(62)} ${pct(t)}`);
}
