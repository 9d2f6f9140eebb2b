#!/usr/bin/env node
// Search speed benchmark: synthetic stores of 10k and 100k engrams, warm in-process query latency (query embedding
// excluded, reported separately), and import throughput with each real embedder. Prints JSON lines; asserts nothing.
// Latencies are also given as a ratio to the raw index lookups (packed BM25 + sqlite-vec KNN) measured in the same run;
// `bm25-index` lines pair the BM25 index before issue 19 (wink with retained fields, JSON snapshot) with the packed one
// (build, cold snapshot load, memory held, query time) on the same store in the same run. --server-rss also starts
// dist/server.mjs on the store and reads its resident memory after a search.
//
//   node bench/search.mjs [--sizes 10000,100000] [--queries 200] [--model-dir ../shared/models] [--latency-only] [--server-rss]
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
