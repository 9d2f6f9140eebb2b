import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings, readEnv } from '../../src/core/index.js';
import { tempDir } from '../_helpers.js';

// A file of its own: zod keeps the fast path it compiles per schema, so this must be the process's first config parse.
describe('the config parse', () => {
  const RealFunction = globalThis.Function;
  afterEach(() => {
    globalThis.Function = RealFunction;
  });

  it('compiles no zod fast path (new Function): a hook parses its config once', () => {
    let compiled = 0;
    globalThis.Function = new Proxy(RealFunction, {
      construct(target, args) {
        compiled++;
        return Reflect.construct(target, args) as object;
      },
      apply(target, self, args) {
        compiled++;
        return Reflect.apply(target, self, args) as unknown;
      },
    });
    const defaults = tempDir();
    const written = tempDir();
    writeFileSync(join(written, 'config.json'), JSON.stringify({ hooks: { tool_chars: 900 }, server: { enabled: false } }));
    const fromDefaults = loadSettings(readEnv({ HOME: '/h', ENGRAM_HOME: defaults }));
    const fromFile = loadSettings(readEnv({ HOME: '/h', ENGRAM_HOME: written }));
    globalThis.Function = RealFunction;
    expect(compiled).toBe(0);
    expect(fromDefaults.config.hooks.tool_chars).toBe(1_200);
    expect(fromFile.config.hooks.tool_chars).toBe(900);
    expect(fromFile.config.server.enabled).toBe(false);
  });
});
