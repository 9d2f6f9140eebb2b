#!/usr/bin/env node
// Search speed benchmark: synthetic stores of 10k and 100k engrams, warm in-process query latency (query embedding
// excluded, reported separately), and import throughput with each real embedder. Prints JSON lines; asserts nothing.
// Latencies are also given as a ratio to the raw index lookups (wink BM25 + sqlite-vec KNN) measured in the same run.
//
//   node bench/search.mjs [--sizes 10000,100000] [--queries 200] [--model-dir ../shared/models] [--latency-only]
//
// `vector-half` lines: hybrid with the query embedding included (static-use-256), without and with the skip of the
// vector half when BM25 is decisive, and repeated (the query-vector cache). --latency-only skips import throughput.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'search-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'search-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
