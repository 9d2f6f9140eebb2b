/**
 * What an embedder reads of a text. Sentence encoders spend their few hundred tokens on whatever comes first, and
 * pasted tool output is full of tokens that carry no meaning for them: line-number gutters (`  12→`, `12\t`), the
 * box-drawing of `tree`, markup tags, escaped newlines. Removing them lifted USE lite's recall@10 on the turns of
 * real sessions (fixtures/eval-conversations, dev) from 0.32 to 0.37 and changed nothing on prose lessons.
 * BM25 reads the original text.
 */
export function embeddingText(text: string): string {
  return text
    .replace(/^[ \t]*\d+(?:→|\t)/gm, ' ')
    .replace(/[│├└─┬┼┤┐┘┌]+/g, ' ')
    .replace(/<\/?[a-z][a-z_-]*>/gi, ' ')
    .replace(/\\n/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Bump when {@link embeddingText} changes: vectors record the version they were made with, so every vector made
 * from older preparation counts as stale and is re-embedded in the background (old vectors serve until replaced).
 */
export const EMBED_TEXT_VERSION = 2;
