// Shared esbuild settings: the build (scripts/build.mjs), and the one-file bundles that tests and benchmarks run in
// child processes (a TypeScript entry → an ESM file that loads native and model packages from node_modules).
import { build } from 'esbuild';

/** Loaded at run time from node_modules, never bundled (see ../shared/reference/dependencies.md §7). */
// @bokuweb/zstd-wasm reads its zstd.wasm beside its own file (__dirname), so it must stay in node_modules.
// yaml is required lazily by services/knowledge/config.ts: outside the bundle, the hooks never parse it.
export const EXTERNAL = ['better-sqlite3', 'sqlite-vec', '@xenova/transformers', '@energetic-ai/*', 'onnxruntime-node', 'sharp', '@bokuweb/zstd-wasm', 'yaml'];

/** Bundled CommonJS dependencies call require() for Node built-ins; ESM has no require, so give them one. */
export const REQUIRE_BANNER = "import { createRequire as __engramRequire } from 'node:module';\nconst require = __engramRequire(import.meta.url);";

/** What every Engram bundle shares: one ESM file for Node 20, native and model packages left outside. */
export const BASE_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  banner: { js: REQUIRE_BANNER },
};

/**
 * Bundles one TypeScript entry into `outfile` (unminified). The file must live inside the repository (e.g. under
 * node_modules/.cache) so its externals resolve from this node_modules.
 */
export async function bundleEntry(entry, outfile) {
  await build({ ...BASE_OPTIONS, entryPoints: [entry], outfile, logLevel: 'error' });
  return outfile;
}
