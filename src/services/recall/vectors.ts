import {
  embeddingText,
  knownModel,
  readPulledModels,
  vectorModelId,
  resolveEmbedder,
  type Embedder,
  type PulledModels,
  type Settings,
  type Store,
  type VectorSpace,
} from '../../core/index.js';
import { TUNING } from './tuning.js';

/** What {@link embedPending} did. */
export interface EmbedReport {
  model: string;
  dim: number;
  /** Engrams that lacked a current vector when it started. */
  pending: number;
  /** Vectors written. */
  embedded: number;
  /** Write transactions (one per batch). */
  batches: number;
  /** Engrams still without a current vector (a `limit` was reached). */
  remaining: number;
}

/** Options for {@link embedPending}. */
export interface EmbedOptions {
  /** Texts per embedding call and per write transaction. @default TUNING.batchSize for the embedder's kind */
  batchSize?: number;
  /** Stop after this many vectors. @default no limit */
  limit?: number;
  onProgress?: (done: number, total: number) => void;
  now?: () => Date;
}

/** The embedder's vector space in this store, created if new. */
export function ensureVectorSpace(store: Store, embedder: Embedder, now: () => Date = () => new Date()): VectorSpace {
  return store.write(() => store.vectors().ensureSpace(embedder.model, embedder.dim, now().toISOString()));
}

/**
 * Embeds every live engram whose vector in the embedder's space is missing or stale, in batches: each batch is
 * embedded, then written in one transaction, so an interrupted run keeps whole batches and the next run continues.
 * The text embedded is the engram's `text`; its content hash is stored with the vector, which is how staleness is
 * detected after an edit.
 */
export async function embedPending(store: Store, embedder: Embedder, options: EmbedOptions = {}): Promise<EmbedReport> {
  const now = options.now ?? (() => new Date());
  const batchSize = Math.max(1, options.batchSize ?? TUNING.batchSize[embedder.kind] ?? 32);
  const space = ensureVectorSpace(store, embedder, now);
  const vectors = store.vectors();
  const pending = vectors.countPending(space);
  const limit = Math.min(pending, options.limit ?? Number.POSITIVE_INFINITY);
  const report: EmbedReport = { model: embedder.model, dim: embedder.dim, pending, embedded: 0, batches: 0, remaining: pending };
  options.onProgress?.(0, limit);
  // Keyset paging: each batch starts after the last id seen, so a large reindex reads the table once, not once per batch.
  let after = 0;
  while (report.embedded < limit) {
    const batch = vectors.pending(space, Math.min(batchSize, limit - report.embedded), after);
    if (batch.length === 0) break;
    after = (batch.at(-1) as { id: number }).id;
    const embedded = await embedder.embed(batch.map((row) => embeddingText(row.text)));
    const at = now().toISOString();
    store.write(() => {
      batch.forEach((row, i) => vectors.put(space, row.id, row.content_hash, embedded[i] as Float32Array));
      vectors.touch(space, at);
    });
    report.embedded += batch.length;
    report.batches++;
    options.onProgress?.(report.embedded, limit);
  }
  report.remaining = vectors.countPending(space);
  return report;
}

/** What {@link reindexVectors} did. */
export interface ReindexReport extends EmbedReport {
  /** Vectors of deleted, deprecated or vanished engrams removed. */
  pruned: number;
  /** `all`: every vector was rebuilt; `stale`: only missing and stale ones. */
  scope: 'all' | 'stale';
}

/**
 * `engram reindex`: prunes vectors of engrams that are gone, then embeds what is missing or stale (or, with `all`,
 * everything again: after a model's weights changed under the same id).
 */
export async function reindexVectors(
  store: Store,
  embedder: Embedder,
  options: EmbedOptions & { all?: boolean } = {},
): Promise<ReindexReport> {
  const now = options.now ?? (() => new Date());
  const space = ensureVectorSpace(store, embedder, now);
  const pruned = store.write(() => {
    if (options.all) store.vectors().forget(space);
    return store.vectors().prune(space);
  });
  const report = await embedPending(store, embedder, options);
  return { ...report, pruned, scope: options.all ? 'all' : 'stale' };
}

/** What {@link embedNewEngrams} did: vectors written, or why not (never an error: the engrams are already stored). */
export interface CatchUpReport {
  vectors: { model: string; embedded: number; remaining: number; workers?: number } | null;
  note: string | null;
}

/**
 * After a bulk write (import): embeds what lacks vectors with the engine's embedder. No model, or a model that fails
 * half way, is reported in `note` rather than thrown — the engrams are committed, BM25 finds them, and `engram
 * reindex` (or the next search) embeds the rest.
 */
export async function embedNewEngrams(
  store: Store,
  load: () => Promise<{ embedder: Embedder | null; reason: string }>,
  options: EmbedOptions & { onError?: (error: unknown) => void } = {},
): Promise<CatchUpReport> {
  const { embedder, reason } = await load();
  if (!embedder) return { vectors: null, note: `not embedded: ${reason}` };
  try {
    const done = await embedPending(store, embedder, options);
    return { vectors: { model: done.model, embedded: done.embedded, remaining: done.remaining }, note: null };
  } catch (error) {
    options.onError?.(error);
    return { vectors: null, note: `stored, but embedding stopped: ${(error as Error).message}; run engram reindex` };
  }
}

/** `engram model status`: the embedder recall would use and why, what was pulled, and vector coverage per model. */
export interface ModelStatus {
  embedder: { kind: string; model: string } | null;
  reason: string;
  pulled: PulledModels;
  models_dir: string;
  vector_spaces: Array<{ model: string; dim: number; vectors: number; pending: number; last_used_at: string }>;
  /** Why the vector tables cannot be read (sqlite-vec missing), or null. */
  vector_error: string | null;
}

/** Reads the model status without loading any model. */
export function modelStatus(store: Store, settings: Settings): ModelStatus {
  const choice = resolveEmbedder(settings);
  let spaces: ModelStatus['vector_spaces'] = [];
  let vectorError: string | null = null;
  try {
    const vectors = store.vectors();
    spaces = vectors.spaces().map((space) => ({
      model: space.model,
      dim: space.dim,
      vectors: space.vectors,
      pending: vectors.countPending(space),
      last_used_at: space.last_used_at,
    }));
  } catch (error) {
    vectorError = (error as Error).message;
  }
  return {
    embedder: choice.spec ? { kind: choice.spec.kind, model: choice.spec.model } : null,
    reason: choice.reason,
    pulled: readPulledModels(settings.paths.models),
    models_dir: settings.paths.models,
    vector_spaces: spaces,
    vector_error: vectorError,
  };
}

/** What the active embedder implies for search quality, in one sentence (engram doctor and status say it). */
export function modelQuality(spec: { kind: string; model: string } | null): string {
  if (!spec) return 'none: search is keyword-only (BM25); run `engram model pull` for the strong model';
  const known = knownModel(spec.model);
  if (known) return known.quality;
  if (spec.kind === 'use-lite') {
    return 'offline: USE lite from npm, weak on conversation and paraphrase (docs/SEARCH.md); `engram model pull` gets the strong model when the hub can be reached';
  }
  if (spec.kind === 'test') return 'test: a hashing embedder for plumbing tests, no meaning';
  return `local model ${spec.model}: quality as measured with engram bench retrieval (docs/SEARCH.md)`;
}

/** `engram status` → embeddings: the active model, its coverage, and what serves while it fills after a change. */
export interface EmbeddingStatus {
  model: string | null;
  reason: string;
  quality: string;
  /** Live engrams with a current vector in the active model's space, and how many there are. */
  vectors: number;
  total: number;
  /** Re-embedding still to do for the active model (the background server works through it). */
  pending: number;
  /** A complete older space that searches use until `pending` reaches 0, or null. */
  serving: string | null;
}

/** Reads the embedding status without loading any model. */
export function embeddingStatus(store: Store, settings: Settings): EmbeddingStatus {
  const choice = resolveEmbedder(settings);
  const total = store.engrams.counts().active;
  const base = { reason: choice.reason, quality: modelQuality(choice.spec), total, serving: null };
  if (!choice.spec) return { ...base, model: null, vectors: 0, pending: 0 };
  const model = vectorModelId(choice.spec);
  try {
    const vectors = store.vectors();
    const spaces = vectors.spaces();
    const active = spaces.find((space) => space.model === model);
    const pending = active ? vectors.countPending(active) : total;
    const serving =
      pending > 0 ? (spaces.find((space) => space.model !== model && space.vectors > 0 && vectors.countPending(space) === 0)?.model ?? null) : null;
    return { ...base, model, vectors: total - pending, pending, serving };
  } catch {
    return { ...base, model, vectors: 0, pending: total };
  }
}
