import { createHashingEmbedder } from './hashing.js';
import { loadTransformersEmbedder } from './transformers.js';
import type { Embedder, EmbedderSpec } from './types.js';
import { loadUseLiteEmbedder } from './use-lite.js';

// A model takes 0.1–0.4 s to load and ~150 MB to hold: one instance per spec per process.
const loaded = new Map<string, Promise<Embedder>>();

/** Loads (once per process) the embedder a spec names. Rejects with an EngramError when it cannot load. */
export function loadEmbedder(spec: EmbedderSpec, log?: (line: string) => void): Promise<Embedder> {
  const key = JSON.stringify(spec);
  let embedder = loaded.get(key);
  if (!embedder) {
    embedder =
      spec.kind === 'test'
        ? Promise.resolve(createHashingEmbedder())
        : spec.kind === 'use-lite'
          ? loadUseLiteEmbedder(log)
          : loadTransformersEmbedder(spec, log);
    // A failed load is not cached: the next call (after `engram model pull`, say) tries again.
    embedder.catch(() => loaded.delete(key));
    loaded.set(key, embedder);
  }
  return embedder;
}
