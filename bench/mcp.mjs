#!/usr/bin/env node
// MCP benchmark: how long `engram mcp` takes to answer `initialize` (next to a bare `node -e ''`), and what an
// `engram_search` costs over MCP against a 10k-engram store (next to the same operation run in-process on the same
// store; the difference is the MCP overhead, target ≤ 3 ms p50). Prints JSON lines; asserts nothing. Needs a build.
//
//   node bench/mcp.mjs [--size 10000] [--queries 200] [--starts 10]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../scripts/bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await bundleEntry(join(root, 'bench', 'mcp-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'mcp-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
