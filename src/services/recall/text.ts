// The two wink-nlp-utils functions used, imported on their own: the package's index also loads wink-nlp and a 3.6 MB
// language model that the CLI bundle would otherwise carry.
import removeStopWords from 'wink-nlp-utils/src/tokens-remove-words.js';
import stem from 'wink-nlp-utils/src/string-stem.js';

/**
 * Bump when tokenisation changes: persisted BM25 snapshots built with another version are rebuilt.
 */
export const TEXT_PREP_VERSION = 1;

/** Identifiers are split the way people search for them: `parseHTTPResponse` → parse http response, `max_retries` → max retries. */
function splitIdentifiers(text: string): string {
  return text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2');
}

/** Lowercase word tokens (letters and digits), identifiers split, single characters dropped. */
export function words(text: string): string[] {
  return (splitIdentifiers(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => word.length > 1);
}

/**
 * The BM25 analysis chain, also used by the abstain rule so both agree on what a "word" is: words → stop words
 * removed (wink-nlp-utils' 153 English stop words: articles, pronouns, auxiliaries; negations such as "not" are
 * kept, which matters for lessons like "do not run migrations on Fridays") → Porter stems.
 */
export function searchTerms(text: string): string[] {
  return removeStopWords(words(text)).map(stemOf);
}

// Stems of the words analysed so far (stemming is a pure function of the word): a warm server analyses each hook's
// query three or four times (the abstain rule, generic words, the relevance rule) — Porter's stemmer was 0.1 ms of
// a PreToolUse. Dropped whole when full.
const MAX_KEPT_STEMS = 50_000;
let keptStems = new Map<string, string>();

function stemOf(word: string): string {
  let stemmed = keptStems.get(word);
  if (stemmed === undefined) {
    stemmed = stem(word);
    if (keptStems.size >= MAX_KEPT_STEMS) keptStems = new Map();
    keptStems.set(word, stemmed);
  }
  return stemmed;
}

/**
 * {@link searchTerms} with the stems memoised (same output: stemming is a pure function of the word). Index builds
 * stem millions of words drawn from a vocabulary of thousands; the cache lives as long as the returned function.
 */
export function cachedSearchTerms(): (text: string) => string[] {
  const stems = new Map<string, string>();
  return (text) =>
    removeStopWords(words(text)).map((word) => {
      let stemmed = stems.get(word);
      if (stemmed === undefined) {
        stemmed = stem(word);
        stems.set(word, stemmed);
      }
      return stemmed;
    });
}
