import { describe, expect, it } from 'vitest';
import {
  anchorsForText,
  containment,
  fingerprints,
  fingerprintSet,
  hashToken,
  jaccard,
  scannedTokens,
  tokenize,
} from '../../../src/services/tape/fingerprint.js';
import { INDEX_PROFILES } from '../../../src/services/tape/tuning.js';

/** mulberry32: a tiny seeded PRNG, so failures replay exactly. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VOCABULARY = ['let', 'x', 'y', 'return', 'if', '(', ')', '{', '}', ';', '=', '+', 'foo', 'bar', 'baz', '42', 'async', 'await', '.', ','];

function randomTokens(random: () => number, count: number): string[] {
  return Array.from({ length: count }, () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]!);
}

/** Joins tokens with random whitespace, including line breaks, so layout varies between the two texts. */
function layout(random: () => number, tokens: string[]): string {
  return tokens.map((token) => token + [' ', '  ', '\n', '\n    ', '\t'][Math.floor(random() * 5)]).join('');
}

const CODE = `export function verifyToken(token: string, now: Date): boolean {
  const claims = decodeClaims(token);
  if (claims.expiresAt < now.getTime() - CLOCK_SKEW_MS) {
    return false;
  }
  return claims.issuer === TRUSTED_ISSUER && claims.audience.includes('api');
}`;

describe('tokenize', () => {
  it('lowercases word runs and makes every other visible character its own token', () => {
    expect(tokenize('Foo_bar(x1) += "é"').map((t) => t.text)).toEqual(['foo_bar', '(', 'x1', ')', '+', '=', '"', 'é', '"']);
  });

  it('records the line each token starts on', () => {
    expect(tokenize('a\n\n  b c').map((t) => t.line)).toEqual([1, 3, 3]);
  });

  it('is what the one-pass scanner hashes, for any script, case and whitespace (seeded random texts)', () => {
    // Case mappings that change length or depend on position (İ, final Σ), astral and lone surrogates, Unicode spaces.
    const pieces = ['a', 'Q', '_', '7', ' ', '\n', '\t', '\r', '(', '.', 'é', 'É', 'Σ', 'ς', 'İ', 'ß', 'Ⓐ', '٣', '中', '\u00a0', '\u2028', '\ufeff', '😀', '𝐀', '\ud800', '\udc00'];
    const random = prng(7);
    for (let trial = 0; trial < 3000; trial++) {
      const text = Array.from({ length: Math.floor(random() * 40) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
      const expected = tokenize(text).map((token) => ({ lanes: hashToken(token.text), line: token.line }));
      expect(scannedTokens(text), JSON.stringify(text)).toEqual(expected);
    }
  });
});

describe('fingerprints', () => {
  it('detects every shared run of w + k − 1 tokens (seeded random texts)', () => {
    for (const profile of Object.values(INDEX_PROFILES)) {
      const guarantee = profile.w + profile.k - 1;
      const random = prng(20260215 + profile.k);
      for (let trial = 0; trial < 300; trial++) {
        const shared = randomTokens(random, guarantee + Math.floor(random() * 4));
        const left = [...randomTokens(random, Math.floor(random() * 40)), ...shared, ...randomTokens(random, Math.floor(random() * 40))];
        const right = [...randomTokens(random, Math.floor(random() * 40)), ...shared, ...randomTokens(random, Math.floor(random() * 40))];
        const a = fingerprintSet(layout(random, left), profile);
        const b = fingerprintSet(layout(random, right), profile);
        expect(jaccard(a, b), `trial ${trial}, k=${profile.k} w=${profile.w}`).toBeGreaterThan(0);
      }
    }
  });

  it('keeps a block’s fingerprints when lines are inserted above it', () => {
    const before = fingerprintSet(CODE);
    const shifted = fingerprintSet(`// a new header\nimport { x } from './x';\n\n\n${CODE}`);
    for (const hash of before) expect(shifted.has(hash)).toBe(true);
  });

  it('ignores whitespace and indentation', () => {
    const reindented = CODE.split('\n')
      .map((line) => `\t\t${line.trim()}   `)
      .join('\n\n');
    expect(fingerprintSet(reindented)).toEqual(fingerprintSet(CODE));
  });

  it('is deterministic and keeps about 2 / (w + 1) of the k-grams', () => {
    const first = fingerprints(CODE);
    expect(fingerprints(CODE)).toEqual(first);
    const grams = tokenize(CODE).length - INDEX_PROFILES.default.k + 1;
    expect(first.length).toBeGreaterThan(grams * 0.25);
    expect(first.length).toBeLessThan(grams * 0.6);
  });

  it('gives distinct k-grams distinct signed 64-bit fingerprints', () => {
    const seen = new Map<bigint, string>();
    let negative = 0;
    for (let i = 0; i < 20_000; i++) {
      const gram = `alpha_${i} ( beta_${i % 97} , ${i * 31} )`; // 6 tokens: two 5-grams found in no other text
      for (const print of fingerprints(gram)) {
        expect(print.hash >= -(2n ** 63n) && print.hash < 2n ** 63n).toBe(true);
        const text = tokenize(gram).slice(print.position, print.position + 5).map((t) => t.text).join(' ');
        expect(seen.get(print.hash) ?? text).toBe(text);
        seen.set(print.hash, text);
        if (print.hash < 0n) negative++;
      }
    }
    // Both halves of the signed range are used (winnowing keeps minima, so negatives are the majority).
    expect(negative).toBeGreaterThan(0);
    expect(negative).toBeLessThan(seen.size);
  });

  it('gives a text shorter than a k-gram one fingerprint and empty text none', () => {
    expect(fingerprints('return x;')).toHaveLength(1);
    expect(fingerprints(' \n\t ')).toEqual([]);
  });

  it('keeps unrelated code apart', () => {
    const other = `class Cache<K, V> {\n  private readonly map = new Map<K, V>();\n  get(key: K): V | undefined { return this.map.get(key); }\n}`;
    expect(jaccard(fingerprintSet(CODE), fingerprintSet(other))).toBeLessThan(0.05);
  });
});

describe('anchorsForText', () => {
  const long = Array.from({ length: 60 }, (_, i) => `const value${i} = compute(${i}, "line ${i}");`).join('\n');

  it('covers a long span with 24-line windows overlapping by 12, the last aligned to the end', () => {
    const anchors = anchorsForText(long, { firstLine: 101 });
    expect(anchors.map((a) => [a.start_line, a.end_line])).toEqual([
      [101, 124],
      [113, 136],
      [125, 148],
      [137, 160],
    ]);
  });

  it('makes one anchor of a span smaller than a window', () => {
    const anchors = anchorsForText('if (ready) {\n  start();\n}', { firstLine: 7 });
    expect(anchors).toHaveLength(1);
    expect(anchors[0]).toMatchObject({ start_line: 7, end_line: 9 });
  });

  it('returns nothing for blank text', () => {
    expect(anchorsForText('\n\n')).toEqual([]);
  });
});

describe('similarity', () => {
  it('computes Jaccard and containment', () => {
    const a = new Set([1n, 2n, 3n, 4n]);
    const b = new Set([3n, 4n, 5n]);
    expect(jaccard(a, b)).toBeCloseTo(2 / 5);
    expect(containment(b, a)).toBeCloseTo(2 / 3);
    expect(jaccard(new Set(), new Set())).toBe(0);
  });
});
