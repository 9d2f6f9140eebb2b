import { cachedSearchTerms, searchTerms, type SearchHit } from '../recall/index.js';
import { GENERIC_TERMS, INJECT } from './tuning.js';

/** Why a hit was kept: how much of the query it covers, and its similarity. */
export interface Relevance {
  matched: number;
  coverage: number;
  similarity: number | null;
  reason: 'lexical' | 'semantic' | null;
}

const genericStems = new Set([...GENERIC_TERMS].flatMap((word) => searchTerms(word)));

/**
 * A tool query without tool and file-type words (`Edit src/pay/refund.ts` → `pay refund`): they match most engrams
 * that mention code, so BM25 would score thousands of documents for words the relevance rule ignores anyway.
 */
export function withoutGenericWords(query: string): string {
  return (query.match(/[\p{L}\p{N}_]+/gu) ?? [])
    .filter((word) => !searchTerms(word).every((term) => genericStems.has(term)))
    .join(' ');
}

/** The query's content terms, the way BM25 analyses them, without tool and file-type words. */
export function contentTerms(query: string): Set<string> {
  return new Set(searchTerms(query).filter((term) => !genericStems.has(term)));
}

// The terms of an engram's searchable text, kept by the text itself (an edited engram is a new key): a warm server
// checks the same candidates hook after hook, and analysing each one's text was a seventh of a PreToolUse's
// handler (0.27 ms at 10k engrams). Stems are memoised for the texts not kept; both are dropped together when full.
const MAX_KEPT_TEXTS = 4_096;
let keptTerms = new Map<string, ReadonlySet<string>>();
let stemmedTerms = cachedSearchTerms();

function termsOf(text: string): ReadonlySet<string> {
  let terms = keptTerms.get(text);
  if (terms === undefined) {
    if (keptTerms.size >= MAX_KEPT_TEXTS) {
      keptTerms = new Map();
      stemmedTerms = cachedSearchTerms();
    }
    terms = new Set(stemmedTerms(text));
    keptTerms.set(text, terms);
  }
  return terms;
}

/**
 * Is a search hit good enough to put in front of the agent? Search always returns its nearest neighbours; a hook
 * must say nothing rather than something weak. Lexical: enough of the query's content terms occur in the engram.
 * Semantic: the vector similarity is high for this embedder kind.
 */
export function relevance(hit: SearchHit, terms: ReadonlySet<string>, embedderKind: string | null): Relevance {
  const engram = hit.engram;
  const engramTerms = termsOf(`${engram.title ?? ''} ${engram.text} ${engram.category} ${engram.tags.join(' ')}`);
  let matched = 0;
  for (const term of terms) if (engramTerms.has(term)) matched++;
  const coverage = terms.size === 0 ? 0 : matched / terms.size;
  const { minMatched, minCoverage, strongMatched, shortQueryTerms } = INJECT.lexical;
  const lexical =
    (matched >= minMatched && coverage >= minCoverage) || matched >= strongMatched || (terms.size <= shortQueryTerms && matched >= 1);
  const floor = embedderKind ? INJECT.similarity[embedderKind] : undefined;
  const semantic = floor !== undefined && hit.ranks.vector === 1 && hit.signals.vector !== null && hit.signals.vector >= floor;
  return { matched, coverage, similarity: hit.signals.vector, reason: lexical ? 'lexical' : semantic ? 'semantic' : null };
}

/** A hit chosen for injection. */
export interface Chosen {
  hit: SearchHit;
  relevance: Relevance;
}

/** The relevant hits not yet shown in this context, best first, at most `max`. */
export function chooseHits(
  hits: readonly SearchHit[],
  query: string,
  options: { max: number; alreadyShown: ReadonlySet<number>; embedderKind: string | null },
): Chosen[] {
  const terms = contentTerms(query);
  const chosen: Chosen[] = [];
  for (const hit of hits) {
    if (chosen.length >= options.max) break;
    if (options.alreadyShown.has(hit.id)) continue;
    // After the first, only what scores close to it: the second and third hits are right far less often.
    const first = chosen[0];
    if (first && hit.score < INJECT.relativeScore * first.hit.score) break;
    const found = relevance(hit, terms, options.embedderKind);
    if (found.reason) chosen.push({ hit, relevance: found });
  }
  return chosen;
}
