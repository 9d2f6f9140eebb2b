#!/usr/bin/env node
// Round 6: abstain rules replayed on a dev dump of the real engine (see bench/abstain-explore-run.ts).
//
//   node bench/abstain-dump.mjs --out /tmp/abstain-dev.json && node bench/abstain-explore.mjs --dump /tmp/abstain-dev.json
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'abstain-explore-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'abstain-explore-run.mjs'));
await import(pathToFileURL(out).href);
