/**
 * Language-agnostic text fingerprints: tokens → k-gram hashes → winnowing (Schleimer, Wilkerson, Aiken 2003), the
 * same scheme as the clickety-clacks/engram reference. Implemented here rather than taken from npm: the one maintained
 * package (@dodona/dolos-core) hashes into 25 bits (mod 33554393), which collides far too often for an index of
 * millions of fingerprints across tapes, and is tied to its own tree-sitter token model.
 *
 * Guarantee: two texts that share a run of at least `w + k − 1` tokens share at least one fingerprint. Fingerprints
 * depend only on nearby tokens, so moving a block, re-indenting it or adding lines above it keeps them.
 *
 * Speed: this is the index's hot loop (every byte of every tape passes through it), so it scans char codes instead of
 * running a regular expression, hashes each token once into two 32-bit lanes with `Math.imul`, mixes k token hashes
 * per k-gram, winnows over typed arrays and makes a BigInt only for a kept fingerprint. `tokenize` is the readable
 * definition of a token; a test checks the scanner against it.
 * @module
 */
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

// ---- Hashing. Each lane is 32-bit; together a fingerprint is hi·2³² + lo, a signed 64-bit SQLite INTEGER. ----
// Any change here changes every fingerprint: rename FINGERPRINT_HASH (tuning.ts, where the choice is explained) so
// existing index files are seen as stale and rebuilt.

// Token lanes: FNV-1a over UTF-16 code units, one lane with the FNV prime and one with a different odd multiplier so
// the two lanes collide independently; k-gram lanes: MurmurHash3's block mix over the k token hashes, then its
// finaliser (fmix32) so every input bit reaches every output bit before the minimum is taken.
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const LANE_B_OFFSET = 0x9e3779b9;
const LANE_B_PRIME = 0x2c1b3c6d;
const GRAM_SEED_HI = 0x1b873593;
const GRAM_SEED_LO = 0x5bd1e995;

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

function mixBlock(h: number, block: number): number {
  block = Math.imul(block, 0xcc9e2d51);
  block = (block << 15) | (block >>> 17);
  h ^= Math.imul(block, 0x1b873593);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** One token's two lanes (exported for the test that checks the scanner against `tokenize`). */
export function hashToken(token: string): [number, number] {
  let a = FNV_OFFSET;
  let b = LANE_B_OFFSET;
  for (let i = 0; i < token.length; i++) {
    const unit = token.charCodeAt(i);
    a = Math.imul(a ^ unit, FNV_PRIME);
    b = Math.imul(b ^ unit, LANE_B_PRIME);
  }
  return [fmix32(a ^ token.length), fmix32(b ^ token.length)];
}

// ---- Scanning: the same tokens as `tokenize`, hashed as they are read. ----

const SPACE = 0;
const WORD = 1;
const OTHER = 2;
const UNKNOWN = 3;
const WORD_CHAR = /^[\p{L}\p{N}_]$/u;
const SPACE_CHAR = /^\s$/u;
const classify = (char: string): number => (WORD_CHAR.test(char) ? WORD : SPACE_CHAR.test(char) ? SPACE : OTHER);
// Class of each UTF-16 code unit, filled on first sight (64 KB); astral characters are classified one by one.
const UNIT_CLASS = new Uint8Array(0x10000).fill(UNKNOWN);
const ASTRAL_CLASS = new Map<number, number>();

/** Reusable buffers (the scan is synchronous), grown on demand: per token its lanes and line, per k-gram its lanes. */
let capacity = 0;
let tokenA = new Int32Array(0);
let tokenB = new Int32Array(0);
let tokenLine = new Int32Array(0);
let gramHi = new Int32Array(0);
let gramLo = new Int32Array(0);
let keptAt = new Int32Array(0);

function ensureCapacity(tokens: number): void {
  if (tokens <= capacity) return;
  capacity = Math.max(tokens, capacity * 2, 1024);
  tokenA = new Int32Array(capacity);
  tokenB = new Int32Array(capacity);
  tokenLine = new Int32Array(capacity);
  gramHi = new Int32Array(capacity);
  gramLo = new Int32Array(capacity);
  keptAt = new Int32Array(capacity);
}

function pushToken(count: number, lanes: [number, number], line: number): number {
  if (count === capacity) {
    const [a, b, l] = [tokenA, tokenB, tokenLine];
    capacity = 0;
    ensureCapacity(count * 2);
    tokenA.set(a);
    tokenB.set(b);
    tokenLine.set(l);
  }
  tokenA[count] = lanes[0];
  tokenB[count] = lanes[1];
  tokenLine[count] = line;
  return count + 1;
}

/** Tokenises and hashes `text` into the token buffers; returns the token count. */
function scanTokens(text: string): number {
  ensureCapacity(Math.min(text.length, 1 << 16));
  const length = text.length;
  let count = 0;
  let line = 1;
  let i = 0;
  const lanes: [number, number] = [0, 0];
  while (i < length) {
    let unit = text.charCodeAt(i);
    let width = 1;
    let kind: number;
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      const point = text.codePointAt(i)!;
      width = 2;
      kind = ASTRAL_CLASS.get(point) ?? UNKNOWN;
      if (kind === UNKNOWN) ASTRAL_CLASS.set(point, (kind = classify(String.fromCodePoint(point))));
    } else {
      kind = UNIT_CLASS[unit]!;
      if (kind === UNKNOWN) UNIT_CLASS[unit] = kind = classify(String.fromCharCode(unit));
    }
    if (kind === SPACE) {
      if (unit === 10) line++;
      i++;
      continue;
    }
    const start = i;
    if (kind === OTHER) {
      i += width;
      if (unit < 0x80) {
        lanes[0] = fmix32(Math.imul(FNV_OFFSET ^ unit, FNV_PRIME) ^ 1);
        lanes[1] = fmix32(Math.imul(LANE_B_OFFSET ^ unit, LANE_B_PRIME) ^ 1);
      } else [lanes[0], lanes[1]] = hashToken(text.slice(start, i).toLowerCase());
      count = pushToken(count, lanes, line);
      continue;
    }
    // A word: hash ASCII as it goes (lowercasing A-Z); anything wider is hashed again from its lowercased text.
    let a = FNV_OFFSET;
    let b = LANE_B_OFFSET;
    let ascii = true;
    for (;;) {
      if (unit < 0x80) {
        if (unit >= 65 && unit <= 90) unit |= 0x20;
        a = Math.imul(a ^ unit, FNV_PRIME);
        b = Math.imul(b ^ unit, LANE_B_PRIME);
      } else ascii = false;
      i += width;
      if (i >= length) break;
      unit = text.charCodeAt(i);
      width = 1;
      if (unit < 0x80) {
        kind = UNIT_CLASS[unit]!;
        if (kind === UNKNOWN) UNIT_CLASS[unit] = kind = classify(String.fromCharCode(unit));
      } else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
        const point = text.codePointAt(i)!;
        width = 2;
        kind = ASTRAL_CLASS.get(point) ?? UNKNOWN;
        if (kind === UNKNOWN) ASTRAL_CLASS.set(point, (kind = classify(String.fromCodePoint(point))));
      } else {
        kind = UNIT_CLASS[unit]!;
        if (kind === UNKNOWN) UNIT_CLASS[unit] = kind = classify(String.fromCharCode(unit));
      }
      if (kind !== WORD) break;
    }
    if (ascii) {
      const size = i - start;
      lanes[0] = fmix32(a ^ size);
      lanes[1] = fmix32(b ^ size);
    } else [lanes[0], lanes[1]] = hashToken(text.slice(start, i).toLowerCase());
    count = pushToken(count, lanes, line);
  }
  return count;
}

/** The scanner's tokens as lanes and lines: `tokenize` hashed with `hashToken`, read in one pass (for tests). */
export function scannedTokens(text: string): Array<{ lanes: [number, number]; line: number }> {
  const count = scanTokens(text);
  return Array.from({ length: count }, (_, n) => ({ lanes: [tokenA[n]!, tokenB[n]!], line: tokenLine[n]! }));
}

/** Hashes the k-gram of `size` tokens starting at `from` into gramHi/gramLo[at]. */
function hashGram(from: number, size: number, at: number): void {
  const a = tokenA;
  const b = tokenB;
  let hi = GRAM_SEED_HI;
  let lo = GRAM_SEED_LO;
  for (let j = from; j < from + size; j++) {
    hi = mixBlock(hi, a[j]!);
    lo = mixBlock(lo, b[j]!);
  }
  gramHi[at] = fmix32(hi ^ size);
  gramLo[at] = fmix32(lo ^ size);
}

/**
 * Fingerprints `text` into the buffers: the kept k-gram positions in keptAt[0..n) and their lanes in gramHi/gramLo.
 * Returns n. Each window of `w` consecutive k-gram hashes keeps its minimum (the rightmost on ties, so a run of equal
 * hashes yields few fingerprints), recorded once per position. A text shorter than one window keeps its single
 * minimum; one shorter than a k-gram is hashed whole, so even a one-word span has a fingerprint. Order is signed
 * 64-bit: hi compared signed, then lo unsigned.
 */
function winnow(text: string, { k, w }: FingerprintParams): number {
  const tokens = scanTokens(text);
  if (tokens === 0) return 0;
  if (tokens < k) {
    hashGram(0, tokens, 0);
    keptAt[0] = 0;
    return 1;
  }
  const grams = tokens - k + 1;
  for (let start = 0; start < grams; start++) hashGram(start, k, start);
  const hi = gramHi;
  const lo = gramLo;
  const out = keptAt;
  const windowSize = Math.min(w, grams);
  let kept = 0;
  let last = -1;
  for (let start = 0; start + windowSize <= grams; start++) {
    let minimum = start;
    for (let index = start + 1; index < start + windowSize; index++) {
      if (hi[index]! < hi[minimum]! || (hi[index] === hi[minimum] && lo[index]! >>> 0 <= lo[minimum]! >>> 0)) minimum = index;
    }
    if (minimum !== last) out[kept++] = last = minimum;
  }
  return kept;
}

const int64 = new DataView(new ArrayBuffer(8));

/** The signed 64-bit value of gram `at`: one BigInt per kept fingerprint, none in the loops above. */
function gramValue(at: number): bigint {
  int64.setInt32(0, gramHi[at]!);
  int64.setInt32(4, gramLo[at]!);
  return int64.getBigInt64(0);
}

/** The winnowed fingerprints of `text`, in order of position (see `winnow` for what is kept). */
export function fingerprints(text: string, params: FingerprintParams = INDEX_PROFILES.default): Fingerprint[] {
  const count = winnow(text, params);
  const kept: Fingerprint[] = [];
  for (let n = 0; n < count; n++) {
    const position = keptAt[n]!;
    kept.push({ hash: gramValue(position), position, line: tokenLine[position]! });
  }
  return kept;
}

/** The distinct fingerprint hashes of `text`. */
export function fingerprintSet(text: string, params: FingerprintParams = INDEX_PROFILES.default): Set<bigint> {
  const count = winnow(text, params);
  const set = new Set<bigint>();
  for (let n = 0; n < count; n++) set.add(gramValue(keptAt[n]!));
  return set;
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
