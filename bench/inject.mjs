#!/usr/bin/env node
// What hooks would inject for the labelled queries of every evaluation set: the share of answerable prompts where a
// relevant memory is injected, the precision of what is injected, and how often hooks stay silent on questions no
// memory answers. The `as hooks run` rows search as the hooks do (tool events with BM25, prompts hybrid) and use the
// query the hook judges relevance against. Prints a Markdown table; asserts nothing.
//
//   node bench/inject.mjs [--sets eval,conversations,lessons] [--splits dev,test]
//                         [--embedders use-lite,ctx-use-256,static-use-256,none] [--json]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'inject-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'inject-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
