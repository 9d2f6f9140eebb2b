/**
 * A BERT WordPiece tokenizer that gives exactly the token ids transformers.js 2.17's `BertTokenizer` gives for the
 * same tokenizer.json (tested on thousands of texts: ASCII, accents, CJK, emoji, control characters, the special
 * tokens written in text, inputs past 512 tokens), without its per-token allocations: transformers.js's tokenizer alone
 * ran ~1,560 texts/s, below the import target (docs/PERFORMANCE.md). Every step is the library's, in its order and
 * with its quirks (a CJK check per UTF-16 unit, its control-character regex, accents stripped after lowercasing):
 *
 * 1. the text is split on the added tokens (`[CLS]`, `[MASK]` … written in it are those tokens);
 * 2. BertNormalizer: control characters dropped, whitespace to spaces, spaces around CJK ideographs, lowercase, NFD
 *    with combining marks U+0300–U+036F removed;
 * 3. BertPreTokenizer: runs of non-space, non-punctuation characters, and single punctuation characters;
 * 4. WordPiece: greedy longest match with `##` continuations, `[UNK]` for a word with no match or over 100 characters;
 * 5. `[CLS]` … `[SEP]` around it, truncated to the model's 512 tokens (the library truncates after adding them).
 *
 * Printable-ASCII text, most of what Engram embeds, takes a shortcut through steps 2–3 that gives the same result; a
 * word's pieces are cached.
 * @module
 */

/** The parts of tokenizer.json (and tokenizer_config.json) this tokenizer reads. */
interface TokenizerJson {
  added_tokens?: Array<{ id: number; content: string; lstrip?: boolean; rstrip?: boolean }>;
  normalizer?: { type?: string; clean_text?: boolean; handle_chinese_chars?: boolean; strip_accents?: boolean | null; lowercase?: boolean } | null;
  pre_tokenizer?: { type?: string } | null;
  post_processor?: {
    type?: string;
    single?: Array<{ SpecialToken?: { id: string }; Sequence?: { id: string } }>;
  } | null;
  model?: { type?: string; vocab?: Record<string, number>; unk_token?: string; continuing_subword_prefix?: string; max_input_chars_per_word?: number };
}

/** A tokenizer: text → input ids, `[CLS]` and `[SEP]` included. */
export interface WordPieceTokenizer {
  encode(text: string): number[];
}

// transformers.js's PUNCTUATION_REGEX: \p{P} and the ASCII symbol ranges.
const PUNCTUATION = '\\p{P}\\u0021-\\u002F\\u003A-\\u0040\\u005B-\\u0060\\u007B-\\u007E';
const PRE_TOKENIZE = new RegExp(`[^\\s${PUNCTUATION}]+|[${PUNCTUATION}]`, 'gu');
// transformers.js's control test, precedence quirk included: (^Cc) | Cf | Co | (Cs$).
const CONTROL = /^\p{Cc}|\p{Cf}|\p{Co}|\p{Cs}$/u;
const WHITESPACE = /^\s$/;
/** Text every step of which the shortcut handles: printable ASCII, tab, newline, carriage return. */
const PLAIN = /^[\x20-\x7e\t\n\r]*$/;
const PLAIN_WORDS = /[a-z0-9]+|[!-/:-@[-`{-~]/g;
/** Words whose pieces are kept; past this the cache starts over (a bulk import's vocabulary is far smaller). */
const CACHE_WORDS = 200_000;

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function isChineseChar(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

/** BertNormalizer with clean_text, handle_chinese_chars and lowercase on, accents stripped (transformers.js's order). */
function normalize(text: string): string {
  if (PLAIN.test(text)) return text.replace(/[\t\n\r]/g, ' ').toLowerCase();
  const cleaned: string[] = [];
  for (const char of text) {
    const cp = char.charCodeAt(0);
    const control = char !== '\t' && char !== '\n' && char !== '\r' && CONTROL.test(char);
    if (cp === 0 || cp === 0xfffd || control) continue;
    cleaned.push(WHITESPACE.test(char) ? ' ' : char);
  }
  const joined = cleaned.join('');
  // Per UTF-16 unit, as the library does (so ideographs outside the BMP are left alone).
  const spaced: string[] = [];
  for (let i = 0; i < joined.length; i++) {
    const char = joined[i] as string;
    if (isChineseChar(char.charCodeAt(0))) spaced.push(' ', char, ' ');
    else spaced.push(char);
  }
  return spaced.join('').toLowerCase().normalize('NFD').replace(/[\u0300-\u036f]/g, '');
}

/**
 * Builds the tokenizer from a model folder's tokenizer.json and tokenizer_config.json, or returns null when they
 * describe anything but this BERT pipeline (the caller then uses transformers.js itself).
 */
export function createWordPieceTokenizer(tokenizer: TokenizerJson, config: { model_max_length?: number; do_lowercase_and_remove_accent?: boolean; remove_space?: boolean }): WordPieceTokenizer | null {
  const { normalizer, pre_tokenizer: preTokenizer, post_processor: post, model } = tokenizer;
  const supported =
    model?.type === 'WordPiece' &&
    model.vocab !== undefined &&
    normalizer?.type === 'BertNormalizer' &&
    normalizer.clean_text === true &&
    normalizer.handle_chinese_chars === true &&
    normalizer.lowercase === true &&
    normalizer.strip_accents !== false &&
    preTokenizer?.type === 'BertPreTokenizer' &&
    post?.type === 'TemplateProcessing' &&
    JSON.stringify(post.single?.map((item) => item.SpecialToken?.id ?? `seq:${item.Sequence?.id}`)) === JSON.stringify(['[CLS]', 'seq:A', '[SEP]']) &&
    typeof config.model_max_length === 'number' &&
    !config.do_lowercase_and_remove_accent &&
    config.remove_space !== true &&
    (tokenizer.added_tokens ?? []).every((token) => !token.lstrip && !token.rstrip);
  if (!supported || !model?.vocab) return null;
  const vocab = new Map(Object.entries(model.vocab));
  const added = tokenizer.added_tokens ?? [];
  for (const token of added) vocab.set(token.content, token.id);
  const addedContents = new Set(added.map((token) => token.content));
  const addedSplit = added.length > 0 ? new RegExp(added.map((token) => `(${escapeRegExp(token.content)})`).join('|')) : null;
  const unk = vocab.get(model.unk_token ?? '[UNK]');
  const cls = vocab.get('[CLS]');
  const sep = vocab.get('[SEP]');
  if (unk === undefined || cls === undefined || sep === undefined) return null;
  const prefix = model.continuing_subword_prefix ?? '##';
  const maxChars = model.max_input_chars_per_word ?? 100;
  const maxLength = config.model_max_length as number;
  const cache = new Map<string, readonly number[]>();

  /** WordPiece of one word (its characters are code points, as `[...word]` makes them). */
  const pieces = (word: string): readonly number[] => {
    const hit = cache.get(word);
    if (hit) return hit;
    const chars = [...word];
    let ids: number[];
    if (chars.length > maxChars) {
      ids = [unk];
    } else {
      ids = [];
      let start = 0;
      while (start < chars.length) {
        let end = chars.length;
        let found: number | undefined;
        while (start < end) {
          const piece = chars.slice(start, end).join('');
          found = vocab.get(start > 0 ? prefix + piece : piece);
          if (found !== undefined) break;
          end--;
        }
        if (found === undefined) {
          ids = [unk];
          break;
        }
        ids.push(found);
        start = end;
      }
    }
    if (cache.size >= CACHE_WORDS) cache.clear();
    cache.set(word, ids);
    return ids;
  };

  const encodeSection = (section: string, ids: number[]): void => {
    const text = normalize(section);
    if (text.length === 0) return;
    const words = PLAIN.test(text) ? text.trim().match(PLAIN_WORDS) : text.trim().match(PRE_TOKENIZE);
    for (const word of words ?? []) for (const id of pieces(word)) ids.push(id);
  };

  return {
    encode(text) {
      const ids = [cls];
      const sections = addedSplit ? text.split(addedSplit).filter((section) => section) : [text];
      for (const section of sections) {
        if (addedContents.has(section)) ids.push(vocab.get(section) as number);
        else encodeSection(section, ids);
      }
      ids.push(sep);
      if (ids.length > maxLength) ids.length = maxLength;
      return ids;
    },
  };
}
