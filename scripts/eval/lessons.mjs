#!/usr/bin/env node
// Bundles and runs scripts/eval/lessons-run.ts (it uses the hooks' query functions from src/). See that file.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../bundle.mjs';

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const out = await bundleEntry(join(root, 'scripts', 'eval', 'lessons-run.ts'), join(root, 'node_modules', '.cache', 'engram-eval', 'lessons-run.mjs'));
process.env.ENGRAM_REPO_ROOT = root;
await import(pathToFileURL(out).href);
