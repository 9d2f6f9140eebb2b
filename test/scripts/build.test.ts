/**
 * What scripts/build.mjs puts into the bundles for the hooks' in-process path (dist/ is built once per test run by
 * test/global-setup.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtinTables } from '../../src/core/environment/detect.js';
import { contextHash } from '../../src/core/environment/cache.js';
import { configSchema } from '../../src/core/index.js';
import { ROOT } from '../_helpers.js';

const bundle = (name: string): string => readFileSync(join(ROOT, 'dist', name), 'utf8');

describe('the build', () => {
  it('stamps the environment cache’s hash of the built-in tag tables into every bundle that detects environments', () => {
    const stamped = JSON.stringify(contextHash(builtinTables()));
    expect(bundle('hooks/inprocess.cjs')).toContain(stamped);
    // The server's code is split into chunks: one of them holds the detection, with the same stamp.
    const chunks = readdirSync(join(ROOT, 'dist', 'chunks')).map((name) => bundle(join('chunks', name)));
    expect(chunks.some((text) => text.includes(stamped))).toBe(true);
  });

  it('bundles better-sqlite3’s JavaScript into the in-process path and leaves only its binary outside', () => {
    const text = bundle('hooks/inprocess.cjs');
    expect(text).not.toMatch(/require\(["']better-sqlite3["']\)/);
    expect(text).toContain('nativeBinding');
    // The ES module bundles (CLI, server) still load the package from node_modules when a store is opened.
    const chunks = readdirSync(join(ROOT, 'dist', 'chunks')).map((name) => bundle(join('chunks', name)));
    expect(chunks.some((chunk) => chunk.includes('better-sqlite3'))).toBe(true);
  });

  it('carries the default configuration as JSON: what the config schema gives for {}, so a hook without a config.json builds no schema', () => {
    const defaults = configSchema().parse({});
    // JSON holds it exactly (no undefined, no dates): what JSON.parse gives back is the same object.
    expect(JSON.parse(JSON.stringify(defaults))).toStrictEqual(defaults);
    expect(bundle('hooks/inprocess.cjs')).toContain(JSON.stringify(defaults));
  });
});
