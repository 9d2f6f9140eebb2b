/**
 * The static-table embedder (src/core/embed/static-table.ts, wordpiece.ts) against the transformers.js pipeline it
 * replaces for static-use-256: the same token ids and bit-identical vectors, on the evaluation sets' texts and on
 * texts built to hit every step of the tokenizer (accents, CJK, emoji, control and format characters, the special
 * tokens written in text, words over 100 characters, inputs past 512 tokens, random Unicode).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { embeddingText } from '../../../src/core/index.js';
import { loadStaticTableEmbedder } from '../../../src/core/embed/static-table.js';
import { createWordPieceTokenizer } from '../../../src/core/embed/wordpiece.js';
import type { Embedder } from '../../../src/core/index.js';
import { hasModels, MODELS_DIR, ROOT } from '../../_helpers.js';

const MODEL = 'static-use-256';
const folder = join(MODELS_DIR, MODEL);
const spec = { kind: 'transformers' as const, model: MODEL, modelDir: MODELS_DIR, folder, quantized: true };

/** Every text of the evaluation sets (memories and queries), as stored and as the embedder reads them. */
function evaluationTexts(): string[] {
  const texts: string[] = [];
  for (const set of ['eval', 'eval-conversations', 'eval-lessons']) {
    const dir = join(ROOT, 'fixtures', set);
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.jsonl'))) {
      for (const line of readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean)) {
        const row = JSON.parse(line) as { text?: string; q?: string };
        const text = row.text ?? row.q;
        if (text) texts.push(text, embeddingText(text));
      }
    }
  }
  return texts;
}

/** Texts aimed at each step of the tokenizer. */
const CRAFTED = [
  '',
  ' ',
  '\t\n\r ',
  'Café crème, naïve façade, Ångström, Ünïcödé, İstanbul, ß, ǅ, ﬁnance, ＡＢＣ１２３',
  'Ελληνικά με τόνους: άέήίόύώ ΐΰ',
  'Tiếng Việt có dấu: Nguyễn, được, những',
  '中文测试：数据库迁移失败了。日本語のテキスト、カタカナ。한국어 문장입니다.',
  '𠀀𠀁 𪜀 CJK outside the BMP, and 丽 compatibility ideographs 乁',
  'emoji 👍🏽 👨‍👩‍👧 🇫🇷 and ⌘⌥⇧ symbols ∑∫√ ≤≥ → ← ★',
  'zero\u200bwidth soft\u00adhyphen bom\ufefftext rtl\u200fmark',
  'controls\u0000nul \u0007bell \u000bvtab \u000cff \u001bescape \u007fdel \u0085nel \u00a0nbsp \u2028ls \u3000ideographic',
  'lone surrogates \ud800 and \udfff here, replacement \ufffd char',
  '[CLS] hello [MASK] world [SEP] and [PAD] [UNK]',
  'x[SEP]y[cls][Mask] [CLS][CLS]',
  'عربي مع تشكيل: مُحَمَّد، עִבְרִית עם ניקוד, हिन्दी देवनागरी, ภาษาไทย',
  'punctuation soup: !!!???... --- ___ ((( ))) {{{ }}} <<< >>> @#$%^&*~`|\\/ «» „“ ‹› ¿¡ ·•…',
  'snake_case camelCase kebab-case PascalCase SCREAMING_CASE dotted.name path/to/file.ts C:\\Windows\\x.exe',
  `a very long word ${'supercalifragilistic'.repeat(6)} then more`,
  `${'x'.repeat(100)} ${'y'.repeat(101)} ${'é'.repeat(100)} ${'é'.repeat(101)}`,
  'numbers 3.14159 1,000,000 1e-9 0xdeadbeef v1.2.3-beta.4 2026-11-27T10:00:00Z',
  'URL https://example.com/a/b?c=d&e=f#g and email someone@example.org',
  Array.from({ length: 700 }, (_, i) => `word${i % 50}`).join(' '),
  Array.from({ length: 300 }, () => 'über straße').join(' '),
  'The quick brown fox jumps over the lazy dog. '.repeat(80),
];

/** Random Unicode from a seeded generator: mixed scripts, marks, spaces, punctuation and controls. */
function randomTexts(count: number): string[] {
  let seed = 7;
  const random = (): number => {
    seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
    return ((seed >>> 0) % 1_000_000) / 1_000_000;
  };
  const ranges: Array<[number, number]> = [
    [0x20, 0x7e], [0x20, 0x7e], [0x20, 0x7e], [0x00, 0x1f], [0xa0, 0x24f], [0x300, 0x36f], [0x370, 0x3ff], [0x400, 0x4ff],
    [0x590, 0x5ff], [0x600, 0x6ff], [0x900, 0x97f], [0xe00, 0xe7f], [0x1e00, 0x1eff], [0x2000, 0x206f], [0x2100, 0x22ff],
    [0x3000, 0x30ff], [0x3400, 0x4dbf], [0x4e00, 0x9fff], [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfe00, 0xfe6f], [0xff00, 0xffef],
    [0x1f300, 0x1f6ff], [0x20000, 0x2a6df],
  ];
  return Array.from({ length: count }, () => {
    const length = 1 + Math.floor(random() * 60);
    let text = '';
    for (let i = 0; i < length; i++) {
      const [low, high] = ranges[Math.floor(random() * ranges.length)] as [number, number];
      text += String.fromCodePoint(low + Math.floor(random() * (high - low + 1)));
      if (random() < 0.2) text += ' ';
    }
    return text;
  });
}

describe.skipIf(!hasModels(MODEL))('the static-table embedder (static-use-256)', () => {
  /** The parts of the transformers.js pipeline compared with. */
  type Extractor = ((texts: string[], options: { pooling: 'mean'; normalize: boolean }) => Promise<{ data: Float32Array; dims: number[] }>) & {
    tokenizer: (texts: string[], options: { padding: boolean; truncation: boolean }) => { input_ids: { data: BigInt64Array; dims: number[] } };
  };
  let extract: Extractor;
  let table: Embedder;
  const texts = [...CRAFTED, ...evaluationTexts(), ...randomTexts(1_500)];

  beforeAll(async () => {
    const { pipeline, env } = await import('@xenova/transformers');
    env.allowLocalModels = true;
    env.allowRemoteModels = false;
    env.useFSCache = false;
    env.localModelPath = `${MODELS_DIR}/`;
    extract = (await pipeline('feature-extraction', MODEL, { quantized: true })) as unknown as Extractor;
    const loaded = loadStaticTableEmbedder(spec);
    if (!loaded) throw new Error('static-use-256 was not recognised as a static table');
    table = loaded;
  }, 60_000);

  it('tokenizes exactly as transformers.js does', () => {
    const tokenizer = createWordPieceTokenizer(
      JSON.parse(readFileSync(join(folder, 'tokenizer.json'), 'utf8')),
      JSON.parse(readFileSync(join(folder, 'tokenizer_config.json'), 'utf8')),
    );
    if (!tokenizer) throw new Error('tokenizer not supported');
    const mismatches: Array<{ text: string; ours: number[]; theirs: number[] }> = [];
    for (const text of texts) {
      const encoded = extract.tokenizer([text], { padding: true, truncation: true });
      const theirs = Array.from(encoded.input_ids.data, Number);
      const ours = tokenizer.encode(text);
      if (JSON.stringify(ours) !== JSON.stringify(theirs)) mismatches.push({ text, ours, theirs });
    }
    expect(mismatches.slice(0, 3)).toEqual([]);
    expect(texts.length).toBeGreaterThan(3_000);
  });

  it('gives bit-identical vectors to the pipeline, single texts and padded batches', async () => {
    const bits = (vector: Float32Array): string => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('hex');
    const ours = await table.embed(texts);
    let differing = 0;
    for (let start = 0; start < texts.length; start += 16) {
      const batch = texts.slice(start, start + 16);
      const output = await extract(batch, { pooling: 'mean', normalize: true });
      const dim = output.dims.at(-1) as number;
      batch.forEach((text, i) => {
        if (bits(ours[start + i] as Float32Array) !== bits(output.data.slice(i * dim, (i + 1) * dim))) differing++;
      });
    }
    expect(differing).toBe(0);
    expect(table.dim).toBe(256);
    expect(table.model).toBe(`transformers:${MODEL}`);
  }, 120_000);

  it('is not used for a model that is not a static table (ctx-use-256 goes through transformers.js)', () => {
    expect(loadStaticTableEmbedder({ ...spec, model: 'ctx-use-256', folder: join(MODELS_DIR, 'ctx-use-256') })).toBeNull();
    expect(loadStaticTableEmbedder({ ...spec, quantized: false })).toBeNull(); // no model.onnx beside the quantized one
  });
});
