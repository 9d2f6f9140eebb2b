// Fusion tuning on the DEV splits only: collects each dev query's signals once per set and embedder (cached in
// node_modules/.cache/engram-tune), then scores fusion settings on them. bench/tune.mjs bundles and runs it. The
// test splits are refused in code (services/recall tuningQueryFile): numbers reported on them were never seen while
// choosing.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadSettings, readEnv, type Embedder, type EmbedderChoice, type Store } from '../src/core/index.js';
import {
  EVAL_SET_NAMES,
  evalSetFiles,
  runRetrievalBench,
  searchTuning,
  TUNING,
  tuningQueryFile,
  type EvalSetName,
} from '../src/services/index.js';
import { searchTerms } from '../src/services/recall/index.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 ? (args[index + 1] as string) : fallback;
};
const root = option('--root', process.cwd());
// Refused before anything is read: `--split test` is a mistake, not a request.
const split = option('--split', 'dev');
const sets = option('--sets', EVAL_SET_NAMES.join(',')).split(',') as EvalSetName[];
for (const set of sets) tuningQueryFile(root, set, split);
const embedders = option('--embedders', 'use-lite,ctx-use-256,static-use-256').split(',');
const modelDir = resolve(option('--model-dir', join(root, '..', 'shared', 'models')));
const cacheDir = join(root, 'node_modules', '.cache', 'engram-tune');
mkdirSync(cacheDir, { recursive: true });

/** A candidate in one list: its key (first memory id), every memory id it answers for, and the list's score. */
export interface ListEntry {
  key: string;
  ids: string[];
  score: number;
}
/** What fusion and the abstain rule can know about one dev query, collected from the real engine. */
export interface QuerySignals {
  q: string;
  relevant: string[];
  group?: string;
  kind?: string;
  /** Each query term and its IDF in the query's store (the abstain rule's weights). */
  terms: Array<{ term: string; weight: number }>;
  /** BM25's ranking, best first (every memory with a score). */
  bm25: ListEntry[];
  /** Every memory by cosine similarity to the query, nearest first (no similarity floor applied). */
  vector: ListEntry[];
  /** For the union of both lists' top 50: similarity to the vectors of BM25's first three hits. */
  anchor: Record<string, number[]>;
  /** For the same union: the share of the query's weight its terms hold. */
  coverage: Record<string, number>;
}

function choiceOf(name: string): EmbedderChoice {
  if (name === 'use-lite') return { spec: { kind: 'use-lite', model: 'use-lite' }, reason: 'tune' };
  return { spec: { kind: 'transformers', model: name, modelDir, folder: join(modelDir, name), quantized: true }, reason: 'tune' };
}

const cosine = (a: Float32Array, b: Float32Array): number => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
};

/** Each dev query's signals, from the real search engine (cached per set and embedder). */
export async function collect(set: EvalSetName, embedder: string): Promise<QuerySignals[]> {
  const cache = join(cacheDir, `signals-${embedder}-${set}.json`);
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')) as QuerySignals[];
  // Every memory's score, not just the top of each list, and no similarity floor: settings that look up a signal
  // for the other list's candidates, or move the floor, can be scored too. (The sets hold at most a few hundred.)
  const tuning = TUNING as unknown as { pool: number; vectorFloor: Record<string, number> };
  const saved = { pool: tuning.pool, floor: { ...tuning.vectorFloor } };
  tuning.pool = 1_000;
  for (const kind of Object.keys(tuning.vectorFloor)) tuning.vectorFloor[kind] = -1;
  const files = evalSetFiles(root, set, 'dev');
  const byQuery = new Map<string, QuerySignals>();
  let store: Store | undefined;
  let model: Embedder | null = null;
  const keyOf = new Map<number, string>();
  const termsOf = new Map<string, Set<string>>();
  try {
    await runRetrievalBench({
      memories: readFileSync(files.memories, 'utf8').split('\n'),
      storePerGroup: files.storePerGroup,
      queries: readFileSync(tuningQueryFile(root, set), 'utf8').split('\n'),
      k: 1_000,
      modes: ['bm25', 'vector'],
      embedder: choiceOf(embedder),
      tuning: searchTuning(loadSettings(readEnv()).config),
      search: { abstain: false, explain: true },
      onStore(opened, loaded) {
        store = opened;
        model = loaded;
        keyOf.clear();
      },
      inspect(query, response, memoryIdsOf, mode) {
        const entry: QuerySignals = byQuery.get(query.q) ?? {
          q: query.q,
          relevant: query.relevant,
          ...(query.group ? { group: query.group } : {}),
          ...(query.kind ? { kind: query.kind } : {}),
          terms: [],
          bm25: [],
          vector: [],
          anchor: {},
          coverage: {},
        };
        byQuery.set(query.q, entry);
        const list = response.results.map((hit) => {
          const ids = [...memoryIdsOf(hit.id)];
          const key = ids[0] as string;
          keyOf.set(hit.id, key);
          if (!termsOf.has(key)) {
            const e = hit.engram;
            termsOf.set(key, new Set(searchTerms(`${e.title ?? ''} ${e.text} ${e.category} ${e.tags.join(' ')}`)));
          }
          return { key, ids, score: (mode === 'bm25' ? hit.signals.bm25 : hit.signals.vector) ?? 0, engram: hit.id };
        });
        if (mode === 'bm25') {
          entry.terms = response.explain?.abstain.terms ?? [];
          entry.bm25 = list.map(({ key, ids, score }) => ({ key, ids, score }));
          return;
        }
        entry.vector = list.map(({ key, ids, score }) => ({ key, ids, score }));
        // Both lists are in: anchor similarities and coverage for the union of their top 50s.
        const engramOf = new Map(list.map((item) => [item.key, item.engram]));
        const union = [...new Set([...entry.bm25.slice(0, 50), ...entry.vector.slice(0, 50)].map((e) => e.key))];
        const total = entry.terms.reduce((sum, t) => sum + t.weight, 0);
        for (const key of union) {
          const held = termsOf.get(key) ?? new Set<string>();
          entry.coverage[key] = total > 0 ? entry.terms.filter((t) => held.has(t.term)).reduce((sum, t) => sum + t.weight, 0) / total : 0;
        }
        const active = model as Embedder | null;
        const space = active && store ? store.vectors().findSpace(active.model, active.dim) : undefined;
        if (!space || !store) return;
        const vectors = store.vectors();
        const anchors = entry.bm25.slice(0, 3).map((e) => vectors.vectorOf(space, engramOf.get(e.key) as number));
        for (const key of union) {
          const vector = vectors.vectorOf(space, engramOf.get(key) as number);
          entry.anchor[key] = anchors.map((a) => (a && vector ? Math.round(cosine(a, vector) * 1e4) / 1e4 : 0));
        }
      },
    });
  } finally {
    tuning.pool = saved.pool;
    Object.assign(tuning.vectorFloor, saved.floor);
  }
  const lists = [...byQuery.values()];
  writeFileSync(cache, JSON.stringify(lists));
  return lists;
}

if (!args.includes('--no-run')) {
  for (const embedder of embedders) {
    for (const set of sets) {
      const started = performance.now();
      const signals = await collect(set, embedder);
      console.error(`${embedder} ${set}: ${signals.length} dev queries (${Math.round(performance.now() - started)} ms)`);
    }
  }
  console.log(`dev signals in ${cacheDir}`);
}
