/**
 * The command line of the tuning benches (bench/tune.mjs, bench/feedback.mjs, bench/abstain-dump.mjs): the evaluation
 * benches' options (_eval-args.ts) with one split. The split is checked before anything is read — tuning reads the DEV
 * splits only, and `--split test` is refused (services/recall tuningQueryFile), a mistake rather than a request.
 */
import { tuningQueryFile } from '../src/services/index.js';
import { evalOptions, type EvalOptions } from './_eval-args.js';

export interface TuningOptions extends Omit<EvalOptions, 'splits'> {
  split: string;
}

export function tuningOptions(args: string[] = process.argv.slice(2)): TuningOptions {
  const { splits: _bothSplits, ...options } = evalOptions(args);
  const split = options.option('--split', 'dev');
  for (const set of options.sets) tuningQueryFile(options.root, set, split);
  return { ...options, split };
}
