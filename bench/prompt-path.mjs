#!/usr/bin/env node
// The warm server's UserPromptSubmit handler in process, on a copy of bench/hooks.mjs's cached store (--store-cache:
// the folder bench/hooks.mjs filled; read only) with its prompts, a call every --gap-ms: the handler's time, CPU and
// garbage collection per call, and how it splits (the search, its query embedding, the rest of the handler, KNN
// queries per search). The engine is the warm server's (in-memory vector index, candidates' fields kept). Prints one
// JSON object; asserts nothing.
//
//   node bench/prompt-path.mjs [--store-cache /tmp/hookstore] [--model-dir ../shared/models] [--calls 200] [--gap-ms 30]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'prompt-path-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'prompt-path-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
