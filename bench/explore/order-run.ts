// EXPLORATION ONLY: does ordering hybrid's candidates by the learned candidate model beat RRF on dev (cross-validated)?
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { candidateFeatures } from '../../src/services/recall/features.js';
import { fitLogistic } from '../../src/services/recall/logistic.js';
import { probability } from '../../src/services/recall/ranker.js';
import { foldOf, orderFor, type TrainingQuery } from '../../src/services/recall/train.js';
const args = process.argv.slice(2);
const root = args[args.indexOf('--root') + 1] as string;
const dir = join(root, 'node_modules', '.cache', 'engram-train');
const all: TrainingQuery[] = readdirSync(dir).flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as TrainingQuery[]);
const hybrid = all.filter((q) => q.mode === 'hybrid' && q.answers > 0);
const bm25 = all.filter((q) => q.mode === 'bm25' && q.answers > 0);
const recall = (q: TrainingQuery, order: number[]) => Math.min(1, order.slice(0, 10).reduce((s, i) => s + q.candidates[i]!.gain, 0));
const rows = (qs: TrainingQuery[]) => { const counts = new Map<string, number>(); for (const q of qs) counts.set(q.cell, (counts.get(q.cell) ?? 0) + 1);
  return qs.flatMap((q) => { const f = candidateFeatures(q.candidates); return q.candidates.map((c, i) => ({ x: f[i]!, y: (c.gain > 0 ? 1 : 0) as 0 | 1, w: 100 / counts.get(q.cell)! / q.candidates.length })); }); };
const cells = [...new Set(hybrid.map((q) => q.cell))].sort();
const scheme = args.includes('--loso') ? 'loso' : 'cv';
const results: Record<string, { rrf: number; prob: number; blend: number; bm25: number; n: number }> = {};
const groups = scheme === 'loso' ? [...new Set(hybrid.map((q) => q.set))].map((s) => ({ held: (q: TrainingQuery) => q.set === s })) : [0, 1, 2, 3, 4].map((f) => ({ held: (q: TrainingQuery) => foldOf(q.q, 5) === f }));
const bm25Of = new Map(bm25.map((q) => [`${q.set}|${q.q}`, q]));
for (const g of groups) {
  const model = fitLogistic(rows(hybrid.filter((q) => !g.held(q))), { l2: 1 });
  for (const q of hybrid.filter(g.held)) {
    const f = candidateFeatures(q.candidates);
    const p = f.map((x) => probability(model, x));
    const rrf = orderFor('hybrid', q.candidates);
    const prob = q.candidates.map((_, i) => i).sort((a, b) => p[b]! - p[a]! || a - b);
    // blend: RRF position score + probability
    const pos = new Map(rrf.map((i, r) => [i, r]));
    const blend = q.candidates.map((_, i) => i).sort((a, b) => (p[b]! - 0.02 * (pos.get(b) ?? 99)) - (p[a]! - 0.02 * (pos.get(a) ?? 99)) || a - b);
    const b = bm25Of.get(`${q.set}|${q.q}`);
    const r = (results[q.cell] ??= { rrf: 0, prob: 0, blend: 0, bm25: 0, n: 0 });
    r.rrf += recall(q, rrf); r.prob += recall(q, prob); r.blend += recall(q, blend); r.n++;
    if (b) r.bm25 += recall(b, orderFor('bm25', b.candidates));
  }
}
console.log(scheme);
for (const c of cells) { const r = results[c]!; console.log(c.padEnd(32), 'bm25', (r.bm25 / r.n).toFixed(3), 'rrf', (r.rrf / r.n).toFixed(3), 'prob', (r.prob / r.n).toFixed(3), 'blend', (r.blend / r.n).toFixed(3)); }
