import { cachedSearchTerms, searchTerms, type SearchHit } from '../recall/index.js';
import { GENERIC_TERMS, INJECT } from './tuning.js';

/** Why a hit was kept: how much of the query it covers, and its similarity. */
export interface Relevance {
  matched: number;
  coverage: number;
  similarity: number | null;
  /** `clear-winner`: a prompt's first hit that the keyword ranking singles out ({@link clearPromptWinner}). */
  reason: 'lexical' | 'semantic' | 'clear-winner' | null;
}

let generic: ReadonlySet<string> | undefined;
/** The stems of the tool and file-type words, made on first use, not at load (the stemmer's first run is ~1 ms cold). */
const genericStems = (): ReadonlySet<string> => (generic ??= new Set([...GENERIC_TERMS].flatMap((word) => searchTerms(word))));

/**
 * A tool query without tool and file-type words (`Edit src/pay/refund.ts` → `pay refund`): they match most engrams
 * that mention code, so BM25 would score thousands of documents for words the relevance rule ignores anyway.
 */
export function withoutGenericWords(query: string): string {
  return (query.match(/[\p{L}\p{N}_]+/gu) ?? [])
    .filter((word) => !searchTerms(word).every((term) => genericStems().has(term)))
    .join(' ');
}

/** The query's content terms, the way BM25 analyses them, without tool and file-type words. */
export function contentTerms(query: string): Set<string> {
  return new Set(searchTerms(query).filter((term) => !genericStems().has(term)));
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
 * Semantic: the vector similarity is high for this embedder kind, and in a hybrid search (`hybrid`) BM25 ranks the
 * hit in its top `semanticKeywordDepth` too.
 */
export function relevance(hit: SearchHit, terms: ReadonlySet<string>, embedderKind: string | null, hybrid = false): Relevance {
  const engram = hit.engram;
  const engramTerms = termsOf(`${engram.title ?? ''} ${engram.text} ${engram.category} ${engram.tags.join(' ')}`);
  let matched = 0;
  for (const term of terms) if (engramTerms.has(term)) matched++;
  const coverage = terms.size === 0 ? 0 : matched / terms.size;
  const { minMatched, minCoverage, strongMatched, shortQueryTerms } = INJECT.lexical;
  const lexical =
    (matched >= minMatched && coverage >= minCoverage) || matched >= strongMatched || (terms.size <= shortQueryTerms && matched >= 1);
  const floor = embedderKind ? INJECT.similarity[embedderKind] : undefined;
  // In a hybrid search the keyword list must not contradict the vectors: the nearest vector counts only when BM25 also
  // ranks it near the top (a distilled model's 0.5 is reached by a topic neighbour the keywords put far down).
  const keywordsAgree = !hybrid || (hit.ranks.bm25 !== null && hit.ranks.bm25 <= INJECT.semanticKeywordDepth);
  const semantic = floor !== undefined && hit.ranks.vector === 1 && hit.signals.vector !== null && hit.signals.vector >= floor && keywordsAgree;
  return { matched, coverage, similarity: hit.signals.vector, reason: lexical ? 'lexical' : semantic ? 'semantic' : null };
}

/** The highest BM25 score among the results (0 when the keywords found none of them). */
function bestKeywordScore(hits: readonly SearchHit[]): number {
  let best = 0;
  for (const hit of hits) best = Math.max(best, hit.signals.bm25 ?? 0);
  return best;
}

/** A hit chosen for injection. */
export interface Chosen {
  hit: SearchHit;
  relevance: Relevance;
}

/**
 * Does the keyword ranking have a clear winner? Its first hit must score `toolMargin` × its runner-up's BM25 score
 * (more when the chosen hit matched a single query term), unless the chosen hit holds `strongMatched` terms. A tool
 * call's query is a tool name and a path or two: when two memories score alike on it, the words matched are shared
 * ones (`package`, `server`, `config`) and the first is a coin toss (services/inject/tuning.ts has the numbers).
 */
export function clearKeywordWinner(hits: readonly SearchHit[], first: Relevance): boolean {
  const [top, runnerUp] = hits;
  if (!top || !runnerUp || first.matched >= INJECT.lexical.strongMatched) return true;
  const needed = first.matched >= 2 ? INJECT.toolMargin.terms : INJECT.toolMargin.oneTerm;
  const best = top.signals.bm25 ?? 0;
  const next = runnerUp.signals.bm25 ?? 0;
  return next <= 0 || best >= needed * next;
}

/**
 * A prompt's result that the keyword ranking singles out, when the relevance rule withheld everything: BM25's first
 * hit, wherever the fusion placed it (a hit the vectors lifted above it does not make the keywords less clear; round
 * 7), not shown yet, scoring at least `promptWinner.bm25Gap` × the BM25 score of every other result, and holding
 * `promptWinner.minMatched` of the prompt's content terms covering `promptWinner.minCoverage` of them (the relevance
 * rule asks 0.5). A prompt is a sentence, so half its content words rarely sit in the lesson that answers it ("CI
 * takes 40 minutes now" against "Keep CI under 15 minutes"); a hit that stands that far above every other memory on
 * the words it does hold is the answer far more often than not (services/inject/tuning.ts has the numbers).
 */
export function clearPromptWinner(hits: readonly SearchHit[], terms: ReadonlySet<string>, embedderKind: string | null, alreadyShown: ReadonlySet<number> = new Set()): Chosen | null {
  const first = hits.find((hit) => hit.ranks.bm25 === 1);
  if (!first || alreadyShown.has(first.id)) return null;
  const { bm25Gap, minMatched, minCoverage } = INJECT.promptWinner;
  const own = first.signals.bm25 ?? 0;
  let next = 0;
  for (const hit of hits) if (hit !== first) next = Math.max(next, hit.signals.bm25 ?? 0);
  if (own <= 0 || own < bm25Gap * next) return null;
  const found = relevance(first, terms, embedderKind);
  if (found.matched < minMatched || found.coverage < minCoverage) return null;
  return { hit: first, relevance: { ...found, reason: 'clear-winner' } };
}

/**
 * A tool event's keyword ranking has spoken (the margin held); which memory goes first? A result close behind the
 * chosen first one (`fullerMatch.window` of its score, within the first `fullerMatch.depth` results) that holds more
 * of the call's content terms takes its place (the first is dropped). BM25 normalises by length, so a short memory holding two of a
 * call's words can outscore a longer one holding five; the relevance rule counts matched terms, and so does this
 * (services/inject/tuning.ts has the numbers).
 */
function fullerFirst(hits: readonly SearchHit[], chosen: Chosen[], terms: ReadonlySet<string>, options: { max: number; alreadyShown: ReadonlySet<number>; embedderKind: string | null }): Chosen[] {
  const first = chosen[0] as Chosen;
  const { window, depth } = INJECT.fullerMatch;
  for (const hit of hits.slice(0, depth)) {
    if (hit === first.hit || options.alreadyShown.has(hit.id) || hit.score < window * first.hit.score) continue;
    const found = relevance(hit, terms, options.embedderKind);
    if (found.reason === 'lexical' && found.matched > first.relevance.matched) {
      // It replaces the first rather than joining it: the first was the length artefact.
      return [{ hit, relevance: found }, ...chosen.filter((c) => c !== first && c.hit.id !== hit.id)].slice(0, options.max);
    }
  }
  return chosen;
}

/** The relevant hits not yet shown in this context, best first, at most `max`. */
export function chooseHits(
  hits: readonly SearchHit[],
  query: string,
  options: {
    max: number;
    alreadyShown: ReadonlySet<number>;
    embedderKind: string | null;
    /** A tool event searched with BM25 alone: inject only when its ranking has a clear winner ({@link clearKeywordWinner}). */
    keywordMargin?: boolean;
    /** A prompt: when the relevance rule keeps nothing, a first hit the keyword ranking singles out is injected ({@link clearPromptWinner}). */
    promptWinner?: boolean;
    /** The results fuse BM25 and vectors (a hybrid search): a semantic match needs BM25's agreement ({@link relevance}). */
    hybrid?: boolean;
  },
): Chosen[] {
  const terms = contentTerms(query);
  const chosen: Chosen[] = [];
  // In a hybrid search a hit the keywords score far below their best result is not a candidate (round 8): the
  // relevance rule counts the words a memory holds, not how well they stand for the query.
  const supported = options.hybrid ? INJECT.keywordSupport * bestKeywordScore(hits) : 0;
  for (const hit of hits) {
    if (chosen.length >= options.max) break;
    if (options.alreadyShown.has(hit.id)) continue;
    if (supported > 0 && (hit.signals.bm25 ?? 0) < supported) continue;
    // After the first, only what scores close to it: the second and third hits are right far less often.
    const first = chosen[0];
    if (first && hit.score < INJECT.relativeScore * first.hit.score) break;
    const found = relevance(hit, terms, options.embedderKind, options.hybrid);
    if (found.reason) chosen.push({ hit, relevance: found });
  }
  const first = chosen[0];
  if (options.keywordMargin && first && !clearKeywordWinner(hits, first.relevance)) return [];
  if (options.keywordMargin && first) return fullerFirst(hits, chosen, terms, options);
  if (options.promptWinner && chosen.length === 0) {
    const winner = clearPromptWinner(hits, terms, options.embedderKind, options.alreadyShown);
    if (winner) chosen.push(winner);
  }
  return chosen;
}
