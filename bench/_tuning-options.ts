/**
 * The command line of the tuning benches (bench/tune.mjs, bench/feedback.mjs): which sets, split and embedders, where
 * the models are. The split is checked before anything is read — tuning reads the DEV splits only, and `--split test`
 * is refused (services/recall tuningQueryFile), a mistake rather than a request.
 */
import { join, resolve } from 'node:path';
import { EVAL_SET_NAMES, tuningQueryFile, type EvalSetName } from '../src/services/index.js';

export interface TuningOptions {
  args: string[];
  /** The value after `name`, else `fallback`. */
  option(name: string, fallback: string): string;
  root: string;
  split: string;
  sets: EvalSetName[];
  embedders: string[];
  modelDir: string;
}

export function tuningOptions(args: string[] = process.argv.slice(2)): TuningOptions {
  const option = (name: string, fallback: string): string => {
    const index = args.indexOf(name);
    return index >= 0 ? (args[index + 1] as string) : fallback;
  };
  const root = option('--root', process.cwd());
  const split = option('--split', 'dev');
  const sets = option('--sets', EVAL_SET_NAMES.join(',')).split(',') as EvalSetName[];
  for (const set of sets) tuningQueryFile(root, set, split);
  return {
    args,
    option,
    root,
    split,
    sets,
    embedders: option('--embedders', 'use-lite,ctx-use-256,static-use-256').split(','),
    modelDir: resolve(option('--model-dir', join(root, '..', 'shared', 'models'))),
  };
}
