/**
 * The version of the Engram a hook is, found by the server from the hook's install folder (server/hook-version.ts):
 * the runtime findRuntime finds for that folder (built in place, or through its pointer in the plugin data folder or
 * the home), then that runtime's dist/build.json — a rebuilt one seen on the next call. Real folders and files.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAST_PATH, NATIVE_BINDING, lockStamp, pointerFile } from '../../hooks/run.cjs';
import { hookVersions } from '../../src/server/hook-version.js';
import { tempDir } from '../_helpers.js';

/** A runtime folder (the files findRuntime checks for in place) whose build.json says `version`. */
function runtimeFolder(version: string | null): string {
  const dir = tempDir();
  for (const file of [FAST_PATH, NATIVE_BINDING]) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), '');
  }
  if (version !== null) writeFileSync(join(dir, 'dist', 'build.json'), `${JSON.stringify({ version, built_at: 'now' })}\n`);
  return dir;
}

/** Points install folder `root` at runtime `dir` as the bootstrap does (pointer file keyed by the folder). */
function point(root: string, dir: string, env: Record<string, string>): void {
  const file = pointerFile(root, env);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, JSON.stringify({ root, dir, key: 'k', lock: lockStamp(root) }));
}

describe('hookVersions', () => {
  it('a folder built in place: the version of its own build.json', () => {
    const root = runtimeFolder('1.2.3');
    expect(hookVersions(tempDir())(root, '')).toBe('1.2.3');
  });

  it('sees a rebuilt build.json on the next call', () => {
    const root = runtimeFolder('1.2.3');
    const versionOf = hookVersions(tempDir());
    expect(versionOf(root, '')).toBe('1.2.3');
    // Written aside and renamed over it, as a build might: another file, and another version.
    writeFileSync(join(root, 'dist', 'build.new'), '{"version":"1.2.4"}\n');
    renameSync(join(root, 'dist', 'build.new'), join(root, 'dist', 'build.json'));
    expect(versionOf(root, '')).toBe('1.2.4');
    // Rewritten in place with another size.
    writeFileSync(join(root, 'dist', 'build.json'), '{"version":"1.2.10"}\n');
    expect(versionOf(root, '')).toBe('1.2.10');
  });

  it('a plugin install: the runtime its pointer in the plugin data folder names', () => {
    const root = tempDir();
    const data = tempDir();
    point(root, runtimeFolder('2.0.0'), { PLUGIN_DATA: data });
    const versionOf = hookVersions(tempDir());
    expect(versionOf(root, data)).toBe('2.0.0');
    // Without the plugin data folder the home is looked in, where this folder has no pointer.
    expect(versionOf(root, '')).toBeNull();
  });

  it('the CLI’s pointer in the home, for a folder without plugin data', () => {
    const root = tempDir();
    const home = tempDir();
    point(root, runtimeFolder('2.1.0'), { ENGRAM_HOME: home });
    expect(hookVersions(home)(root, '')).toBe('2.1.0');
  });

  it('null without a runtime, without a build.json, or for a relative folder', () => {
    const versionOf = hookVersions(tempDir());
    expect(versionOf(tempDir(), '')).toBeNull();
    expect(versionOf(runtimeFolder(null), '')).toBeNull();
    expect(versionOf('relative/folder', '')).toBeNull();
    const root = runtimeFolder('3.0.0');
    expect(versionOf(root, '')).toBe('3.0.0');
    rmSync(join(root, 'dist', 'build.json'));
    expect(versionOf(root, '')).toBeNull();
  });
});
