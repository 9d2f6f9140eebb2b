import { join } from 'node:path';
import { defaultEmbedWorkers, loadEmbedderPool, POOL_TEXTS_PER_WORKER, resolveEmbedder, type Embedder } from '../core/index.js';
import type { CliContext } from './context.js';

/** Fewer texts than this are embedded in this thread: a pool's workers each load the model (~0.5–1 s, in parallel). */
export const POOL_MIN_TEXTS = 64;

/** What a bulk job embeds with, and the batch size that keeps it busy. */
export interface BulkEmbedder {
  load: () => Promise<{ embedder: Embedder | null; reason: string }>;
  batchSize: number | undefined;
  /** Worker threads that embedded (0: this thread), once `load` ran. */
  workers: () => number;
}

/**
 * Runs a bulk embedding job (import, reindex) of about `texts` texts. With USE lite and enough texts it embeds in a
 * pool of worker threads (`embed.workers`, default cores − 1 and at least 2; 0 turns the pool off), closed when `run`
 * ends; otherwise, or when the workers cannot start, with the search engine's embedder in this thread. Only these
 * commands start a pool: hooks and searches never do.
 */
export async function withBulkEmbedder<T>(context: CliContext, texts: number, run: (bulk: BulkEmbedder) => Promise<T>): Promise<T> {
  const settings = context.settings();
  const configured = settings.config.embed.batch_size;
  const inThread: BulkEmbedder = { load: () => context.searchEngine().embedder(), batchSize: configured, workers: () => 0 };
  const workers = settings.config.embed.workers ?? defaultEmbedWorkers();
  const choice = resolveEmbedder(settings);
  if (choice.spec?.kind !== 'use-lite' || workers < 2 || texts < POOL_MIN_TEXTS) return run(inThread);
  const spec = choice.spec;
  let pool: Awaited<ReturnType<typeof loadEmbedderPool>> | undefined;
  try {
    return await run({
      load: async () => {
        try {
          pool = await loadEmbedderPool(spec, {
            script: join(context.runtimeDir, 'dist', 'embed-worker.mjs'),
            workers,
            log: (line) => context.log().warn(line),
          });
          return { embedder: pool, reason: choice.reason };
        } catch {
          // The in-thread load failed too (USE lite not installed): the search engine reports why, as before.
          return inThread.load();
        }
      },
      batchSize: configured ?? POOL_TEXTS_PER_WORKER * workers,
      workers: () => pool?.workers ?? 0,
    });
  } finally {
    await pool?.close();
  }
}
