import { queryTerms } from './abstain.js';
import type { Bm25Index } from './bm25.js';
import { candidateFeatures, type CandidateSignals, type QuerySignals } from './features.js';
import { probability, type ModeModels } from './ranker.js';
import { searchTerms } from './text.js';

/** The query as BM25 reads it: its tokens (with repeats, as wink scores them), its topic terms with their IDF
 * weights, and the terms no engram holds. */
export interface QueryLexicon {
  tokens: string[];
  terms: Array<{ term: string; weight: number }>;
  unseen: string[];
  weight: number;
}

/** Analyses the query once per search against the index's IDF table. */
export function queryLexicon(index: Bm25Index, query: string): QueryLexicon {
  // A token no document holds has the largest IDF the store allows; '' is never a token.
  const unseenIdf = index.idf('');
  const terms = queryTerms(query).map((term) => ({ term, weight: index.idf(term) }));
  return {
    tokens: searchTerms(query),
    terms,
    unseen: terms.filter((t) => t.weight >= unseenIdf - 1e-9).map((t) => t.term),
    weight: terms.reduce((sum, t) => sum + t.weight, 0),
  };
}

/** How much of the query one engram holds, from the index (no text is read): its share of the query's weight, the
 * terms it holds, and its BM25 score for the query (the sum of its tokens' contributions). */
export function lexicalMatch(index: Bm25Index, lexicon: QueryLexicon, id: number): { coverage: number; matched: string[]; bm25: number } {
  const termScores = index.termScores(id, lexicon.terms.map((t) => t.term));
  let held = 0;
  const matched: string[] = [];
  lexicon.terms.forEach((t, i) => {
    if ((termScores[i] as number) > 0) {
      held += t.weight;
      matched.push(t.term);
    }
  });
  const bm25 = index.termScores(id, lexicon.tokens).reduce((sum, score) => sum + score, 0);
  return { coverage: lexicon.weight > 0 ? held / lexicon.weight : 0, matched, bm25 };
}

/** A candidate with what the ranker made of it. */
export interface RankedCandidate extends CandidateSignals {
  /** P(relevant) from the mode's candidate model (ranker.ts). */
  probability: number;
  /** Query terms it holds. */
  matched: string[];
  /** Its candidate features (features.ts), which the hit model reads again for a returned result. */
  features: number[];
}

/** The lists one search collected, by engram id. */
export interface CollectedLists {
  /** BM25's list after gates, best first, with scores. */
  bm25: ReadonlyArray<{ id: number; score: number }>;
  /** The vector list after gates and floor, nearest first. */
  vector: ReadonlyArray<{ id: number; similarity: number }>;
  /** Query similarity of candidates the vector list did not return (hybrid looks them up). */
  similarity: ReadonlyMap<number, number>;
  /** Similarity to BM25's best hit (hybrid only). */
  anchor: ReadonlyMap<number, number>;
}

/**
 * Every candidate's signals (CandidateSignals) and its probability of being relevant under `models.candidate`, in
 * the lists' order (BM25's first, then what only the vectors found). Ranking is the caller's choice: hybrid sorts by
 * probability, a single-list mode keeps its list's order.
 */
export function scoreCandidates(index: Bm25Index | null, lexicon: QueryLexicon | null, lists: CollectedLists, models: ModeModels): RankedCandidate[] {
  const bm25Rank = new Map(lists.bm25.map((hit, i) => [hit.id, { rank: i + 1, score: hit.score }]));
  const vectorRank = new Map(lists.vector.map((hit, i) => [hit.id, { rank: i + 1, similarity: hit.similarity }]));
  const ids = [...new Set([...lists.bm25.map((hit) => hit.id), ...lists.vector.map((hit) => hit.id)])];
  const signals = ids.map((id) => {
    const lexical = index && lexicon ? lexicalMatch(index, lexicon, id) : { coverage: 0, matched: [], bm25: 0 };
    const fromBm25 = bm25Rank.get(id);
    const fromVector = vectorRank.get(id);
    return {
      id,
      bm25: fromBm25?.score ?? (lexical.bm25 > 0 ? lexical.bm25 : null),
      bm25Rank: fromBm25?.rank ?? null,
      similarity: fromVector?.similarity ?? lists.similarity.get(id) ?? null,
      vectorRank: fromVector?.rank ?? null,
      anchor: lists.anchor.get(id) ?? null,
      coverage: lexical.coverage,
      matched: lexical.matched,
    };
  });
  const features = candidateFeatures(signals);
  return signals.map((signal, i) => ({ ...signal, features: features[i] as number[], probability: probability(models.candidate, features[i] as number[]) }));
}

/** The abstain classifier's input for a ranked answer (features.ts queryFeatures). */
export function querySignals(lexicon: QueryLexicon | null, lists: CollectedLists): QuerySignals {
  const [first, second] = lists.bm25;
  const firstVector = lists.vector.slice(0, 3).map((hit) => hit.id);
  return {
    terms: lexicon?.terms.length ?? 0,
    unseen: lexicon && lexicon.weight > 0 ? lexicon.terms.filter((t) => lexicon.unseen.includes(t.term)).reduce((sum, t) => sum + t.weight, 0) / lexicon.weight : 0,
    weight: lexicon?.weight ?? 0,
    bm25: [first?.score ?? null, second?.score ?? null],
    similarities: lists.vector.map((hit) => hit.similarity),
    agreement: first !== undefined && firstVector.includes(first.id),
  };
}
