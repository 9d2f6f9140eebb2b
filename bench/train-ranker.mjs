#!/usr/bin/env node
// Fits the learned ranker and abstain classifier (src/services/recall/ranker-weights.json) on the dev splits of the
// evaluation sets, never test (refused in code). See bench/train-ranker-run.ts and docs/SEARCH.md.
//
//   node bench/train-ranker.mjs [--sets eval,conversations,lessons] [--embedders use-lite,ctx-use-256,static-use-256]
//                               [--l2 1] [--keep 0.9] [--fresh] [--out FILE] [--json FILE]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'train-ranker-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'train-ranker-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
