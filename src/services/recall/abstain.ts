import { searchTerms } from './text.js';
import { TUNING } from './tuning.js';

/**
 * Words that carry conversation, not a topic: acknowledgements, go-aheads, politeness, filler. Stemmed like search
 * terms. A prompt made only of these ("yes", "ok do it", "thanks, go ahead", "sounds good") has nothing to search for.
 * Deliberately short: a word that can name a technical topic ("stop" a container, "retry" logic, "continue" a
 * loop) is not here.
 */
const CONVERSATIONAL_WORDS = (): string[] =>
  [
    'ok', 'okay', 'okey', 'k', 'kk', 'yes', 'yeah', 'yep', 'yup', 'ya', 'sure', 'no', 'nope', 'nah', 'right',
    'alright', 'thanks', 'thank', 'thx', 'ty', 'please', 'pls', 'plz', 'go', 'ahead', 'proceed', 'sounds', 'good',
    'great', 'nice', 'cool', 'perfect', 'awesome', 'fine', 'lgtm', 'agreed', 'agree', 'correct', 'exactly',
    'indeed', 'hmm', 'hm', 'um', 'uh', 'wait', 'hi', 'hello', 'hey', 'done', 'now', 'just', 'yes please',
    'let', 'lets', 'let\'s', 'that', 'this', 'it', 'do', 'does', 'did', 'one', 'thing', 'stuff', 'again', 'same',
    'also', 'too', 'well', 'really', 'much', 'lot', 'lots', 'sorry', 'oops', 'huh', 'what', 'why', 'how',
  ].flatMap((word) => searchTerms(word));
let conversational: ReadonlySet<string> | undefined;
/** Stemmed on first use, not at load: a hook that searches nothing (SessionStart) never runs the stemmer (~2 ms cold). */
const conversationalTerms = (): ReadonlySet<string> => (conversational ??= new Set(CONVERSATIONAL_WORDS()));

/** Markers agents put into prompts that say something happened, not what the user wants. */
const MARKERS = [
  /\[Request interrupted by user[^\]]*\]/gi,
  /<system-reminder>[\s\S]*?<\/system-reminder>/gi,
  /<(command-name|command-message|command-args|local-command-stdout|task-notification)>[\s\S]*?<\/\1>/gi,
];

/** Why a search returned nothing: a blank query, a query with no topic, or only weak matches (see {@link weakMatch}). */
export type AbstainReason = 'empty' | 'no-content' | 'weak-match';

/**
 * The abstain rule: strip agent markers, analyse the rest like BM25 does (words, stop words out, stems), drop
 * conversational words; if no term is left, there is no topic and search returns nothing rather than its nearest
 * neighbours. Runs before any index or model is touched, so "ok" costs microseconds.
 */
export function abstainReason(query: string): Exclude<AbstainReason, 'weak-match'> | null {
  if (query.trim() === '') return 'empty';
  return queryTerms(query).length === 0 ? 'no-content' : null;
}

/** The query's topic terms: markers stripped, analysed like BM25, conversational words dropped, each once. */
export function queryTerms(query: string): string[] {
  let text = query;
  for (const marker of MARKERS) text = text.replace(marker, ' ');
  return [...new Set(searchTerms(text).filter((term) => !conversationalTerms().has(term)))];
}

/** The share of the query's weight (each term its IDF) that a memory's terms hold. */
export function weightedCoverage(terms: readonly string[], idf: (term: string) => number, memory: ReadonlySet<string>): number {
  let total = 0;
  let held = 0;
  for (const term of terms) {
    const weight = idf(term);
    total += weight;
    if (memory.has(term)) held += weight;
  }
  return total > 0 ? held / total : 0;
}

/** A candidate the weak-match rule looks at: its analysed terms, and whether both lists put it near the top. */
export interface MatchCandidate {
  id: number;
  terms: ReadonlySet<string>;
  agreed: boolean;
  /** Cosine similarity to the query, when the vector list holds it. */
  similarity: number | null;
}

/**
 * A term the analysis never produces: its IDF in a store is the weight of a word no memory holds (wink's IDF for a
 * document frequency of 0, see bm25.ts `idf`).
 */
export const UNSEEN_TERM = '';

/** Why the rule spoke or stayed silent, for `engram search --explain`. */
export interface WeakMatchVerdict {
  /** Null when the best match is good enough; otherwise why the search stays silent. */
  weak: string | null;
  /** Each query term and its weight (IDF in this store). */
  terms: Array<{ term: string; weight: number }>;
  /** The query's words no memory holds, and their share of its weight. */
  unknown: { terms: string[]; share: number };
  /** The candidate that covered most of the query's known weight, its coverage and the terms it holds. */
  best: { id: number; coverage: number; matched: string[]; agreed: boolean } | null;
  rule: string;
}

/**
 * The weak-match rule, shared by `engram search` and the hooks. A top result both lists agree on that holds some of
 * the query's weight, or whose vector similarity alone reaches what the model is sure of, answers. Otherwise words no
 * memory of the store holds (they weigh the most: an unseen term's IDF) are the store saying it does not know the
 * topic (in a store of at least `smallStore.below` memories: in a smaller one most everyday words are unknown, and
 * round 3's rule applies): when they hold more than `maxUnknownShare` of the query's weight the search stays silent;
 * else it answers
 * when one of its top results covers enough of the weight of the words the store does know (each weighs its IDF,
 * so the rare, telling word counts more than a common one). Everything else is a nearest neighbour, not an answer.
 * Constants and how they were chosen: tuning.ts.
 */
export function weakMatch(
  terms: readonly string[],
  idf: (term: string) => number,
  candidates: readonly MatchCandidate[],
  /** The embedder kind's similarity that counts as an answer on its own (TUNING.abstain.similarity), if any. */
  semantic?: number,
): WeakMatchVerdict {
  const { agreedCoverage, maxUnknownShare, smallStore } = TUNING.abstain;
  const unseen = idf(UNSEEN_TERM);
  // wink gives a word no memory holds ln(2N + 2) in a store of N memories. Below smallStore.below memories most
  // everyday words are unseen, so no word counts as unknown and coverage is of the whole query, as in round 3.
  const large = unseen >= Math.log(2 * smallStore.below + 2) - 1e-9;
  const needed = large ? TUNING.abstain.coverage : smallStore.coverage;
  const weighted = terms.map((term) => {
    const weight = idf(term);
    return { term, weight: Math.round(weight * 1000) / 1000, unknown: large && weight >= unseen };
  });
  const total = weighted.reduce((sum, t) => sum + t.weight, 0);
  const unknownWeight = weighted.reduce((sum, t) => sum + (t.unknown ? t.weight : 0), 0);
  const unknownShare = total > 0 ? unknownWeight / total : 0;
  const known = total - unknownWeight;
  const lexical = unknownShare <= maxUnknownShare;
  const agreement = `answer when keyword and vector search agree on a top result covering ≥ ${agreedCoverage} of the query's weight${semantic !== undefined ? `, or its vector similarity is ≥ ${semantic}` : ''}`;
  const rule = large
    ? `${agreement}; else stay silent when words no memory holds are more than ${maxUnknownShare} of the query's weight, and answer when a top result covers ≥ ${needed} of the weight of the words the store holds`
    : `${agreement}; else (a store of fewer than ${smallStore.below} memories) answer when a top result covers ≥ ${needed} of the query's weight`;
  let best: WeakMatchVerdict['best'] = null;
  let speaks = false;
  for (const candidate of candidates) {
    const matched = weighted.filter((t) => candidate.terms.has(t.term));
    const held = matched.reduce((sum, t) => sum + t.weight, 0);
    const coverage = known > 0 ? held / known : 0;
    if (!best || coverage > best.coverage) best = { id: candidate.id, coverage: Math.round(coverage * 1000) / 1000, matched: matched.map((t) => t.term), agreed: candidate.agreed };
    if (lexical && (coverage >= needed || (candidate.agreed && coverage >= agreedCoverage))) speaks = true;
    // Both lists agreeing on a result that holds some of the whole query is evidence of its own, unknown words or not
    // (a query that spells an identifier the memory splits — "buildkit" against "BuildKit" — has one).
    if (candidate.agreed && total > 0 && held / total >= agreedCoverage) speaks = true;
    if (semantic !== undefined && candidate.similarity !== null && candidate.similarity >= semantic) speaks = true;
  }
  const unknownTerms = weighted.filter((t) => t.unknown).map((t) => t.term);
  const coverageText = best
    ? `the best match (#${best.id}) covers ${Math.round(best.coverage * 100)} % of the query's weight in words the store holds${best.agreed ? ' (both lists agree on it)' : ''}`
    : 'nothing matched';
  const similarityText = semantic !== undefined ? `; a vector similarity of ${semantic} would answer anyway` : '';
  const weak = speaks
    ? null
    : !best
      ? 'nothing matched'
      : !lexical
        ? `${Math.round(unknownShare * 100)} % of the query's weight is in words no memory holds (${unknownTerms.join(', ')}); the rule allows ${Number((maxUnknownShare * 100).toFixed(1))} %; ${coverageText}${similarityText}`
        : `${coverageText}; the rule needs ${Math.round(needed * 100)} % (${Math.round(agreedCoverage * 100)} % when both lists agree${semantic !== undefined ? `, or a vector similarity of ${semantic}` : ''})`;
  return {
    weak,
    terms: weighted.map(({ term, weight }) => ({ term, weight })),
    unknown: { terms: unknownTerms, share: Math.round(unknownShare * 1000) / 1000 },
    best,
    rule,
  };
}
