#!/usr/bin/env node
// Schema linter speed (issue 16: 1 MB of docs in ≤ 200 ms): synthetic living docs and graveyards of about 1 MB in
// total, built from the seed's entry shapes (concepts with Code: pointers, claims with evidence chains, workflows,
// timeline phases, graveyard entries with corrections), linted in-process: parse + every rule, including the chunk
// checks (reserved ids, removed entries, append-only graveyards, growth). Prints JSON lines; asserts nothing.
// The baseline is the cheapest possible pass over the same text measured in the same run (split into lines and
// test one regular expression per line), so the ratio says what the rules cost on top of reading.
//
//   node bench/knowledge-lint.mjs [--mb 1] [--runs 30]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'knowledge-lint-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'knowledge-lint-run.mjs'));
await import(pathToFileURL(out).href);
