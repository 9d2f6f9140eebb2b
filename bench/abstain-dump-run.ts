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
import { cosineDistance } from '../src/services/recall/vector-index.js';
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

/** Round 10: the question without its leading wh-word and auxiliaries (what the vector half might embed instead). */
const WH = /^\s*(?:what|which|who|whom|whose|where|when|why|how)(?:\s+(?:is|are|was|were|do|does|did|has|have|had|can|could|should|would|will|many|much|long|old|often))*\s+/i;
const stripWh = (q: string): string => q.replace(WH, '');
/** Round 10: a memory's text without its questions (sentences ending in "?"; the withdrawn rule's `statedText`). */
const statedText = (text: string): string => text.split(/(?<=[.!?])\s+/).filter((sentence) => !sentence.trimEnd().endsWith('?')).join(' ');

/** Round 10: each store's memories as analysed term sets (engram id → terms), dumped once per set. */
const storeTerms: Record<string, Record<number, Record<number, string[]>>> = {};
const rows: unknown[] = [];
const settings = loadSettings(readEnv());
for (const embedder of embedders) {
  for (const set of sets) {
    const files = evalSetFiles(root, set, 'dev');
    let stats: ReturnType<typeof nearestStats> = null;
    let self: Record<number, number[]> = {};
    let storeIndex = 0;
    // Round 10: per store, every memory's vector (to score the stripped question against the whole store).
    const pending: Array<Promise<void>> = [];
    const simsOf = new Map<string, { full: number; strip: number; byId: Record<number, [number, number]> }>();
    const queryLines = readFileSync(tuningQueryFile(root, set), 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { q: string; group?: string });
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
        const si = storeIndex;
        if (embedder === embedders[0]) {
          const terms: Record<number, string[]> = {};
          for (const engram of store.engrams.iterate()) terms[engram.id] = [...new Set(searchTerms(`${engram.title ?? ''} ${engram.text} ${engram.category} ${engram.tags.join(' ')}`))];
          ((storeTerms[set] ??= {})[si] = terms);
        }
        if (model) {
          const space = store.vectors().findSpace(model.model, model.dim);
          const vecs: Array<[number, Float32Array]> = [];
          if (space) for (const engram of store.engrams.iterate()) { const v = store.vectors().vectorOf(space, engram.id); if (v) vecs.push([engram.id, Float32Array.from(v)]); }
          const qs = queryLines.map((l) => l.q);
          pending.push(model.embed([...qs, ...qs.map(stripWh)]).then((out) => {
            // sqlite-vec's cosine, as the engine's vector list scores.
            const similarity = (v: Float32Array, query: Float32Array): number => 1 - cosineDistance(v, 0, query, v.length);
            qs.forEach((q, i) => {
              const a = out[i] as Float32Array; const b = out[qs.length + i] as Float32Array;
              const byId: Record<number, [number, number]> = {};
              let full = -1, strip = -1;
              for (const [id, v] of vecs) {
                const sa = similarity(v, a); const sb = similarity(v, b);
                byId[id] = [sa, sb]; full = Math.max(full, sa); strip = Math.max(strip, sb);
              }
              simsOf.set(`${si}|${q}`, { full, strip, byId });
            });
          }));
        }
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
          strip: stripWh(query.q),
          results: response.results.map((hit) => {
            const held = new Set(searchTerms(`${hit.engram.title ?? ''} ${hit.engram.text} ${hit.engram.category} ${hit.engram.tags.join(' ')}`));
            // Round 10: the query terms the memory holds outside its questions (a turn that asks does not answer).
            const stated = new Set(searchTerms(`${hit.engram.title ?? ''} ${statedText(hit.engram.text)} ${hit.engram.category} ${hit.engram.tags.join(' ')}`));
            // …whether it is a question, and whether round 10's rule discounted its question words (no reply among the results).
            // `asking`: the round 10 candidate's verdict (commit 49a2250); main's engine reports none.
            const asking = (response.explain?.abstain as { asking?: number[] } | undefined)?.asking ?? [];
            return { id: hit.id, mem: [...memoryIdsOf(hit.id)], ranks: hit.ranks, bm25: hit.signals.bm25, sim: hit.signals.vector, held: terms.filter((t) => held.has(t)), stated: terms.filter((t) => stated.has(t)), question: hit.engram.text.trimEnd().endsWith('?'), asks: asking.includes(hit.id), text: hit.engram.text.slice(0, 160) };
          }),
        });
      },
    });
    await Promise.all(pending);
    for (const row of rows as Array<{ set: string; embedder: string; store: number; q: string; results: Array<{ id: number; simFull?: number; simStrip?: number }>; simFullTop?: number; simStripTop?: number }>) {
      if (row.set !== set || row.embedder !== embedder) continue;
      const sims = simsOf.get(`${row.store}|${row.q}`);
      if (!sims) continue;
      row.simFullTop = sims.full; row.simStripTop = sims.strip;
      for (const hit of row.results) { const pair = sims.byId[hit.id]; if (pair) { hit.simFull = pair[0]; hit.simStrip = pair[1]; } }
    }
    console.error(`${embedder} ${set}: ${rows.length} rows`);
  }
}
writeFileSync(out, JSON.stringify(rows));
writeFileSync(`${out}.terms.json`, JSON.stringify(storeTerms));
