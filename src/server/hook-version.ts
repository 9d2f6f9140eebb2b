/**
 * Which Engram version a hook is, found by the server from the hook's install folder. A hook used to read its
 * runtime's dist/build.json itself before posting its call (with `findRuntime`, ~0.3 ms of every hook process: mostly
 * Node compiling the fs functions it called once); it now sends the folder it runs from (and the agent's plugin data
 * folder, where the runtime's pointer is) and the server resolves it the same way — hooks/run.cjs `findRuntime`, then
 * that runtime's build.json — in a process where those functions are warm. The version is the runtime's, not the
 * launcher's: a source checkout whose dist/ is older than its hooks is the version of its dist/, the server it
 * started, so it does not make every hook restart the server.
 *
 * build.json's version is kept by its file's identity (inode, size, mtime): a rebuild or a new runtime is seen on
 * the next call, at one `stat` per call once the runtime is found.
 * @module
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { BUILD_INFO, findRuntime } from '../../hooks/run.cjs';

/** Kept versions, by build.json path: more than any one home's install folders, cleared whole past it. */
const KEEP = 64;

/**
 * Resolves hooks' versions for the server of `home`: `(root, pluginData)` → the version of the runtime the hook in
 * install folder `root` runs with, or null when it has none (not built, a pointer no longer valid) or its build.json
 * cannot be read. Never throws.
 */
export function hookVersions(home: string): (root: string, pluginData: string) => string | null {
  const kept = new Map<string, { stamp: string; version: string | null }>();
  return (root, pluginData) => {
    if (!isAbsolute(root)) return null;
    try {
      // The hook's own lookup: its home is this server's (the mailbox it posted to is in it).
      const runtime = findRuntime(root, { ENGRAM_HOME: home, PLUGIN_DATA: pluginData });
      if (!runtime) return null;
      const file = `${runtime.dir}/${BUILD_INFO}`;
      const stats = statSync(file);
      const stamp = `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
      const known = kept.get(file);
      if (known?.stamp === stamp) return known.version;
      const version = (JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown } | null)?.version;
      if (kept.size >= KEEP) kept.clear();
      const entry = { stamp, version: typeof version === 'string' ? version : null };
      kept.set(file, entry);
      return entry.version;
    } catch {
      return null;
    }
  };
}
