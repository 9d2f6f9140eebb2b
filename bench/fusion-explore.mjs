#!/usr/bin/env node
// Round 9: what hybrid's top 10 takes from and gives to BM25's, on a dump of the DEV splits (see bench/fusion-explore-run.ts).
//
//   node bench/feedback.mjs --variants-json '{"shipped":{}}' --dump /tmp/fusion-dev.jsonl
//   node bench/fusion-explore.mjs --dump /tmp/fusion-dev.jsonl [--sets conversations,lessons] [--show]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'fusion-explore-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'fusion-explore-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
