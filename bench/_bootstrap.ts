// A paired bootstrap over queries for "hybrid minus the best single signal": how far a cell's margin would move if
// the split had drawn other queries of the same kind. The test splits hold 101–120 answerable queries, so one query
// is worth about 0.01 of recall@10 — the size of the margin issue 18 asks for; the interval says which verdicts are
// within that noise. Deterministic: the resampling is seeded by the cell's name (one stream per cell).
import { seededRandom } from './_random.js';

/** Per-query recall@10 of each mode, aligned by query (index i is the same query in every list). */
export interface PairedScores {
  hybrid: readonly number[];
  singles: ReadonlyArray<readonly number[]>;
}

export interface MarginInterval {
  margin: number;
  low: number;
  high: number;
}

function seedOf(name: string): number {
  let hash = 2166136261;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 16777619);
  return hash >>> 0;
}

const mean = (values: readonly number[], picks: readonly number[]): number => picks.reduce((sum, i) => sum + (values[i] ?? 0), 0) / picks.length;

/** The margin mean(hybrid) − max over singles of mean(single), and its percentile interval over `resamples` draws. */
export function marginInterval(scores: PairedScores, name: string, resamples = 2000, level = 0.95): MarginInterval {
  const n = scores.hybrid.length;
  if (n === 0 || scores.singles.some((single) => single.length !== n)) throw new Error(`marginInterval: ${name}: lists of different lengths`);
  const all = Array.from({ length: n }, (_, i) => i);
  const marginOf = (picks: readonly number[]): number =>
    mean(scores.hybrid, picks) - Math.max(...scores.singles.map((single) => mean(single, picks)));
  const next = seededRandom(seedOf(name));
  const margins: number[] = [];
  const picks = new Array<number>(n);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) picks[i] = Math.floor(next() * n);
    margins.push(marginOf(picks));
  }
  margins.sort((a, b) => a - b);
  const at = (q: number): number => margins[Math.min(resamples - 1, Math.max(0, Math.round(q * (resamples - 1))))] ?? 0;
  return { margin: marginOf(all), low: at((1 - level) / 2), high: at(1 - (1 - level) / 2) };
}
