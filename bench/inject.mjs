#!/usr/bin/env node
// What hooks would inject for the labelled queries in fixtures/eval: how often a relevant memory is injected, how
// precise the injections are, and how often hooks stay silent on questions no memory answers. The embedder is the
// one Engram would use (ENGRAM_MODEL / ENGRAM_MODEL_DIR / ENGRAM_EMBEDDER apply). Prints numbers; asserts nothing.
//
//   node bench/inject.mjs [--split dev|test]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'inject-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'inject-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
