// EXPLORATION: is a dedicated injection model (hit + query features) better than the hit's confidence alone?
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { candidateFeatures, queryFeatures, fitLogistic, probability, rankerWeights } from '../../src/services/index.js';
import { orderFor, foldOf, type TrainingQuery } from '../../src/services/recall/train.js';
const root = process.argv[process.argv.indexOf('--root') + 1] as string;
const dir = join(root, 'node_modules', '.cache', 'engram-train');
const all: TrainingQuery[] = readdirSync(dir).flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as TrainingQuery[]);
const events = new Map<string, string>();
for (const line of readFileSync(join(root, 'fixtures/eval-lessons/queries-dev.jsonl'), 'utf8').split('\n').filter(Boolean)) { const q = JSON.parse(line); events.set(q.q, q.event); }
const W = rankerWeights();
// Per query (lessons, as hooks run): top-1 hit with: confidence, abstain P, features
const rows: Array<{ q: TrainingQuery; conf: number; abst: number; x: number[]; y: 0 | 1; fold: number; answerable: boolean }> = [];
for (const q of all) {
  if (q.set !== 'lessons') continue;
  const tool = events.get(q.q) !== 'UserPromptSubmit';
  if (tool ? q.mode !== 'bm25' : !(q.mode === 'hybrid' && q.cell.endsWith('use-lite'))) continue;
  const m = W.modes[q.mode];
  const f = candidateFeatures(q.candidates);
  const p = f.map((x) => probability(m.candidate, x));
  const order = orderFor(q.mode, q.candidates);
  if (!order.length) continue;
  const top = order.slice(0, 3).map((i) => ({ probability: p[i] as number, coverage: q.candidates[i]!.coverage }));
  const qf = queryFeatures(q.query, top);
  const i0 = order[0] as number;
  rows.push({ q, conf: p[i0] as number, abst: probability(m.abstain, qf), x: [...(f[i0] as number[]), ...qf, tool ? 1 : 0], y: q.candidates[i0]!.gain > 0 ? 1 : 0, fold: foldOf(q.q, 5), answerable: q.answers > 0 });
}
const cvP = new Map<(typeof rows)[number], number>();
for (let fold = 0; fold < 5; fold++) {
  const fit = fitLogistic(rows.filter((r) => r.fold !== fold).map((r) => ({ x: r.x, y: r.y })), { l2: 1 });
  for (const r of rows.filter((r) => r.fold === fold)) cvP.set(r, probability(fit, r.x));
}
const curve = (name: string, score: (r: (typeof rows)[number]) => number) => {
  const ans = rows.filter((r) => r.answerable);
  const out: string[] = [];
  for (const t of [0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8]) {
    const inj = ans.filter((r) => score(r) >= t);
    const good = inj.filter((r) => r.y).length;
    out.push(`${t}: ${(100 * good / ans.length).toFixed(0)}%/${(100 * good / Math.max(1, inj.length)).toFixed(0)}%`);
  }
  console.log(name.padEnd(12), out.join('  '));
};
console.log('rows', rows.length, 'answerable', rows.filter((r) => r.answerable).length, 'top1 relevant', rows.filter((r) => r.y).length);
curve('confidence', (r) => r.conf);
curve('abstain P', (r) => r.abst);
curve('product', (r) => Math.sqrt(r.conf * r.abst));
curve('inject cv', (r) => cvP.get(r) as number);
