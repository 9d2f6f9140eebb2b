#!/usr/bin/env node
// Fusion tuning on the dev splits of the evaluation sets (never test: refused in code). See bench/tune-run.ts.
//
//   node bench/tune.mjs [--sets eval,conversations,lessons] [--embedders use-lite,ctx-use-256,static-use-256]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'tune-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'tune-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
