#!/usr/bin/env node
// Round 6: the weak-match rule's inputs per dev query, from the real engine (see bench/abstain-dump-run.ts).
//
//   node bench/abstain-dump.mjs --out /tmp/abstain-dev.json [--sets ...] [--embedders ...]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'abstain-dump-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'abstain-dump-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
