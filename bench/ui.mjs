#!/usr/bin/env node
// Viewer benchmark: the Engrams screen's first page from the API (GET /ui/api/engrams over a real loopback HTTP
// server, with the secret header and every guard) on a store of 100k engrams, next to the same listEngrams call made
// in-process and a bare /ui/api/ping round trip measured in the same run (target: first page ≤ 300 ms). Also filtered,
// stale pages, a deep page by OFFSET and by keyset, the filter counts as they were computed before (four queries) and
// now (one pass, uncached and cached), one engram's detail, an explained search, and the newer screens' first pages:
// the review queue, sessions (5,000, with prompts, tool calls, injections and judgements), one session, the tapes list
// (300 tapes) and a tape's timeline. Prints JSON with the load average; asserts nothing.
//
//   node bench/ui.mjs [--size 100000] [--reps 40] [--sessions 5000] [--tapes 300] [--tape-events 400]
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'ui-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'ui-run.mjs'));
// The worker thread the warm server builds its text index in at start (review's near-duplicates read it), bundled like
// the bench; absent from trees without it.
const worker = join(root, 'src', 'server', 'text-index-worker.ts');
const built = existsSync(worker) ? await bundleEntry(worker, join(root, 'node_modules', '.cache', 'engram-bench', 'text-index-worker.mjs')) : '';
process.argv.push('--root', root, '--text-index-worker', built);
await import(pathToFileURL(out).href);
