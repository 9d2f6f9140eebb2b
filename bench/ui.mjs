#!/usr/bin/env node
// Viewer benchmark: the Engrams screen's first page from the API (GET /ui/api/engrams over a real loopback HTTP
// server, with the secret header and every guard) on a store of 100k engrams, next to the same listEngrams call made
// in-process and a bare /ui/api/ping round trip measured in the same run (target: first page ≤ 300 ms). Also filtered,
// deep and stale pages, the filter facets, one engram's detail and an explained search. Prints JSON; asserts nothing.
//
//   node bench/ui.mjs [--size 100000] [--reps 40]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'ui-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'ui-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
