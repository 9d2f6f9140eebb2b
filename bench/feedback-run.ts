// Round 4–7 tuning on the DEV splits only (refused otherwise: services/recall tuningQueryFile): loads each set's
// stores once per embedder, embeds once, then runs the real engine's hybrid search once per variant (tuning.ts
// `feedback`, `agreement`, `context`, `pair`, `coverage`), each in a fresh engine so the store's vector reliability starts from its prior as in bench/quality.mjs.
// Prints, per variant, each set × embedder cell's hybrid recall@10 minus the best single signal, and the MRR change
// against `off` (hybrid before round 5). bench/feedback.mjs bundles and runs it.
import { createHash } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddingText, loadEmbedder, loadSettings, openStore, readEnv, type Embedder, type EmbedderChoice } from '../src/core/index.js';
import { prepareDraft, storeDraft } from '../src/services/memory/index.js';
import { scoreRanking, type BenchMemory, type BenchQuery } from '../src/services/recall/index.js';
import {
  BenchMemorySchema,
  BenchQuerySchema,
  createSearchEngine,
  embedPending,
  evalSetFiles,
  searchTuning,
  TUNING,
  tuningQueryFile,
  type SearchMode,
} from '../src/services/index.js';
import { tuningOptions } from './_tuning-options.js';

const { args, option, root, split, sets, embedders, modelDir } = tuningOptions();
const K = 10;
const dumpFile = option('--dump', '');


type Mutable<T> = { -readonly [key in keyof T]: T[key] extends boolean ? boolean : T[key] extends number ? number : T[key] };
type FeedbackSettings = Mutable<typeof TUNING.feedback>;
type AgreementSettings = Mutable<typeof TUNING.agreement>;
type ContextSettings = Mutable<typeof TUNING.context>;
interface Variant {
  feedback?: Partial<FeedbackSettings>;
  agreement?: Partial<AgreementSettings>;
  context?: Partial<ContextSettings>;
  pair?: Partial<PairSettings>;
  coverage?: Partial<CoverageSettings>;
  neighbour?: Partial<NeighbourSettings>;
}
type CoverageSettings = Mutable<typeof TUNING.coverage>;
type NeighbourSettings = Mutable<typeof TUNING.neighbour>;
type PairSettings = Mutable<typeof TUNING.pair>;
const shipped = {
  feedback: { ...TUNING.feedback } as FeedbackSettings,
  agreement: { ...TUNING.agreement } as AgreementSettings,
  context: { ...TUNING.context } as ContextSettings,
  pair: { ...TUNING.pair } as PairSettings,
  coverage: { ...TUNING.coverage } as CoverageSettings,
  neighbour: { ...TUNING.neighbour } as NeighbourSettings,
};
/** `off`: hybrid as main had it before round 5 (round 4's feedback and agreement; no context, no pair rule); `round3`: neither. */
const off: Variant = { context: { enabled: false }, pair: { places: 0 }, coverage: { places: 0 }, neighbour: { places: 0 } };
const round3: Variant = { feedback: { enabled: false }, agreement: { places: 0 }, context: { enabled: false }, pair: { places: 0 }, coverage: { places: 0 }, neighbour: { places: 0 } };

/** The variants, by name: overrides of tuning.ts `feedback` and `agreement`. */
const ALL: Record<string, Variant> = JSON.parse(option('--variants-json', 'null')) ?? {
  off,
  round3,
  'shipped (tuning.ts)': {},
  'one place': { agreement: { places: 1 } },
  'three places': { agreement: { places: 3 } },
  'weaker than 0.4': { agreement: { weakerThan: 0.4 } },
  'weaker than 0.6': { agreement: { weakerThan: 0.6 } },
  'any weak place (no coverage test)': { agreement: { weakerThan: 99 } },
  'two votes (candidate 1)': { agreement: { votes: 2 } },
  'two votes without the feedback list': { agreement: { votes: 2 }, feedback: { enabled: false } },
  'BM25 depth 15': { agreement: { bm25Depth: 15 } },
  'BM25 depth 30': { agreement: { bm25Depth: 30 } },
  'list depth 5': { agreement: { listDepth: 5 } },
  'list depth 15': { agreement: { listDepth: 15 } },
  'feedback: 10 terms of weight 0.5': { feedback: { terms: 10, expansion: 0.5 } },
  'feedback: agreed within 3 (2 hits)': { feedback: { depth: 3, docs: 2 } },
  'feedback: agreed within 10 (5 hits)': { feedback: { depth: 10, docs: 5 } },
  'feedback: expansion words only': { feedback: { original: false } },
  'feedback: BM25 top hits (no agreement)': { feedback: { agree: false } },
};
const chosen = option('--variants', Object.keys(ALL).join(',')).split(',');
if (!chosen.includes('off')) chosen.unshift('off');
const apply = (variant: Variant): void => {
  writable.feedback = { ...shipped.feedback, ...(variant.feedback ?? {}) };
  writable.agreement = { ...shipped.agreement, ...(variant.agreement ?? {}) };
  writable.context = { ...shipped.context, ...(variant.context ?? {}) };
  writable.pair = { ...shipped.pair, ...(variant.pair ?? {}) };
  writable.coverage = { ...shipped.coverage, ...(variant.coverage ?? {}) };
  writable.neighbour = { ...shipped.neighbour, ...(variant.neighbour ?? {}) };
};

function choiceOf(name: string): EmbedderChoice {
  if (name === 'use-lite') return { spec: { kind: 'use-lite', model: 'use-lite' }, reason: 'tune' };
  return { spec: { kind: 'transformers', model: name, modelDir, folder: join(modelDir, name), quantized: true }, reason: 'tune' };
}

const parse = <T>(file: string, schema: { parse(value: unknown): T }): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => schema.parse(JSON.parse(line)));

interface Judged {
  recall: number;
  rr: number;
}
const tallies = new Map<string, Judged[]>();
const tally = (key: string, judged: Judged): void => {
  tallies.set(key, [...(tallies.get(key) ?? []), judged]);
};

const tuning = searchTuning(loadSettings(readEnv()).config);
const writable = TUNING as unknown as { feedback: FeedbackSettings; agreement: AgreementSettings; context: ContextSettings; pair: PairSettings; coverage: CoverageSettings; neighbour: NeighbourSettings };

for (const embedderName of embedders) {
  let model: Embedder | null = null;
  for (const set of sets) {
    const files = evalSetFiles(root, set, 'dev');
    // `--one-session file|shuffled`: memories without a session are stored as one named session (not the Go engram's default
    // `manual-save-<project>`), in file order or a fixed shuffle — what the context step does in a store of lessons.
    const oneSession = option('--one-session', '');
    const hash = (text: string): string => createHash('sha256').update(text).digest('hex');
    const loaded = parse<BenchMemory>(files.memories, BenchMemorySchema);
    // `--shuffle`: every set's memories stored in a fixed random order (sessions kept): a control, so a session's
    // neighbours by id are arbitrary turns of it.
    if (args.includes('--shuffle')) loaded.sort((a, b) => (hash(a.id) < hash(b.id) ? -1 : 1));
    const memories = !oneSession
      ? loaded
      : (oneSession === 'shuffled' && loaded.every((m) => !m.session) ? [...loaded].sort((a, b) => (hash(a.id) < hash(b.id) ? -1 : 1)) : loaded).map((m) => (m.session ? m : { ...m, session: 'one-session' }));
    const queries = parse<BenchQuery>(tuningQueryFile(root, set, split), BenchQuerySchema);
    const stores: Array<{ memories: BenchMemory[]; queries: BenchQuery[] }> = files.storePerGroup
      ? [...new Set(memories.map((m) => m.group as string))].sort().map((group) => ({ memories: memories.filter((m) => m.group === group), queries: queries.filter((q) => q.group === group) }))
      : [{ memories, queries }];
    const started = performance.now();
    for (const part of stores) {
      const dir = mkdtempSync(join(tmpdir(), 'engram-feedback-'));
      const store = openStore({ path: join(dir, 'bench.db') });
      try {
        const memoryIdsOf = new Map<number, string[]>();
        const at = new Date().toISOString();
        store.write(() => {
          for (const memory of part.memories) {
            const draft = prepareDraft({ text: memory.text, category: memory.category, tags: memory.tags, project: memory.group, scope: memory.group ? 'project' : 'personal', source: 'import' });
            let { engram } = storeDraft(store, draft, at, 'skip');
            if (memory.session && engram.session_id == null) engram = store.engrams.update(engram.id, { session_id: memory.session });
            if (engram.status === 'pending') engram = store.engrams.update(engram.id, { status: 'active', status_reason: null });
            memoryIdsOf.set(engram.id, [...(memoryIdsOf.get(engram.id) ?? []), memory.id]);
          }
        });
        model ??= await loadEmbedder(choiceOf(embedderName).spec as NonNullable<EmbedderChoice['spec']>, () => {});
        const loaded = model as Embedder;
        await embedPending(store, loaded, {});
        const vectors = new Map<string, Float32Array>();
        for (const query of part.queries) {
          const [vector] = await loaded.embed([embeddingText(query.q.slice(0, TUNING.queryChars))]);
          if (vector) vectors.set(query.q, vector);
        }
        const run = async (mode: SearchMode, label: string): Promise<void> => {
          const engine = createSearchEngine(store, { embedder: null, loadedEmbedder: loaded, tuning });
          for (const query of part.queries) {
            const vector = vectors.get(query.q);
            const response = await engine.search({
              abstain: false,
              query: query.q,
              mode,
              topK: K,
              ...(vector ? { queryVector: vector } : {}),
              ...(query.group && !files.storePerGroup ? { scope: { project: query.group, includePersonal: false } } : {}),
            });
            if (query.relevant.length === 0) continue;
            tally(`${embedderName}|${set}|${label}`, scoreRanking(response.results, query.relevant, (id) => memoryIdsOf.get(id) ?? []));
          }
        };
        // `--dump FILE`: per dev query, BM25's and the vector list's top 50 and each variant's top 10 with ranks (and the
        // memory ids of each engram), one JSON line per query and cell, to study what hybrid drops (round 6).
        if (dumpFile) {
          const engine = createSearchEngine(store, { embedder: null, loadedEmbedder: loaded, tuning });
          // One engine per variant across the queries, as `run` has: the store's vector reliability evolves the same way.
          const hybridEngines = new Map(chosen.map((name) => [name, createSearchEngine(store, { embedder: null, loadedEmbedder: loaded, tuning })]));
          const ofIds = (results: ReadonlyArray<{ id: number }>): Array<[number, string[]]> => results.map((hit) => [hit.id, memoryIdsOf.get(hit.id) ?? []]);
          for (const query of part.queries) {
            if (query.relevant.length === 0) continue;
            const vector = vectors.get(query.q);
            const base = { abstain: false, query: query.q, topK: 50, ...(vector ? { queryVector: vector } : {}), ...(query.group && !files.storePerGroup ? { scope: { project: query.group, includePersonal: false } } : {}) };
            apply(off);
            const bm25 = await engine.search({ ...base, mode: 'bm25' });
            const vec = await engine.search({ ...base, mode: 'vector' });
            const hybrids: Record<string, unknown> = {};
            for (const name of chosen) {
              apply(name === 'off' ? off : (ALL[name] ?? {}));
              const hybrid = await (hybridEngines.get(name) as ReturnType<typeof createSearchEngine>).search({ ...base, topK: K, mode: 'hybrid', explain: true });
              hybrids[name] = hybrid.results.map((hit) => ({ id: hit.id, ranks: hit.ranks, m: memoryIdsOf.get(hit.id) ?? [] }));
            }
            // Every list's rank for the fused top 50 (the anchor list is read nowhere else; round 8).
            apply({});
            const wide = await engine.search({ ...base, mode: 'hybrid' });
            appendFileSync(dumpFile, `${JSON.stringify({ cell: `${set}/${embedderName}`, q: query.q, relevant: query.relevant, wide: wide.results.map((hit) => [hit.id, hit.ranks]), bm25: ofIds(bm25.results), vector: vec.results.map((hit) => [hit.id, memoryIdsOf.get(hit.id) ?? [], hit.signals.vector]), hybrid: hybrids })}\n`);
          }
        }
        apply(off);
        await run('bm25', 'bm25');
        await run('vector', 'vector');
        for (const name of chosen) {
          apply(name === 'off' ? off : (ALL[name] ?? {}));
          await run('hybrid', name);
        }
      } finally {
        apply({});
        store.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }
    console.error(`${embedderName} ${set}: ${Math.round(performance.now() - started)} ms`);
  }
}

const mean = (key: string, pick: (j: Judged) => number): number => {
  const list = tallies.get(key) ?? [];
  return list.reduce((sum, j) => sum + pick(j), 0) / Math.max(1, list.length);
};
const f3 = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(4)}`;
console.log('feedback variants on the dev splits: hybrid recall@10 − best single signal (MRR − main before round 5, `off`); worst, mean, cells ≥ +0.01');
for (const name of chosen) {
  const cells: Array<{ cell: string; margin: number; mrr: number }> = [];
  for (const embedderName of embedders) {
    for (const set of sets) {
      const key = (label: string): string => `${embedderName}|${set}|${label}`;
      const best = Math.max(mean(key('bm25'), (j) => j.recall), mean(key('vector'), (j) => j.recall));
      cells.push({ cell: `${set}/${embedderName}`, margin: mean(key(name), (j) => j.recall) - best, mrr: mean(key(name), (j) => j.rr) - mean(key('off'), (j) => j.rr) });
    }
  }
  const worst = Math.min(...cells.map((c) => c.margin));
  const avg = cells.reduce((sum, c) => sum + c.margin, 0) / cells.length;
  const wins = cells.filter((c) => c.margin >= 0.01 - 1e-9).length;
  console.log(`${name.padEnd(28)} worst ${f3(worst)} mean ${f3(avg)} wins ${wins}/${cells.length} | ${cells.map((c) => `${c.cell} ${f3(c.margin)} (${f3(c.mrr)})`).join(', ')}`);
}
if (args.includes('--singles')) {
  for (const embedderName of embedders) for (const set of sets) console.log(`${set}/${embedderName}: bm25 ${mean(`${embedderName}|${set}|bm25`, (j) => j.recall).toFixed(3)} vector ${mean(`${embedderName}|${set}|vector`, (j) => j.recall).toFixed(3)} off ${mean(`${embedderName}|${set}|off`, (j) => j.recall).toFixed(3)}`);
}

