/**
 * Language-agnostic text fingerprints: tokens → k-gram hashes → winnowing (Schleimer, Wilkerson, Aiken 2003), the
 * same scheme as the clickety-clacks/engram reference. Implemented here rather than taken from npm: the one maintained
 * package (@dodona/dolos-core) hashes into 25 bits (mod 33554393), which collides far too often for an index of
 * millions of fingerprints across tapes, and is tied to its own tree-sitter token model.
 *
 * Guarantee: two texts that share a run of at least `w + k − 1` tokens share at least one fingerprint. Fingerprints
 * depend only on nearby tokens, so moving a block, re-indenting it or adding lines above it keeps them.
 * @module
 */
import { hash as digest } from 'node:crypto';
import { INDEX_PROFILES, TAPE_TUNING, type FingerprintParams } from './tuning.js';

/** One token and the 1-based line it starts on. */
export interface Token {
  text: string;
  line: number;
}

/** One kept fingerprint: a signed 64-bit hash (SQLite INTEGER), where its k-gram starts, and its line. */
export interface Fingerprint {
  hash: bigint;
  /** Index of the k-gram's first token. */
  position: number;
  /** 1-based line of the k-gram's first token. */
  line: number;
}

/** The fingerprints of one window of lines of a span: what a span is matched by. */
export interface SpanAnchor {
  /** 1-based inclusive lines, in the numbering of the caller (`firstLine`). */
  start_line: number;
  end_line: number;
  /** Distinct fingerprint hashes of the window, ascending. */
  hashes: bigint[];
}

// A word is a run of letters, digits and underscores (any script); any other visible character is a token alone.
const TOKEN = /[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu;

/** Splits text into lowercase tokens; whitespace only separates, so indentation and line breaks never matter. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    for (const match of lines[index]!.matchAll(TOKEN)) tokens.push({ text: match[0].toLowerCase(), line: index + 1 });
  }
  return tokens;
}

/** The first 8 bytes of SHA-256 of the tokens joined by spaces (tokens hold no whitespace, so joining is unambiguous). */
function hashTokens(tokens: readonly Token[], from: number, to: number): bigint {
  let joined = tokens[from]!.text;
  for (let index = from + 1; index < to; index++) joined += ' ' + tokens[index]!.text;
  return digest('sha256', joined, 'buffer').readBigInt64BE(0);
}

/**
 * The winnowed fingerprints of `text`, in order of position. Each window of `w` consecutive k-gram hashes keeps its
 * minimum (the rightmost on ties, so a run of equal hashes yields few fingerprints), recorded once per position.
 * A text shorter than one window keeps its single minimum; one shorter than a k-gram is hashed whole, so even a
 * one-word span has a fingerprint.
 */
export function fingerprints(text: string, params: FingerprintParams = INDEX_PROFILES.default): Fingerprint[] {
  const tokens = tokenize(text);
  if (tokens.length === 0) return [];
  const { k, w } = params;
  if (tokens.length < k) return [{ hash: hashTokens(tokens, 0, tokens.length), position: 0, line: tokens[0]!.line }];
  const grams: bigint[] = [];
  for (let start = 0; start + k <= tokens.length; start++) grams.push(hashTokens(tokens, start, start + k));
  const kept: Fingerprint[] = [];
  const keep = (position: number): void => {
    if (kept.at(-1)?.position !== position) kept.push({ hash: grams[position]!, position, line: tokens[position]!.line });
  };
  const windowSize = Math.min(w, grams.length);
  for (let start = 0; start + windowSize <= grams.length; start++) {
    let minimum = start;
    for (let index = start + 1; index < start + windowSize; index++) if (grams[index]! <= grams[minimum]!) minimum = index;
    keep(minimum);
  }
  return kept;
}

/** The distinct fingerprint hashes of `text`. */
export function fingerprintSet(text: string, params: FingerprintParams = INDEX_PROFILES.default): Set<bigint> {
  return new Set(fingerprints(text, params).map((print) => print.hash));
}

/**
 * Anchors of a span: its fingerprints grouped into windows of 24 lines that overlap by 12, so a long span is matched
 * window by window instead of being diluted by its own length. A span of at most one window is one anchor over its
 * lines (seed "Small spans": the caller widens it with `expandUntil` when it matches too much). The last window is
 * aligned to the span's end so it is full-size; windows without fingerprints (blank lines) are left out.
 */
export function anchorsForText(
  text: string,
  options: { params?: FingerprintParams; firstLine?: number } = {},
): SpanAnchor[] {
  const prints = fingerprints(text, options.params ?? INDEX_PROFILES.default);
  if (prints.length === 0) return [];
  const offset = (options.firstLine ?? 1) - 1;
  const lineCount = text.split('\n').length;
  const { windowLines, overlapLines } = TAPE_TUNING.anchor;
  const starts: number[] = [];
  if (lineCount <= windowLines) starts.push(1);
  else {
    for (let start = 1; start + windowLines - 1 < lineCount; start += windowLines - overlapLines) starts.push(start);
    starts.push(lineCount - windowLines + 1);
  }
  const anchors: SpanAnchor[] = [];
  for (const start of [...new Set(starts)]) {
    const end = Math.min(lineCount, start + windowLines - 1);
    const hashes = [...new Set(prints.filter((p) => p.line >= start && p.line <= end).map((p) => p.hash))];
    if (hashes.length === 0) continue;
    hashes.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    anchors.push({ start_line: start + offset, end_line: end + offset, hashes });
  }
  return anchors;
}

/** Jaccard similarity |a ∩ b| / |a ∪ b|; 0 when both are empty (nothing in common to speak of). */
export function jaccard(a: ReadonlySet<bigint>, b: ReadonlySet<bigint>): number {
  const shared = intersectionSize(a, b);
  const union = a.size + b.size - shared;
  return union === 0 ? 0 : shared / union;
}

/** Share of `part` found in `whole`: |part ∩ whole| / |part|; 0 for an empty part. */
export function containment(part: ReadonlySet<bigint>, whole: ReadonlySet<bigint>): number {
  return part.size === 0 ? 0 : intersectionSize(part, whole) / part.size;
}

/** |a ∩ b|, iterating the smaller set. */
export function intersectionSize(a: ReadonlySet<bigint>, b: ReadonlySet<bigint>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let count = 0;
  for (const item of small) if (large.has(item)) count++;
  return count;
}
