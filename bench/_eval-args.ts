// The command line every evaluation bench reads (quality, inject; the tuning benches through _tuning-options.ts):
// which sets, splits and embedders, where the repository and the transformers.js models are.
import { join, resolve } from 'node:path';
import { EVAL_SET_NAMES, type EvalSetName, type EvalSplit } from '../src/services/index.js';
import { searchTerms } from '../src/services/recall/index.js';

export interface EvalOptions {
  args: string[];
  /** The value after `name`, else `fallback`. */
  option(name: string, fallback: string): string;
  root: string;
  sets: EvalSetName[];
  /** `--splits` (default both); the tuning benches read one `--split` instead (_tuning-options.ts). */
  splits: EvalSplit[];
  embedders: string[];
  modelDir: string;
}

export function evalOptions(args: string[] = process.argv.slice(2)): EvalOptions {
  const option = (name: string, fallback: string): string => {
    const index = args.indexOf(name);
    if (index < 0) return fallback;
    const value = args[index + 1];
    // `--json` with no file before the appended `--root DIR` once wrote a file named "--root" into the repository.
    if (value === undefined || value.startsWith('--')) throw new Error(`${name} wants a value (got ${value ?? 'nothing'})`);
    return value;
  };
  const root = option('--root', process.cwd());
  return {
    args,
    option,
    root,
    sets: option('--sets', EVAL_SET_NAMES.join(',')).split(',') as EvalSetName[],
    splits: option('--splits', 'dev,test').split(',') as EvalSplit[],
    embedders: option('--embedders', 'use-lite,ctx-use-256,static-use-256').split(','),
    modelDir: resolve(option('--model-dir', join(root, '..', 'shared', 'models'))),
  };
}

/**
 * Names in a query: its capitalised words that do not start a sentence (a person, a place, a product), possessive
 * stripped, analysed like search terms, kept when they are among `terms`. Round 5's "names as required terms"
 * candidate (not shipped; bench/tune.mjs and bench/abstain-explore.mjs measure it).
 */
export function queryNames(text: string, terms: readonly string[]): string[] {
  const names = new Set<string>();
  const known = new Set(terms);
  for (const sentence of text.split(/[.!?:;\n]+/)) {
    for (const word of (sentence.match(/[\p{L}\p{N}_'’-]+/gu) ?? []).slice(1)) {
      if (!/^\p{Lu}\p{Ll}/u.test(word)) continue;
      for (const term of searchTerms(word.replace(/['’]s$/u, ''))) if (known.has(term)) names.add(term);
    }
  }
  return [...names];
}
