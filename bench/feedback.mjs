#!/usr/bin/env node
// Round 4–7 tuning on the dev splits (never test: refused in code): feedback, agreement, context, pair and coverage variants.
// See bench/feedback-run.ts. `--dump FILE`: per dev query, BM25's and the vector list's top 50 and each variant's top 10.
//
//   node bench/feedback.mjs [--sets …] [--embedders …] [--variants-json '{"name":{"pair":{…overrides}}}'] [--singles]
//                           [--one-session file|shuffled] [--shuffle] [--dump FILE]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'feedback-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'feedback-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
