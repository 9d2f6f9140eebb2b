import { searchTerms } from './text.js';

/**
 * Words that carry conversation, not a topic: acknowledgements, go-aheads, politeness, filler. Stemmed like search
 * terms. A prompt made only of these ("yes", "ok do it", "thanks, go ahead", "sounds good") has nothing to search for.
 * Deliberately short: a word that can name a technical topic ("stop" a container, "retry" logic, "continue" a
 * loop) is not here.
 */
const CONVERSATIONAL = new Set(
  [
    'ok', 'okay', 'okey', 'k', 'kk', 'yes', 'yeah', 'yep', 'yup', 'ya', 'sure', 'no', 'nope', 'nah', 'right',
    'alright', 'thanks', 'thank', 'thx', 'ty', 'please', 'pls', 'plz', 'go', 'ahead', 'proceed', 'sounds', 'good',
    'great', 'nice', 'cool', 'perfect', 'awesome', 'fine', 'lgtm', 'agreed', 'agree', 'correct', 'exactly',
    'indeed', 'hmm', 'hm', 'um', 'uh', 'wait', 'hi', 'hello', 'hey', 'done', 'now', 'just', 'yes please',
    'let', 'lets', 'let\'s', 'that', 'this', 'it', 'do', 'does', 'did', 'one', 'thing', 'stuff', 'again', 'same',
    'also', 'too', 'well', 'really', 'much', 'lot', 'lots', 'sorry', 'oops', 'huh', 'what', 'why', 'how',
  ].flatMap((word) => searchTerms(word)),
);

/** Markers agents put into prompts that say something happened, not what the user wants. */
const MARKERS = [
  /\[Request interrupted by user[^\]]*\]/gi,
  /<system-reminder>[\s\S]*?<\/system-reminder>/gi,
  /<(command-name|command-message|command-args|local-command-stdout|task-notification)>[\s\S]*?<\/\1>/gi,
];

/** Why a query was not searched, or null when it has something to search for. */
export type AbstainReason = 'empty' | 'no-content';

/**
 * The abstain rule: strip agent markers, analyse the rest like BM25 does (words, stop words out, stems), drop
 * conversational words; if no term is left, there is no topic and search returns nothing rather than its nearest
 * neighbours. Runs before any index or model is touched, so "ok" costs microseconds.
 */
export function abstainReason(query: string): AbstainReason | null {
  if (query.trim() === '') return 'empty';
  let text = query;
  for (const marker of MARKERS) text = text.replace(marker, ' ');
  const content = searchTerms(text).filter((term) => !CONVERSATIONAL.has(term));
  return content.length === 0 ? 'no-content' : null;
}
