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
