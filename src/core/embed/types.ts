/** What makes vectors. `test` is the deterministic hashing embedder for plumbing tests. */
export type EmbedderKind = 'transformers' | 'use-lite' | 'test';

/** A loaded embedding model. */
export interface Embedder {
  readonly kind: EmbedderKind;
  /** Stable id stored with every vector, e.g. `transformers:Xenova/all-MiniLM-L6-v2`, `use-lite`, `test:hash`. */
  readonly model: string;
  /** Vector length. */
  readonly dim: number;
  /** One unit-length vector per text, in order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Which embedder to load, decided from configuration without loading anything. */
export type EmbedderSpec =
  | { kind: 'transformers'; model: string; modelDir: string; folder: string; quantized: boolean }
  | { kind: 'use-lite'; model: 'use-lite' }
  | { kind: 'test'; model: 'test:hash' };

/** The outcome of resolving configuration: a spec to load, or why there is no embedder (search is BM25 only). */
export type EmbedderChoice =
  | { spec: EmbedderSpec; reason: string }
  | { spec: null; reason: string };

/** The id a transformers.js model's vectors are stored under. */
export const transformersModelId = (model: string): string => `transformers:${model}`;

/** The id vectors made by this spec are stored under (`Embedder.model` once loaded). */
export function vectorModelId(spec: EmbedderSpec): string {
  return spec.kind === 'transformers' ? transformersModelId(spec.model) : spec.model;
}

/** Scales a vector to unit length in place (a zero vector is left as it is) and returns it. */
export function toUnitLength(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) / norm;
  return vector;
}
