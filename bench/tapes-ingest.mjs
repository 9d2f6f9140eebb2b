#!/usr/bin/env node
// Ingest benchmark: the shared fixture transcripts scaled up to ~8 MB each, recorded as tapes end to end; throughput in
// MB/s of transcript against reading and JSON.parse of the same bytes. Prints JSON lines; asserts nothing.
//
//   node bench/tapes-ingest.mjs [--mb 8] [--runs 3]     (run from the repository root, ../shared beside it)
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'tapes-ingest-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'tapes-ingest-run.mjs'));
await import(pathToFileURL(out).href);
