import { join } from 'node:path';
import { bulkEmbedWorkers, loadEmbedderPool, POOL_TEXTS_PER_WORKER, resolveEmbedder, type Embedder } from '../core/index.js';
import type { CliContext } from './context.js';

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
  const choice = resolveEmbedder(settings);
  const workers = bulkEmbedWorkers(choice.spec?.kind, settings.config.embed.workers, texts);
  if (workers === 0 || !choice.spec) return run(inThread);
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
