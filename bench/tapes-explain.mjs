#!/usr/bin/env node
// Explain benchmark: 1,000 synthetic tapes of one project (messages, reads, tool output, edit chains) → index build
// time, index size per MB of tape content, and explain latency (p50/p95) over spans of the final files. Prints JSON
// lines; asserts nothing.
//
//   node bench/tapes-explain.mjs [--tapes 1000] [--queries 200] [--profile default]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'tapes-explain-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'tapes-explain-run.mjs'));
await import(pathToFileURL(out).href);
