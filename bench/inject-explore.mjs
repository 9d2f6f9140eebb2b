#!/usr/bin/env node
// Dev analysis of the hooks' choice on a dump of dev responses (see bench/inject-explore-run.ts).
//
//   node bench/inject.mjs --splits dev --dump /tmp/inject-dev.json
//   node bench/inject-explore.mjs --dump /tmp/inject-dev.json --variants [--all] | --breakdown lessons | --verbose lessons
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'inject-explore-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'inject-explore-run.mjs'));
await import(pathToFileURL(out).href);
