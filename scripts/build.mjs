#!/usr/bin/env node
// Bundles the CLI and each hook entrypoint into dist/ with esbuild. Native and model packages stay external (they
// load files relative to themselves; see ../shared/reference/dependencies.md §7), everything else is inlined so a
// hook process parses one file.
//
//   node scripts/build.mjs [--no-minify]
//
// --no-minify keeps names and layout readable, for `node --cpu-prof` profiles (a minified profile names nothing).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASE_OPTIONS, EXTERNAL } from './bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const started = performance.now();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const minify = !process.argv.includes('--no-minify');

const entryPoints = {
  cli: join(root, 'src/cli/main.ts'),
  server: join(root, 'src/server/main.ts'),
  // The worker thread in which the server rebuilds its BM25 base, off the event loop that answers hooks.
  'bm25-worker': join(root, 'src/server/bm25-worker.ts'),
  // The worker thread in which the server builds the text index saves compare new texts with (conflicts).
  'text-index-worker': join(root, 'src/server/text-index-worker.ts'),
  // The worker threads of an embedding pool (core/embed/pool.ts): `engram import` / `reindex` embed on every core.
  'embed-worker': join(root, 'src/server/embed-worker.ts'),
  // What `engram mcp` loads when the background server cannot answer: the store, BM25 search, the operations.
  'mcp-inprocess': join(root, 'src/mcp/inprocess.ts'),
};

// Two values computed once here by the same code the bundles run, and stamped into every bundle (define):
// - the environment cache's hash of its built-in tag tables (src/core/environment/detect.ts builtinTables): a hook
//   would otherwise hash their ~3 KB in JavaScript on every event (~3 ms in a cold process);
// - the default configuration (src/core/config.ts defaultConfig), so a hook without a config.json builds no config
//   schema (~90 zod schemas, ~7 ms) to parse `{}`.
const stamps = await (async () => {
  const bundled = await build({
    stdin: {
      contents:
        "export { builtinTables } from './environment/detect.ts'; export { contextHash } from './environment/cache.ts'; export { defaultConfig } from './config.ts';",
      resolveDir: join(root, 'src', 'core'),
      loader: 'ts',
    },
    // Only what these need (tree-shaken, zod included): no banner, so it runs from a data: URL.
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'warning',
  });
  const core = await import(`data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString('base64')}`);
  return { tablesHash: core.contextHash(core.builtinTables()), defaultConfig: JSON.stringify(core.defaultConfig()) };
})();
const define = {
  __ENGRAM_VERSION__: JSON.stringify(pkg.version),
  __ENGRAM_BUILTIN_TABLES_HASH__: JSON.stringify(stamps.tablesHash),
  __ENGRAM_DEFAULT_CONFIG__: JSON.stringify(stamps.defaultConfig),
};

rmSync(join(root, 'dist'), { recursive: true, force: true });
mkdirSync(join(root, 'dist'), { recursive: true });
await build({
  entryPoints,
  outdir: join(root, 'dist'),
  outExtension: { '.js': '.mjs' },
  // Code shared by several bundles goes to chunks loaded on demand: a hook's fast path (stdin → socket → stdout)
  // parses only its own few kilobytes, and the in-process fallback (store, search, zod) is a dynamic import.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  ...BASE_OPTIONS,
  define,
  legalComments: 'none',
  // Hooks run on every agent event: a smaller file parses faster. Names are kept so stack traces stay readable.
  minify,
  keepNames: true,
  // package.json declares "sideEffects": false, so modules a bundle does not use (and their schemas) are dropped.
  metafile: true,
  logLevel: 'warning',
});
// The hook fast path (hooks/run.cjs requires it on every agent event): one CommonJS file with no chunks to resolve
// and only Node built-ins, because an ES module graph costs a hook process several milliseconds more to load.
await build({
  entryPoints: { 'hooks/fast': join(root, 'src/hooks/fast.ts') },
  define,
  outdir: join(root, 'dist'),
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify,
  keepNames: true,
  legalComments: 'none',
  logLevel: 'warning',
});
// What a hook loads when the server does not answer (the store, BM25 search, the handlers): one CommonJS file, no
// chunks, because the fast path compiles it through node:vm with a V8 code cache (src/hooks/fallback-loader.ts) —
// Node 20 has no compile cache for modules, and compiling the ES module graph was a third of a fallback hook.
await build({
  entryPoints: { 'hooks/inprocess': join(root, 'src/hooks/inprocess.ts') },
  outdir: join(root, 'dist'),
  outExtension: { '.js': '.cjs' },
  ...BASE_OPTIONS,
  format: 'cjs',
  // better-sqlite3's JavaScript is bundled here (compiled from the code cache with the rest, instead of ~13 files from
  // node_modules each fallback); its native binary stays outside and is passed as `nativeBinding`
  // (core/store/database.ts useBundledSqlite), so `bindings`, which would look for it, is never called.
  external: [...EXTERNAL.filter((name) => name !== 'better-sqlite3'), 'bindings'],
  // CommonJS has no import.meta: the modules that resolve packages beside themselves (createRequire) get the file's URL.
  define: { ...define, 'import.meta.url': '__engramFileUrl' },
  // 'use strict' first: the banner comes before esbuild's own directive, and the sources are strict ES modules.
  banner: { js: "'use strict';var __engramFileUrl = require('node:url').pathToFileURL(__filename).href;" },
  legalComments: 'none',
  minify,
  // No keepNames here: its per-function name calls were a sixth of evaluating this bundle, and the hook log records
  // errors by name, code and message, never by stack.
  keepNames: false,
  logLevel: 'warning',
});
// The viewer page (`engram ui`): browser code in one file, with its HTML and CSS beside it. Nothing is fetched from
// anywhere but the server that serves it (its Content-Security-Policy allows only 'self').
await build({
  entryPoints: { app: join(root, 'src/ui/client/main.ts') },
  outdir: join(root, 'dist', 'ui'),
  bundle: true,
  platform: 'browser',
  format: 'esm',
  target: 'es2022',
  minify,
  legalComments: 'none',
  logLevel: 'warning',
});
for (const file of ['index.html', 'app.css']) copyFileSync(join(root, 'src/ui/client', file), join(root, 'dist', 'ui', file));
writeFileSync(join(root, 'dist', 'build.json'), `${JSON.stringify({ version: pkg.version, built_at: new Date().toISOString() })}\n`);
process.stdout.write(`built dist/ (${Object.keys(entryPoints).length + 3} bundles) in ${Math.round(performance.now() - started)} ms\n`);
