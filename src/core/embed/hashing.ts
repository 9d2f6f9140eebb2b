import { toUnitLength, type Embedder } from './types.js';

const DIM = 64;

/** FNV-1a, 32-bit. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Signed feature hashing of lowercased words into 64 buckets, normalised. */
function hashVector(text: string): Float32Array {
  const vector = new Float32Array(DIM);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const stem = word.length > 3 ? word.replace(/(ing|ed|es|s)$/, '') : word;
    const hash = fnv1a(stem);
    const bucket = hash % DIM;
    vector[bucket] = (vector[bucket] as number) + (hash & 0x80000000 ? -1 : 1);
  }
  if (vector.every((value) => value === 0)) vector[0] = 1; // a text with no words still gets a direction
  return toUnitLength(vector);
}

/**
 * A deterministic embedder with no model: texts sharing words get similar vectors. For plumbing tests only (it knows
 * nothing of meaning); behaviour tests use a real model.
 */
export function createHashingEmbedder(): Embedder {
  return {
    kind: 'test',
    model: 'test:hash',
    dim: DIM,
    embed: async (texts) => texts.map(hashVector),
  };
}
