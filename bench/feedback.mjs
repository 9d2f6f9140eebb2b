#!/usr/bin/env node
// Round 4 and 5 tuning on the dev splits (never test: refused in code): feedback, agreement and context variants.
// See bench/feedback-run.ts.
//
//   node bench/feedback.mjs [--sets …] [--embedders …] [--variants-json '{"name":{"context":{…overrides}}}'] [--singles]
//                           [--one-session file|shuffled] [--shuffle]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'feedback-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'feedback-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
