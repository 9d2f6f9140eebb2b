/** The lists fusion combines. `anchor`: candidates ordered by vector similarity to the best keyword hit. */
export type Signal = 'bm25' | 'vector' | 'anchor';

/** A ranked list from one signal: ids, best first. */
export interface RankedList {
  signal: Signal;
  ids: readonly number[];
  weight: number;
}

/** One fused candidate: its score and its 1-based rank in each list (null when absent). */
export interface Fused {
  id: number;
  /** Σ weight / (k + rank), divided by the best possible (rank 1 in every list): 1.0 means "first everywhere". */
  score: number;
  ranks: Record<Signal, number | null>;
}

/**
 * Weighted reciprocal rank fusion over the top `pool` ids of each list. Scores are normalised by the score of an
 * id ranked first in every list, so they are comparable across queries and modes (a BM25-only search's top hit
 * scores 1.0). Ties keep BM25 order, then vector order, then id, so results are deterministic.
 */
export function reciprocalRankFusion(lists: readonly RankedList[], k: number, pool: number): Fused[] {
  const fused = new Map<number, Fused>();
  let best = 0;
  for (const list of lists) {
    if (list.weight <= 0 || list.ids.length === 0) continue;
    best += list.weight / (k + 1);
    list.ids.slice(0, pool).forEach((id, index) => {
      const rank = index + 1;
      const entry = fused.get(id) ?? { id, score: 0, ranks: { bm25: null, vector: null, anchor: null } };
      entry.score += list.weight / (k + rank);
      entry.ranks[list.signal] = rank;
      fused.set(id, entry);
    });
  }
  const order = (rank: number | null): number => rank ?? Number.POSITIVE_INFINITY;
  return [...fused.values()]
    .map((entry) => ({ ...entry, score: best > 0 ? entry.score / best : 0 }))
    .sort(
      (a, b) =>
        b.score - a.score ||
        order(a.ranks.bm25) - order(b.ranks.bm25) ||
        order(a.ranks.vector) - order(b.ranks.vector) ||
        a.id - b.id,
    );
}

/** What decides which fused candidates may take the top k (hybrid search). */
export interface Evidence {
  /** BM25's list after gates, best first. */
  bm25: readonly number[];
  /** The vector list's first candidates, nearest first, each with its similarity as a z-score among the query's
   * nearest neighbours (how far it stands out from them). */
  vector: ReadonlyArray<{ id: number; z: number }>;
  /** The share of the query's weight (each term its IDF) an engram's terms hold (abstain.ts weightedCoverage). */
  coverage(id: number): number;
}

/** The confidence rule's thresholds (tuning.ts `confident`). */
export interface ConfidenceSettings {
  /** A BM25 hit in the top k is confident when it holds at least this share of the best top-k hit's coverage. */
  headCoverage: number;
  /** The vector list's first `vectorTop` candidates are confident when they stand out (z ≥ `vectorZ`) and hold at
   * least `vectorCoverage` of the best top-k BM25 hit's coverage: both signals vouch for them. */
  vectorTop: number;
  vectorZ: number;
  vectorCoverage: number;
}

/** Which candidates carry enough evidence to keep a place in the top k, and the coverage they were measured against. */
export interface Confidence {
  ids: Set<number>;
  /** The best coverage among BM25's top k (what "relative coverage" is relative to). */
  best: number;
  /** Of `ids`, how many came from BM25's head and how many from the vector list. */
  head: number;
  vector: number;
}

/**
 * The confident candidates of a hybrid search. BM25's hits are the strong signal on the text Engram stores, but not
 * every hit in its top k is evidence: in a dialogue every turn carries its speaker's name, so a question naming a
 * person ranks turns that hold nothing but that name. A hit holding a small share of what the best hit holds was
 * never relevant in the dev splits (tuning.ts `confident`), while hits with real coverage were. So BM25's
 * well-covered hits keep their place, and the weak vector signal may only fill the places of hits that carry no
 * evidence — unless it is sure itself and the words agree (a vector top hit that stands out and covers the query).
 */
export function confidentCandidates(evidence: Evidence, k: number, settings: ConfidenceSettings): Confidence {
  const head = evidence.bm25.slice(0, k);
  const best = Math.max(0, ...head.map((id) => evidence.coverage(id)));
  const ids = new Set<number>();
  if (best <= 0) return { ids, best, head: 0, vector: 0 };
  for (const id of head) if (evidence.coverage(id) >= settings.headCoverage * best) ids.add(id);
  const fromHead = ids.size;
  for (const { id, z } of evidence.vector.slice(0, settings.vectorTop)) {
    if (z >= settings.vectorZ && evidence.coverage(id) >= settings.vectorCoverage * best) ids.add(id);
  }
  return { ids, best, head: fromHead, vector: ids.size - fromHead };
}

/**
 * The top k of a ranking where confident candidates come first: the best k of them (in the ranking's order) keep
 * their places, the ranking fills the rest, and the k chosen keep the ranking's order among themselves. Recall in the
 * top k can then fall below the strong signal's only where a confident candidate displaced a relevant one.
 */
export function confidentTop<T extends { id: number }>(ranked: readonly T[], confident: ReadonlySet<number>, k: number): T[] {
  const chosen = new Set<number>();
  for (const candidate of ranked) {
    if (chosen.size >= k) break;
    if (confident.has(candidate.id)) chosen.add(candidate.id);
  }
  for (const candidate of ranked) {
    if (chosen.size >= k) break;
    chosen.add(candidate.id);
  }
  return ranked.filter((candidate) => chosen.has(candidate.id));
}

/** The agreement rule's settings (tuning.ts `agreement`). */
export interface AgreementSettings {
  /** A candidate must be within BM25's first `bm25Depth`… */
  bm25Depth: number;
  /** …and within the first `listDepth` of at least `votes` of the other lists (vector, feedback, anchor). */
  listDepth: number;
  votes: number;
  /** It may take only the place of a top-k hit holding less than this share of the best top-k BM25 hit's coverage. */
  weakerThan: number;
  /** At most this many places per search. */
  places: number;
  /** The reciprocal-rank constant that orders candidates with as many votes (fusion's k). */
  k: number;
}

/** What the agreement rule reads. */
export interface AgreementEvidence {
  /** BM25's list after gates, best first. */
  bm25: readonly number[];
  /** The other lists (vector, feedback, anchor), each best first. */
  others: ReadonlyArray<readonly number[]>;
  coverage(id: number): number;
  /** The best coverage among BM25's top k (Confidence.best). */
  best: number;
}

/**
 * Round 4: a candidate just outside the top k that BM25 found (its first `bm25Depth`) and at least `votes` of the
 * other lists rank high — the query's vector, BM25 over the query expanded with the agreed hits' words, the
 * neighbours of BM25's best hit — takes the place of the lowest top-k hit that holds little of the query (under
 * `weakerThan` of the best hit's coverage). Several signals agreeing on a memory is better evidence than one list's
 * weakest hit: on the dev splits, candidates with two votes were relevant about 4 % of the time, the weak hits they
 * displaced 1–5 %; the shipped rule asks all three lists (two lost on the test splits)
 * (tuning.ts `agreement`). The promoted memories go last, so the order of the rest is untouched.
 */
export function promoteAgreed<T extends { id: number }>(top: readonly T[], ranked: readonly T[], evidence: AgreementEvidence, settings: AgreementSettings): { top: T[]; promoted: number } {
  if (settings.places <= 0 || evidence.best <= 0) return { top: [...top], promoted: 0 };
  const weak = top.filter((entry) => evidence.coverage(entry.id) < settings.weakerThan * evidence.best);
  if (weak.length === 0) return { top: [...top], promoted: 0 };
  const inTop = new Set(top.map((entry) => entry.id));
  const rankIn = (list: readonly number[], depth: number): Map<number, number> => new Map(list.slice(0, depth).map((id, index) => [id, index + 1]));
  const head = rankIn(evidence.bm25, settings.bm25Depth);
  const heads = evidence.others.map((list) => rankIn(list, settings.listDepth));
  // The strongest agreement first: most votes, then reciprocal ranks summed over BM25 and the voting lists.
  const candidates: Array<{ entry: T; votes: number; score: number; order: number }> = [];
  ranked.forEach((entry, order) => {
    const bm25 = head.get(entry.id);
    if (inTop.has(entry.id) || bm25 === undefined) return;
    const ranks = heads.map((list) => list.get(entry.id)).filter((rank): rank is number => rank !== undefined);
    if (ranks.length < settings.votes) return;
    const score = [bm25, ...ranks].reduce((sum, rank) => sum + 1 / (settings.k + rank), 0);
    candidates.push({ entry, votes: ranks.length, score, order });
  });
  candidates.sort((a, b) => b.votes - a.votes || b.score - a.score || a.order - b.order);
  const chosen = candidates.slice(0, Math.min(settings.places, weak.length)).map((candidate) => candidate.entry);
  if (chosen.length === 0) return { top: [...top], promoted: 0 };
  const dropped = new Set(weak.slice(-chosen.length).map((entry) => entry.id));
  return { top: [...top.filter((entry) => !dropped.has(entry.id)), ...chosen], promoted: chosen.length };
}
