#!/usr/bin/env node
// Conflict detection benchmark: precision and recall of "these two engrams contradict" on the labelled pairs in
// fixtures/conflicts/ (conflicting, paraphrase, unrelated), per file and in all, by the rules alone and — when an LLM
// is configured ($ENGRAM_HOME/config.json `llm`, or ENGRAM_LLM_* variables) — by the rules with the LLM asked about
// every pair close enough to be a candidate. Prints JSON lines; asserts nothing.
//
//   node bench/conflicts.mjs [--verbose] [--no-llm]
//   node bench/conflicts.mjs --stem-cap   # would a cap on common stems change the verdicts? (docs/PERFORMANCE.md)
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'conflicts-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'conflicts-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
