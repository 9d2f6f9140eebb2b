import { embeddingText, type Embedder, type Engram, type Store, type VectorSpace } from '../../core/index.js';
import { ensureVectorSpace, searchTerms } from '../recall/index.js';

/** When a new lesson is the same as one already stored (engrammar's inline dedup, peers.md §1.6). */
export const DEDUP = {
  /** Cosine similarity of the two texts' embeddings at or above which they say the same thing. 0.85 is engrammar's
   * value; not re-measured on our models. */
  cosine: 0.85,
  /** Nearest stored neighbours compared by embedding. */
  neighbours: 3,
  /** Word overlap |A∩B| / min(|A|,|B|) over stemmed content words at or above which two texts are the same lesson
   * (engrammar raised it from 0.50 to 0.70 after false merges). Checked always, so it also covers engrams that have
   * no vector yet and stores with no embedder. */
  wordOverlap: 0.7,
  /** Texts with fewer content words than this are never merged by overlap: "use pnpm" overlaps everything. */
  minWords: 4,
} as const;

/** A lesson already stored or accepted earlier in the same run, ready to compare against. */
export interface KnownLesson {
  id: number | null;
  project: string | null;
  words: Set<string>;
  vector: Float32Array | null;
}

/** A duplicate found, and by which test. */
export interface DuplicateMatch {
  /** The stored engram, or null for a lesson accepted earlier in the same (dry) run. */
  id: number | null;
  by: 'embedding' | 'words';
  similarity: number;
}

export const contentWords = (text: string): Set<string> => new Set(searchTerms(text));

/** |A∩B| / min(|A|,|B|), 0 when either side is below {@link DEDUP.minWords}. */
export function wordOverlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size < DEDUP.minWords || b.size < DEDUP.minWords) return 0;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return shared / Math.min(a.size, b.size);
}

const dot = (a: Float32Array, b: Float32Array): number => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
};

/** A lesson may merge into an engram of its own project or a general one, never into another project's. */
const mergeable = (project: string | null, candidate: string | null): boolean => project === null || project === candidate;

/**
 * Finds what a new lesson duplicates, comparing against the live engrams it may merge into and the lessons accepted
 * earlier in the run: by embedding (stored vectors through sqlite-vec, plus vectors held for this run) when an
 * embedder is loaded, and by word overlap always.
 */
export class LessonIndex {
  private readonly known: KnownLesson[] = [];
  /** The embedder's vector space in the store: undefined until asked, null when there is none. */
  private vectorSpace: VectorSpace | null | undefined;

  constructor(
    private readonly store: Store,
    private readonly embedder: Embedder | null,
  ) {}

  /** Loads the live engrams a lesson of `project` may merge into. */
  load(project: string | null): void {
    const seen = new Set(this.known.map((lesson) => lesson.id));
    const add = (engrams: Engram[]): void => {
      for (const engram of engrams) {
        if (seen.has(engram.id)) continue;
        seen.add(engram.id);
        this.known.push({ id: engram.id, project: engram.project, words: contentWords(engram.text), vector: null });
      }
    };
    add(this.store.engrams.list({ project: null, limit: 1_000_000 }).engrams);
    if (project !== null) add(this.store.engrams.list({ project, limit: 1_000_000 }).engrams);
  }

  /** The lesson's vector, or null without an embedder. */
  async vector(text: string): Promise<Float32Array | null> {
    if (!this.embedder) return null;
    const [vector] = await this.embedder.embed([embeddingText(text)]);
    return vector ?? null;
  }

  duplicateOf(text: string, project: string | null, vector: Float32Array | null): DuplicateMatch | null {
    // Embedding matches first (they read meaning); word overlap only when no embedding match was found.
    const found: { best: DuplicateMatch | null } = { best: null };
    const consider = (match: DuplicateMatch): void => {
      if (!found.best || match.similarity > found.best.similarity) found.best = match;
    };
    if (vector && this.embedder) {
      for (const neighbour of this.storedNeighbours(vector)) {
        const engram = this.store.engrams.get(neighbour.id);
        if (!engram || engram.deleted_at !== null || engram.deprecated || !mergeable(engram.project, project)) continue;
        if (neighbour.similarity >= DEDUP.cosine) consider({ id: engram.id, by: 'embedding', similarity: neighbour.similarity });
      }
      for (const lesson of this.known) {
        if (!lesson.vector || !mergeable(lesson.project, project)) continue;
        const similarity = dot(vector, lesson.vector);
        if (similarity >= DEDUP.cosine) consider({ id: lesson.id, by: 'embedding', similarity });
      }
    }
    if (found.best) return found.best;
    const words = contentWords(text);
    for (const lesson of this.known) {
      if (!mergeable(lesson.project, project)) continue;
      const overlap = wordOverlap(words, lesson.words);
      if (overlap >= DEDUP.wordOverlap) consider({ id: lesson.id, by: 'words', similarity: overlap });
    }
    return found.best;
  }

  /** Remembers a lesson accepted in this run (stored: its id; dry run: null). */
  remember(id: number | null, text: string, project: string | null, vector: Float32Array | null): void {
    this.known.push({ id, project, words: contentWords(text), vector });
  }

  /** The embedder's vector space (created if new), or null without an embedder or the vector extension. */
  space(): VectorSpace | null {
    if (this.vectorSpace === undefined) {
      try {
        this.vectorSpace = this.embedder ? ensureVectorSpace(this.store, this.embedder) : null;
      } catch {
        this.vectorSpace = null; // No vector extension: word overlap still runs.
      }
    }
    return this.vectorSpace;
  }

  private storedNeighbours(vector: Float32Array): Array<{ id: number; similarity: number }> {
    const space = this.space();
    if (!space) return [];
    // sqlite-vec's cosine distance is 1 − cosine similarity.
    return this.store
      .vectors()
      .knn(space, vector, DEDUP.neighbours)
      .map((neighbour) => ({ id: neighbour.id, similarity: 1 - neighbour.distance }));
  }
}
