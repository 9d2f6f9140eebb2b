/**
 * The warm server's background embedding of many engrams with USE lite runs in a pool of worker threads
 * (dist/embed-worker.mjs, core/embed/pool.ts), off the event loop that answers hooks, and stops the pool when done.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, useLiteInstalled } from '../../src/core/index.js';
import { addEngram } from '../../src/services/index.js';
import { ROOT, stopServer, tempDir, until } from '../_helpers.js';

const LESSONS = readFileSync(join(ROOT, 'fixtures', 'eval', 'memories.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => (JSON.parse(line) as { text: string }).text);

describe.skipIf(process.platform !== 'linux' || !useLiteInstalled())('the warm server embeds a backlog on worker threads', () => {
  it('embeds every engram that lacks a vector with a pool of 2 workers, then stops it', async () => {
    const home = tempDir();
    writeFileSync(join(home, 'config.json'), JSON.stringify({ embed: { workers: 2 } }));
    const store = openStore({ path: join(home, 'engram.db') });
    for (const [i, text] of LESSONS.slice(0, 120).entries()) addEngram(store, { text: `${text} (${i})`, category: 'general', tags: [] });
    store.close();
    const server = spawn(process.execPath, [join(ROOT, 'dist', 'server.mjs')], {
      env: { ...process.env, HOME: home, ENGRAM_HOME: home, ENGRAM_EMBEDDER: 'use-lite', ENGRAM_PORT: '0' },
      stdio: 'ignore',
      detached: true,
    });
    server.unref();
    const logFile = join(home, 'logs', 'server.log');
    const done = (): Record<string, unknown> | undefined =>
      existsSync(logFile)
        ? readFileSync(logFile, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as Record<string, unknown>)
            .find((entry) => entry.msg === 'embedded missing vectors')
        : undefined;
    try {
      await until(() => done() !== undefined, 'the background embedding', 120_000);
      // The warm-up search embedded the first few in this thread; the rest (≥ 64) went to the pool.
      expect(done()).toMatchObject({ model: 'use-lite', workers: 2 });
      const check = openStore({ path: join(home, 'engram.db') });
      try {
        const space = check.vectors().findSpace('use-lite', 512);
        expect(space && check.vectors().countPending(space)).toBe(0);
        expect(space && check.vectors().countCurrent(space)).toBe(120);
      } finally {
        check.close();
      }
    } finally {
      await stopServer(home);
    }
  });
});
