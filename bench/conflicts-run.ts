// The body of bench/conflicts.mjs (bundled by it).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLlmClient, loadSettings, readEnv } from '../src/core/index.js';
import { analyse, CONFLICT_RULES, llmVerdict, ruleVerdict, subjectOverlap } from '../src/services/governance/conflicts.js';

interface Pair {
  label: 'conflict' | 'paraphrase' | 'unrelated';
  a: string;
  b: string;
}

const args = process.argv.slice(2);
const root = args[args.indexOf('--root') + 1] as string;
const verbose = args.includes('--verbose');
const folder = join(root, 'fixtures', 'conflicts');

// `--analyse "text" "text"…`: show what the rules read in each text (for tuning), then stop.
if (args.includes('--analyse')) {
  const texts = args.slice(args.indexOf('--analyse') + 1).filter((_arg, index, list) => list[index - 1] !== '--root' && _arg !== '--root');
  const show = (set: Set<string>): string[] => [...set];
  for (const text of texts) {
    const analysis = analyse(text);
    console.log(JSON.stringify({ text, salient: show(analysis.salient), positive: show(analysis.positive), negative: show(analysis.negative), values: show(analysis.values) }));
  }
  if (texts.length === 2) console.log(JSON.stringify(ruleVerdict(analyse(texts[0] as string), analyse(texts[1] as string))));
  process.exit(0);
}

// `--stem-cap`: would a cap on how common a stem may be (and still count as salient) change the verdicts? The labelled
// pairs judged with every stem above a document frequency dropped from their salient stems (and nouns), the
// frequency taken in a store of the hand-written lessons of fixtures/eval and eval-lessons plus every pair text.
if (args.includes('--stem-cap')) {
  const labelled = readdirSync(folder)
    .filter((name) => name.endsWith('.jsonl'))
    .flatMap((name) => readFileSync(join(folder, name), 'utf8').split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line) as Pair));
  const lessons = ['eval', 'eval-lessons'].flatMap((set) =>
    readFileSync(join(root, 'fixtures', set, 'memories.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { text: string }).text),
  );
  const texts = [...lessons, ...labelled.flatMap((pair) => [pair.a, pair.b])];
  const frequency = new Map<string, number>();
  for (const text of texts) for (const stem of analyse(text).salient) frequency.set(stem, (frequency.get(stem) ?? 0) + 1);
  const top = [...frequency].sort((a, b) => b[1] - a[1]).slice(0, 8);
  console.log(JSON.stringify({ store_texts: texts.length, commonest: Object.fromEntries(top.map(([stem, n]) => [stem, Math.round((n / texts.length) * 1000) / 1000])) }));
  for (const cap of [1, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01]) {
    const capped = new Set([...frequency].filter(([, n]) => n / texts.length > cap).map(([stem]) => stem));
    const without = (text: string) => {
      const analysis = analyse(text);
      return { ...analysis, salient: new Set([...analysis.salient].filter((stem) => !capped.has(stem))), nouns: new Set([...analysis.nouns].filter((stem) => !capped.has(stem))) };
    };
    const predicted = labelled.map((pair) => ruleVerdict(without(pair.a), without(pair.b)).conflict);
    const changed = labelled.filter((pair, i) => predicted[i] !== ruleVerdict(analyse(pair.a), analyse(pair.b)).conflict).length;
    console.log(JSON.stringify({ ...score('all', `rules, stems in more than ${cap * 100} % dropped`, labelled, predicted), stems_capped: capped.size, verdicts_changed: changed }));
  }
  process.exit(0);
}

interface Score {
  set: string;
  method: string;
  pairs: number;
  conflicts: number;
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
}

function score(set: string, method: string, pairs: Pair[], predicted: boolean[]): Score {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  pairs.forEach((pair, index) => {
    const yes = predicted[index] as boolean;
    if (pair.label === 'conflict' && yes) tp++;
    else if (pair.label !== 'conflict' && yes) fp++;
    else if (pair.label === 'conflict' && !yes) fn++;
  });
  const round = (value: number): number => Math.round(value * 1000) / 1000;
  return {
    set,
    method,
    pairs: pairs.length,
    conflicts: pairs.filter((pair) => pair.label === 'conflict').length,
    tp,
    fp,
    fn,
    precision: round(tp + fp === 0 ? 1 : tp / (tp + fp)),
    recall: round(tp + fn === 0 ? 1 : tp / (tp + fn)),
  };
}

const sets = readdirSync(folder)
  .filter((name) => name.endsWith('.jsonl'))
  .sort()
  .map((name) => ({
    name: name.replace(/\.jsonl$/, ''),
    pairs: readFileSync(join(folder, name), 'utf8')
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as Pair),
  }));

const settings = loadSettings(readEnv());
const llm = args.includes('--no-llm') ? null : createLlmClient(settings, {});
const useLlm = llm !== null && llm.provider !== 'none';

const all: Pair[] = [];
const allRules: boolean[] = [];
const allLlm: boolean[] = [];
for (const set of sets) {
  const rules: boolean[] = [];
  const withLlm: boolean[] = [];
  for (const pair of set.pairs) {
    const a = analyse(pair.a);
    const b = analyse(pair.b);
    const verdict = ruleVerdict(a, b);
    rules.push(verdict.conflict);
    let final = verdict;
    if (useLlm && subjectOverlap(a, b) >= CONFLICT_RULES.llmCandidateOverlap) {
      final = (await llmVerdict(llm, pair.a, pair.b, verdict).catch(() => null)) ?? verdict;
    }
    withLlm.push(final.conflict);
    if (verbose && (verdict.conflict !== (pair.label === 'conflict') || final.conflict !== (pair.label === 'conflict'))) {
      console.error(JSON.stringify({ set: set.name, label: pair.label, rules: verdict.conflict, llm: useLlm ? final.conflict : null, reason: verdict.reason, overlap: Math.round(verdict.overlap * 100) / 100, a: pair.a, b: pair.b }));
    }
  }
  all.push(...set.pairs);
  allRules.push(...rules);
  allLlm.push(...withLlm);
  console.log(JSON.stringify(score(set.name, 'rules', set.pairs, rules)));
  if (useLlm) console.log(JSON.stringify(score(set.name, 'rules+llm', set.pairs, withLlm)));
}
console.log(JSON.stringify(score('all', 'rules', all, allRules)));
if (useLlm) console.log(JSON.stringify(score('all', 'rules+llm', all, allLlm)));
else console.log(JSON.stringify({ note: `no LLM configured (${llm?.describe ?? 'skipped with --no-llm'}): rules only` }));
