/**
 * Every number the fingerprint index, lineage, continuation detection and explain use, in one place with the reason
 * for each. The values follow ../shared/seeds/000 and the clickety-clacks/engram reference (peers.md §4) unless a
 * comment says otherwise. The index is derived from tapes, so changing a fingerprint value means a rebuild, never
 * lost history.
 * @module
 */

/** How text becomes fingerprints; an index file is built with exactly one of these. */
export interface FingerprintParams {
  /** Tokens per k-gram: shorter matches than this are noise (`x = 1 ;` occurs everywhere). */
  k: number;
  /** Winnowing window, in k-grams: one fingerprint is kept per window, so density is about 2 / (w + 1). */
  w: number;
}

/**
 * Index profiles: several parameter sets built from the same tapes, side by side, for comparing recall and size
 * (seed "Multiple indices"). Each profile is its own SQLite file (`indexPathForProfile`).
 */
export const INDEX_PROFILES = {
  /** k=5, w=4: any shared run of 8 tokens (about one line of code) is found; ~40% of k-grams kept. */
  default: { k: 5, w: 4 },
  /** k=7, w=8: a smaller index (~22% of k-grams kept) that only guarantees runs of 14 tokens; for calibration. */
  coarse: { k: 7, w: 8 },
} as const satisfies Record<string, FingerprintParams>;
export type IndexProfile = keyof typeof INDEX_PROFILES;
export const INDEX_PROFILE_NAMES = Object.keys(INDEX_PROFILES) as IndexProfile[];

/**
 * The fingerprint hash, recorded in each index file's meta, so a file hashed otherwise is stale and rebuilt. Each token
 * is hashed once into two 32-bit lanes (FNV-1a with two different multipliers, so the lanes collide independently); a
 * k-gram mixes its k token hashes lane by lane (MurmurHash3's block mix and finaliser) into hi and lo, one signed
 * 64-bit INTEGER hi·2³² + lo. All of it is `Math.imul` on int32s; SHA-256 per k-gram (schema 1) fingerprinted ~1 MB/s
 * (bench/tapes-explain.mjs before and after, in the commit that changed it).
 * Why 64 bits rather than a 53-bit JS number (no BigInt at all): n distinct fingerprints hold about n²/2^(b+1)
 * colliding pairs, so an index of 10⁸ fingerprints expects ~0.55 at 53 bits and ~3·10⁻⁴ at 64. The BigInt is made
 * once per fingerprint kept by winnowing, never in the token or k-gram loops, and costs little.
 */
export const FINGERPRINT_HASH = 'fnv1a-2x32+murmur3-mix';

/** How the index file is written. */
export const INDEX_BUILD = {
  /**
   * Page cache of a rebuild, in KiB (a ceiling, not an allocation): later sorted runs merge all over the evidence
   * B-tree, and every page read back from the OS costs a system call.
   */
  bulkCacheKib: 512 * 1024,
  /**
   * Evidence postings held in memory before they are written sorted (16 bytes each plus 10 to sort: ~50 MB). Rows in
   * key order append to the B-tree instead of landing anywhere in it (per-row costs of ~0.9 vs ~2-3 µs were seen
   * while tuning, not kept as a bench); a bigger project writes
   * several sorted runs, each still far more local than random inserts. Measured on the 1,000-tape bench, 2M (three
   * runs) built as fast as one run of everything, and slightly smaller.
   */
  bufferedRows: 2_000_000,
  /** Rows bound per INSERT statement: amortises better-sqlite3's per-call cost (about 1.5 µs seen while tuning;
   * not kept as a bench) over many rows. */
  insertBatch: 128,
} as const;

/** The constants, grouped by the part of the system that uses them. */
export const TAPE_TUNING = {
  anchor: {
    /** Lines per anchor window: about one function, so a long span is matched piece by piece, not diluted. */
    windowLines: 24,
    /** Overlap between consecutive windows: a function cut by one window boundary is whole in the next window. */
    overlapLines: 12,
  },
  lineage: {
    /** Below this Jaccard an old→new edge is kept only as `location_only` forensics: the text was replaced. */
    linkThreshold: 0.3,
    /** Default `--min-confidence`: edges at or above it are traversed; a read-time filter, lowering it needs no rebuild. */
    traverseThreshold: 0.5,
    /** A new span this similar to a tombstone is the deleted code put back verbatim and joins the old chain. */
    reinsertThreshold: 0.9,
    /**
     * Share of an edit's replaced text that must come from an earlier span for that span to be its origin. Half keeps
     * code assembled from two earlier edits (N:1) while a stray shared line cannot make a span someone's parent.
     */
    originContainment: 0.5,
    /** Once the newest origin is taken, another must still cover this share of the uncovered fingerprints. */
    extraOriginShare: 0.3,
    /** Lines within which an edit counts as `adjacent` to its origin rather than `moved`: one anchor window. */
    adjacentLines: 24,
    /** BFS limits (seed "Traversal limits"): edges per node, edges in total, and depth from the queried span. */
    maxFanout: 50,
    maxEdges: 500,
    maxDepth: 10,
    /** Edits and reads of a file looked at to resolve the range a `span.link` names: the nearest ones matter. */
    spanLinkCandidates: 500,
  },
  continuation: {
    /** Message events (in, out, compaction summary) at the start of a tape compared with earlier tapes' tails. */
    headEvents: 10,
    /** Message events at the end of a tape; a compaction summary mostly restates the latest work. */
    tailEvents: 20,
    /** Fewer shared fingerprints than this is one shared phrase, not carried-over context (~25 tokens). */
    minShared: 10,
    /** Stored edges need at least this confidence; below it the overlap is too thin to be worth a row. */
    storeThreshold: 0.2,
    /** A compaction marker in the later tape's head halves the distance of the overlap score to 1. */
    compactionBoost: 0.5,
    /** A fingerprint in more than this share of a project's tapes is scaffolding (system prompt, AGENTS.md)... */
    boilerplateShare: 0.5,
    /** ...once there are this many tapes; with fewer, "most tapes" says nothing. */
    boilerplateMinTapes: 5,
  },
  explain: {
    /** Direct evidence below this share of a window's fingerprints is shared idiom, not the span (`--all` shows it). */
    directThreshold: 0.3,
    /** Transcript window around each touch, in events (a tape has one event per JSONL line); peer defaults. */
    before: 30,
    after: 10,
    /** Tapes returned unless `limit` says otherwise. */
    limit: 10,
    /** `--expand-until`: lines added on each side per step, and how many steps at most. */
    expandStepLines: 6,
    expandMaxSteps: 12,
  },
} as const;
