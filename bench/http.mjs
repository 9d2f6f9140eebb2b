#!/usr/bin/env node
// HTTP benchmark: what the Go engram's API on loopback adds to a search over a 10k-engram store (GET /search next to
// the same operation in-process; target ≤ 2 ms p50), and 100 parallel clients writing and searching for 10 s (no
// errors, no lost writes). Prints JSON lines; asserts nothing.
//
//   node bench/http.mjs [--size 10000] [--queries 300] [--clients 100] [--seconds 10]
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'http-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'http-run.mjs'));
// The worker thread the warm server rebuilds its BM25 base in, bundled like the bench.
const worker = await bundleEntry(join(root, 'src', 'server', 'bm25-worker.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'bm25-worker.mjs'));
// The worker thread it builds its text index in at start (saves compare new texts with it); absent from trees without it.
const textWorkerSource = join(root, 'src', 'server', 'text-index-worker.ts');
const textWorker = existsSync(textWorkerSource) ? await bundleEntry(textWorkerSource, join(root, 'node_modules', '.cache', 'engram-bench', 'text-index-worker.mjs')) : '';
process.argv.push('--root', root, '--bm25-worker', worker, '--text-index-worker', textWorker);
await import(pathToFileURL(out).href);
