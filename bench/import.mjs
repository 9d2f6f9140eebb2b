#!/usr/bin/env node
// Import throughput: `engram import` (validate, store in audited batches, embed) against a floor measured in the same
// run on the same lines (one INSERT statement in one transaction + the same embedder at the same batch size). Prints
// JSON lines with engrams/s, the ratio to the floor and the load average; asserts nothing.
//
//   node bench/import.mjs [--embedders none,static-use-256,use-lite] [--rounds 2] [--count-static 3000] [--count-use 300]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'import-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'import-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
