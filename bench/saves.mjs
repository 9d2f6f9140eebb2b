#!/usr/bin/env node
// Save latency in big stores: what one save costs at 10k and 100k engrams, and the conflict check inside it — the
// store's text index (services/governance) next to the full scan it replaced (every active engram in scope read and
// judged, analyses cached per process, as before), interleaved probe by probe in the same run, with their answers
// compared. Corpora: lessons (fixtures/eval and eval-lessons, varied: a real vocabulary), skewed (bench/http's generator:
// two dozen words in most engrams) and salad (30 of 100 words each: every stem in nearly every engram, so nearly every
// pair passes rule 1 — the case no index can make cheap). `--server` also starts dist/server.mjs on each store: its first
// save over HTTP once warm, and its memory. Prints JSON lines with the load average; asserts nothing.
//
//   node bench/saves.mjs [--sizes 10000,100000] [--corpora lessons,skewed,salad] [--probes 200] [--saves 100] [--server]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'saves-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'saves-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
