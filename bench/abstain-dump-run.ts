// Round 6 (gates): what the weak-match rule can read, from the real engine, per DEV query (hybrid, the shipped
// ranking with every promotion): the top 10 with ranks, signals and the query terms each holds, the rule's term
// weights and verdict, and per store the distribution of each memory's similarity to its nearest other memory (a
// per-store scale for the top hit's similarity, computed once per store as an index build would). Dev only:
// tuningQueryFile refuses test. bench/abstain-dump.mjs bundles and runs it; bench/abstain-explore.mjs reads the dump.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSettings, readEnv, type Embedder, type EmbedderChoice, type Store } from '../src/core/index.js';
import { evalSetFiles, runRetrievalBench, searchTuning, tuningQueryFile } from '../src/services/index.js';
import { buildBm25Index, queryTerms, searchTerms } from '../src/services/recall/index.js';
import { tuningOptions } from './_tuning-options.js';

const { option, root, sets, embedders, modelDir } = tuningOptions();

const out = option('--out', '/tmp/abstain-dev.json');

function choiceOf(name: string): EmbedderChoice {
  if (name === 'use-lite') return { spec: { kind: 'use-lite', model: 'use-lite' }, reason: 'bench' };
  return { spec: { kind: 'transformers', model: name, modelDir, folder: join(modelDir, name), quantized: true }, reason: 'bench' };
}

/** Each memory's cosine similarity to its nearest other memory in the store: mean and standard deviation. */
function nearestStats(store: Store, model: Embedder | null): { mean: number; sd: number; n: number } | null {
  if (!model) return null;
  const vectors = store.vectors();
  const space = vectors.findSpace(model.model, model.dim);
  if (!space) return null;
  const all: Float32Array[] = [];
  for (const engram of store.engrams.iterate()) {
    const v = vectors.vectorOf(space, engram.id);
    if (v) all.push(v);
  }
  const norm = all.map((v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1);
  const nearest: number[] = [];
  for (let i = 0; i < all.length; i++) {
    let best = -1;
    for (let j = 0; j < all.length; j++) {
      if (i === j) continue;
      let dot = 0;
      const a = all[i] as Float32Array;
      const b = all[j] as Float32Array;
      for (let d = 0; d < a.length; d++) dot += (a[d] as number) * (b[d] as number);
      best = Math.max(best, dot / ((norm[i] as number) * (norm[j] as number)));
    }
    nearest.push(best);
  }
  const mean = nearest.reduce((s, x) => s + x, 0) / Math.max(1, nearest.length);
  const sd = Math.sqrt(nearest.reduce((s, x) => s + (x - mean) ** 2, 0) / Math.max(1, nearest.length));
  return { mean, sd, n: nearest.length };
}

/**
 * Round 7: the store's own BM25 scale, computed once per store as an index build would: for each memory and k = 1…6,
 * the BM25 score it gets for a query of its own k rarest terms (highest IDF in the store); quantiles per k.
 */
function selfScores(store: Store): Record<number, number[]> {
  const { index } = buildBm25Index(store);
  const out: Record<number, number[]> = {};
  for (const engram of store.engrams.iterate()) {
    const terms = [...new Set(searchTerms(`${engram.title ?? ''} ${engram.text} ${engram.category} ${engram.tags.join(' ')}`))];
    terms.sort((x, y) => index.idf(y) - index.idf(x));
    for (let k = 1; k <= 6; k++) {
      if (terms.length < k) break;
      const hits = index.searchWeighted(terms.slice(0, k).map((term) => ({ term, weight: 1 })), 50);
      const own = hits.find((h) => h.id === engram.id)?.score ?? 0;
      (out[k] ??= []).push(own);
    }
  }
  // Quantiles 10, 25, 50, 75, 90 % per k (the dump keeps the scale, not every memory's score).
  const quantiles: Record<number, number[]> = {};
  for (const [k, list] of Object.entries(out)) {
    list.sort((x, y) => x - y);
    quantiles[Number(k)] = [0.1, 0.25, 0.5, 0.75, 0.9].map((q) => list[Math.min(list.length - 1, Math.floor(q * list.length))] as number);
  }
  return quantiles;
}

const rows: unknown[] = [];
const settings = loadSettings(readEnv());
for (const embedder of embedders) {
  for (const set of sets) {
    const files = evalSetFiles(root, set, 'dev');
    let stats: ReturnType<typeof nearestStats> = null;
    let self: Record<number, number[]> = {};
    let storeIndex = 0;
    await runRetrievalBench({
      memories: readFileSync(files.memories, 'utf8').split('\n'),
      storePerGroup: files.storePerGroup,
      queries: readFileSync(tuningQueryFile(root, set), 'utf8').split('\n'),
      k: 10,
      modes: ['hybrid'],
      embedder: choiceOf(embedder),
      tuning: searchTuning(settings.config),
      search: { abstain: false, explain: true },
      onStore(store, model) {
        stats = nearestStats(store, model);
        self = selfScores(store);
        storeIndex++;
      },
      inspect(query, response, memoryIdsOf) {
        const terms = queryTerms(query.q);
        rows.push({
          set,
          embedder,
          store: storeIndex,
          q: query.q,
          relevant: query.relevant,
          kind: query.kind ?? null,
          weak: response.weak,
          nearest: stats,
          self,
          abstain: response.explain?.abstain ?? null,
          docs: response.explain ? undefined : undefined,
          results: response.results.map((hit) => {
            const held = new Set(searchTerms(`${hit.engram.title ?? ''} ${hit.engram.text} ${hit.engram.category} ${hit.engram.tags.join(' ')}`));
            return { id: hit.id, mem: [...memoryIdsOf(hit.id)], ranks: hit.ranks, bm25: hit.signals.bm25, sim: hit.signals.vector, held: terms.filter((t) => held.has(t)), text: hit.engram.text.slice(0, 160) };
          }),
        });
      },
    });
    console.error(`${embedder} ${set}: ${rows.length} rows`);
  }
}
writeFileSync(out, JSON.stringify(rows));
