import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../../scripts/bundle.mjs';
const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const out = await bundleEntry(join(root, 'bench', 'explore', 'order-run.ts'), join(root, 'node_modules', '.cache', 'engram-bench', 'order-run.mjs'));
process.argv.push('--root', root);
await import(pathToFileURL(out).href);
