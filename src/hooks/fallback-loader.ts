/**
 * Loads the hooks' in-process path (`dist/hooks/inprocess.cjs`) with a V8 code cache. Compiling that bundle was a third
 * of a fallback hook's time and Node 20 has no compile cache for modules (`module.enableCompileCache` is Node ≥ 22.1),
 * so the bundle is one CommonJS file compiled through `node:vm` with the bytecode V8 produced the last time
 * (`cachedData`, what v8-compile-cache does). The cache is derived data: it lives in `$ENGRAM_HOME/cache/code/`, never
 * in the install or runtime folder (an install folder is never written after install; Codex fingerprints it), and is
 * named after the bundle's path, size and mtime and the Node version, so a rebuilt or updated runtime never reads
 * another build's bytecode (V8 itself checks only the source's length). Part of the fast path's bundle: Node
 * built-ins only, loaded when a hook falls back.
 * @module
 */
import { join } from 'node:path';
import type { runInProcess } from './inprocess.js';

/** The in-process path, relative to a runtime folder. */
export const FALLBACK_BUNDLE = join('dist', 'hooks', 'inprocess.cjs');

/** What the bundle exports. */
export interface FallbackModule {
  runInProcess: typeof runInProcess;
}

/** A loaded bundle, and how to keep its bytecode for the next hook. */
export interface LoadedFallback {
  module: FallbackModule;
  /** Where the code cache came from: `hit` (accepted), `miss` (none yet), `rejected` (V8 refused it), `off` (no cache). */
  cache: 'hit' | 'miss' | 'rejected' | 'off';
  /**
   * Writes the code cache when there was none or V8 rejected it. Call it after the hook ran: the bytecode V8 then
   * holds includes the functions the run compiled lazily. Never throws.
   */
  save(): void;
}

/** FNV-1a, 32-bit, in hex: a short file name without loading node:crypto into a hook. */
function fnv(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, '0');
}

/**
 * Loads `<runtime>/dist/hooks/inprocess.cjs`, with its code cache from `cacheDir` when there is a valid one. Throws
 * what loading the bundle throws (a runtime removed in part): the fast path logs it.
 */
export function loadFallback(runtime: string, cacheDir: string | null): LoadedFallback {
  const fs = process.getBuiltinModule('node:fs');
  const vm = process.getBuiltinModule('node:vm');
  const { createRequire, wrap } = process.getBuiltinModule('node:module');
  const file = join(runtime, FALLBACK_BUNDLE);
  const source = fs.readFileSync(file, 'utf8');
  let cacheFile: string | null = null;
  let cachedData: Buffer | undefined;
  if (cacheDir) {
    try {
      const stats = fs.statSync(file);
      // One file per bundle path; its stamp part changes with every build and Node version.
      const stamp = fnv(`${stats.size}:${stats.mtimeMs}:${stats.ino}:${process.version}:${process.arch}`);
      cacheFile = join(cacheDir, `inprocess-${fnv(file)}-${stamp}.bin`);
      cachedData = fs.readFileSync(cacheFile);
    } catch {
      // No cache yet (or no stat): compiled from source, and saved after the run.
    }
  }
  const script = new vm.Script(wrap(source), {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
    // The bundle may import() what it leaves outside (a model package): resolved as a module loaded normally would.
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const cache: LoadedFallback['cache'] = !cacheFile ? 'off' : !cachedData ? 'miss' : script.cachedDataRejected ? 'rejected' : 'hit';
  const module = { exports: {} as FallbackModule };
  const compiled = script.runInThisContext() as (...args: unknown[]) => void;
  compiled.call(module.exports, module.exports, createRequire(file), module, file, join(runtime, 'dist', 'hooks'));
  return {
    module: module.exports,
    cache,
    save() {
      if (!cacheFile || cache === 'hit') return;
      try {
        fs.mkdirSync(cacheDir as string, { recursive: true, mode: 0o700 });
        const prefix = `inprocess-${fnv(file)}-`;
        // Bytecode of this path's earlier builds is of no use any more.
        for (const name of fs.readdirSync(cacheDir as string)) {
          if (name.startsWith(prefix) && join(cacheDir as string, name) !== cacheFile) fs.rmSync(join(cacheDir as string, name), { force: true });
        }
        // Written under a temporary name and renamed, so a hook starting meanwhile never reads half a file.
        const partial = `${cacheFile}.${process.pid}.partial`;
        fs.writeFileSync(partial, script.createCachedData(), { mode: 0o600 });
        fs.renameSync(partial, cacheFile);
      } catch {
        // A read-only or full home: the next fallback compiles from source again.
      }
    },
  };
}
