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
  return [...new Set(searchTerms(text).filter((term) => !CONVERSATIONAL.has(term)))];
}

/** Which fitted models a search's abstain decision uses: the mode's, or BM25's when hybrid had no vectors. */
export type AbstainModel = 'hybrid' | 'bm25' | 'vector';

/** Why the classifier spoke or stayed silent, for `engram search --explain`. */
export interface WeakMatchVerdict {
  /** Null when the search answers; otherwise why it stays silent. */
  weak: string | null;
  /** Each query term and its weight (IDF in this store). */
  terms: Array<{ term: string; weight: number }>;
  /** The result among the first three that covered most of the query, its coverage and the terms it holds. */
  best: { id: number; coverage: number; matched: string[] } | null;
  /** The fitted model that decided (ranker-weights.json), its probability that the first three hold an answer,
   * and the probability it needs to answer. */
  model: AbstainModel;
  probability: number;
  threshold: number;
  /** Each query feature (features.ts QUERY_FEATURES), its value and weight: value × weight is its push. */
  features: Array<{ name: string; value: number; weight: number }>;
  rule: string;
}

/** A result the verdict describes: its id, coverage, and which query terms it holds. */
export interface JudgedResult {
  id: number;
  coverage: number;
  matched: readonly string[];
}

const pct = (share: number): string => `${Math.round(share * 100)} %`;

/**
 * The abstain classifier, shared by `engram search` and every hook: a logistic model over the query features
 * (features.ts) gives the probability that the first three results hold an answer; below the model's threshold the
 * results are nearest neighbours, not answers. Weights and thresholds were fitted on the dev splits
 * (bench/train-ranker.mjs; docs/SEARCH.md has the trade-off between silence and kept recall).
 */
export function abstainVerdict(input: {
  model: AbstainModel;
  classifier: { intercept: number; weights: readonly number[]; threshold: number };
  featureNames: readonly string[];
  features: readonly number[];
  terms: ReadonlyArray<{ term: string; weight: number }>;
  /** The first three results. */
  results: readonly JudgedResult[];
  /** Query terms no engram holds. */
  unseen: readonly string[];
}): WeakMatchVerdict {
  const { classifier } = input;
  let z = classifier.intercept;
  input.features.forEach((value, i) => (z += (classifier.weights[i] ?? 0) * value));
  const probability = 1 / (1 + Math.exp(-z));
  const rounded = (value: number): number => Math.round(value * 1000) / 1000;
  let best: WeakMatchVerdict['best'] = null;
  for (const result of input.results) {
    if (!best || result.coverage > best.coverage) best = { id: result.id, coverage: rounded(result.coverage), matched: [...result.matched] };
  }
  const total = input.terms.reduce((sum, t) => sum + t.weight, 0);
  const unseenWeight = input.terms.filter((t) => input.unseen.includes(t.term)).reduce((sum, t) => sum + t.weight, 0);
  const reasons = [
    best ? `the best match (#${best.id}) covers ${pct(best.coverage)} of the query's weight` : 'nothing matched',
    ...(unseenWeight > 0 && total > 0 ? [`${pct(unseenWeight / total)} of it is in words no memory holds (${input.unseen.join(', ')})`] : []),
  ];
  const needs = rounded(classifier.threshold);
  const weak =
    input.results.length === 0
      ? 'nothing matched'
      : probability < classifier.threshold
        ? `confidence ${rounded(probability)} that the first results answer the query, below the ${needs} it needs: ${reasons.join('; ')}`
        : null;
  return {
    weak,
    terms: input.terms.map((t) => ({ term: t.term, weight: rounded(t.weight) })),
    best,
    model: input.model,
    probability: rounded(probability),
    threshold: needs,
    features: input.featureNames.map((name, i) => ({ name, value: rounded(input.features[i] ?? 0), weight: rounded(classifier.weights[i] ?? 0) })),
    rule: `answer when the ${input.model} abstain model's probability that the first three results hold an answer is ≥ ${needs}`,
  };
}
