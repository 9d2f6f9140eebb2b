import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import {
  EngramError,
  findRepo,
  normalizeCategory,
  normalizeTags,
  DEFAULT_MODEL,
  hubReachable,
  pullModel,
  readPulledModels,
  resolveEmbedder,
  USE_LITE_DIM,
} from '../../core/index.js';
import {
  currentOs,
  modelStatus,
  rebuildBm25Snapshot,
  reindexVectors,
  runRetrievalBench,
  EVAL_SET_NAMES,
  evalSetFiles,
  SEARCH_MODES,
  searchTuning,
  type SearchMode,
  type SearchResponse,
  type RetrievalReport,
  type EvalSetName,
  type EvalSplit,
} from '../../services/index.js';
import { integerOption, numberOption, parseStatuses, readInputFile } from '../_args.js';
import { withBulkEmbedder } from '../bulk-embed.js';
import { progressBar } from '../progress.js';
import type { Action } from '../action.js';


const round2 = (value: number): number => Math.round(value * 100) / 100;

function renderExplain(response: SearchResponse): string[] {
  const explain = response.explain;
  if (!explain) return [];
  const { fusion, abstain } = explain;
  const terms = abstain.terms.map((t) => `${t.term} ${t.weight.toFixed(2)}`).join(', ');
  return [
    '',
    `fusion: RRF k ${fusion.k}; weights bm25 ${fusion.weights.bm25}, vector ${round2(fusion.weights.vector)}, anchor ${round2(fusion.weights.anchor)}; list sizes bm25 ${fusion.lists.bm25}, vector ${fusion.lists.vector}, anchor ${fusion.lists.anchor}`,
    ...(fusion.reliability
      ? [
          fusion.reliability.fixed
            ? 'vector weight: fixed by config (search.vector_weight)'
            : `vector weight: from this store's vector reliability ${fusion.reliability.estimate} (how high the vector list ranks BM25's best hit, over ${fusion.reliability.searches} searches incl. the prior)${
                fusion.reliability.judged
                  ? `; judged injections: vector-led ${fusion.reliability.judged.vector.useful}/${fusion.reliability.judged.vector.judged} useful, BM25-led ${fusion.reliability.judged.bm25.useful}/${fusion.reliability.judged.bm25.judged}${fusion.reliability.judged.factor === null ? ' (too few to count yet)' : ` → × ${fusion.reliability.judged.factor}`}`
                  : ''
              }`,
        ]
      : []),
    ...(fusion.confident
      ? [
          `kept in place: ${fusion.confident.head} BM25 hit(s) and ${fusion.confident.vector} vector hit(s), ${fusion.confident.agreed} promoted by agreement, ${fusion.confident.context} from the best hits' sessions (${fusion.confident.rule}); the top k is ordered with vector weight ${round2(fusion.ordering ?? fusion.weights.vector)}`,
        ]
      : []),
    `query terms (weight = IDF in this store): ${terms || '—'}`,
    `words no memory holds: ${abstain.unknown.terms.join(', ') || 'none'} (${Math.round(abstain.unknown.share * 100)} % of the weight)`,
    abstain.best
      ? `best coverage: #${abstain.best.id} holds ${abstain.best.matched.join(', ') || 'none'} = ${Math.round(abstain.best.coverage * 100)} % of the weight of the words the store holds${abstain.best.agreed ? ', and both lists put it in their top 3' : ''}`
      : 'best coverage: no result',
    `abstain rule: ${abstain.rule}`,
    `verdict: ${abstain.weak ? `silent: ${abstain.weak}` : 'answer'}`,
  ];
}

function renderSearch(response: SearchResponse): string {
  if (response.abstained === 'empty' || response.abstained === 'no-content') {
    return `nothing searched: the query has no content words (${response.abstained})`;
  }
  if (response.abstained === 'weak-match') {
    return [`No confident match: ${response.weak} (--no-abstain shows the nearest anyway).`, ...renderExplain(response)].join('\n');
  }
  const lines = response.results.map((hit) => {
    const ranks = `bm25 ${hit.ranks.bm25 ?? '–'} · vector ${hit.ranks.vector ?? '–'}${hit.ranks.anchor ? ` · anchor ${hit.ranks.anchor}` : ''}`;
    const state = hit.engram.status === 'active' ? '' : ` (${hit.engram.status})`;
    return `#${hit.id}  ${hit.score.toFixed(3)}  (${ranks})  [${hit.engram.category}]${state} ${hit.engram.text}`;
  });
  const footer = [
    `${response.results.length} result(s), ${response.mode}${response.model ? ` with ${response.model}` : ''}, ${response.timings.total_ms} ms`,
    response.weak ? `note: weak match, shown because of --no-abstain: ${response.weak}` : '',
    response.degraded ? `note: ${response.degraded}` : '',
  ].filter(Boolean);
  return [...(lines.length ? lines : ['No results.']), '', ...footer, ...renderExplain(response)].join('\n');
}

function renderBench(reports: RetrievalReport[]): string {
  const header = 'mode     recall@k  hit@k   mrr     n    p50 ms  p95 ms  model';
  const rows = reports.map(
    (r) =>
      `${r.mode.padEnd(8)} ${r['recall@k'].toFixed(3).padStart(8)}  ${r['hit@k'].toFixed(3)}  ${r.mrr.toFixed(3)}  ${String(r.n).padStart(4)}  ${r.p50_ms.toFixed(1).padStart(6)}  ${r.p95_ms.toFixed(1).padStart(6)}  ${r.model ?? '—'}`,
  );
  const kinds = reports.flatMap((r) =>
    Object.entries(r.by_kind).map(
      ([kind, s]) => `  ${r.mode.padEnd(8)} ${kind.padEnd(12)} recall@k ${s['recall@k'].toFixed(3)}  mrr ${s.mrr.toFixed(3)}  n ${s.n}`,
    ),
  );
  const notes = reports.filter((r) => r.degraded).map((r) => `note (${r.mode}): ${r.degraded}`);
  return [header, ...rows, ...(kinds.length ? ['', 'by kind:', ...kinds] : []), ...notes].join('\n');
}

/** search, reindex, model, bench. */
export function registerSearchCommands(program: Command, action: Action): void {
  program
    .command('search')
    .description('find engrams by meaning and keywords (hybrid BM25 + vectors)')
    .argument('<query>', 'what to look for')
    .option('-k, --top-k <n>', 'how many results (1–100)', integerOption('--top-k', 1))
    .addOption(new Option('--mode <mode>', 'which signals to use').choices([...SEARCH_MODES]).default('hybrid'))
    .option('--category <path>', 'only this category and below')
    .option('--tags <list>', 'only engrams with all of these tags')
    .option('--project <name>', "search as if working in this project: its engrams plus personal ones")
    .option('--env-tags <list>', 'environment tags for tag-relevance adjustment')
    .option('--explain', 'say how the results were fused and why the search answered or stayed silent')
    .option('--no-abstain', 'return the nearest results even when the abstain rule finds them weak')
    .option('--status <list>', 'review states to find (default active): pending, active, rejected, deprecated or all')
    .action(
      action(
        async (
          context,
          query: string,
          flags: {
            topK?: number;
            mode: SearchMode;
            category?: string;
            tags?: string;
            project?: string;
            envTags?: string;
            explain?: boolean;
            abstain: boolean;
            status?: string;
          },
        ) => {
          if (flags.topK !== undefined && flags.topK > 100) throw new EngramError('USAGE', '--top-k must be at most 100');
          const repo = findRepo(context.io.cwd);
          const env = context.env();
          const response = await context.searchEngine().search({
            query,
            mode: flags.mode,
            abstain: flags.abstain,
            explain: flags.explain ?? false,
            ...(flags.topK !== undefined ? { topK: flags.topK } : {}),
            ...(flags.category !== undefined ? { category: normalizeCategory(flags.category) } : {}),
            ...(flags.tags !== undefined ? { tags: normalizeTags(flags.tags) } : {}),
            ...(flags.project !== undefined ? { scope: { project: flags.project, includePersonal: true } } : {}),
            ...(flags.status !== undefined ? { statuses: parseStatuses(flags.status) } : {}),
            environment: {
              os: currentOs(),
              cwd: context.io.cwd,
              home: env.userHome,
              ...(repo ? { repo: repo.name } : {}),
              ...(flags.envTags !== undefined ? { tags: normalizeTags(flags.envTags) } : {}),
            },
          });
          return { result: response, pretty: () => renderSearch(response) };
        },
      ),
    );

  program
    .command('reindex')
    .description('rebuild the search indexes: embed engrams whose vectors are missing or stale, refresh the BM25 snapshot')
    .option('--all', 're-embed every engram, not only missing and stale ones')
    .action(
      action(async (context, flags: { all?: boolean }) => {
        const settings = context.settings();
        const store = context.store();
        const bm25 = rebuildBm25Snapshot(store, settings.paths.index);
        // What is left to embed, known before loading a model: it decides whether a worker pool pays for itself.
        const space = store.vectors().findSpace('use-lite', USE_LITE_DIM);
        const texts = !flags.all && space ? store.vectors().countPending(space) : store.engrams.counts().active;
        const outcome = await withBulkEmbedder(context, texts, async (bulk) => {
          const { embedder, reason } = await bulk.load();
          if (!embedder) return { vectors: null, reason };
          const bar = progressBar(context.io, 'embedding');
          const report = await reindexVectors(store, embedder, {
            all: flags.all ?? false,
            ...(bulk.batchSize ? { batchSize: bulk.batchSize } : {}),
            onProgress: (done, total) => bar.update(done, total),
            now: context.io.now,
          }).finally(() => bar.stop());
          return { vectors: { ...report, workers: bulk.workers() }, reason };
        });
        if (!outcome.vectors) {
          const result = { bm25, vectors: null, note: `vectors not rebuilt: ${outcome.reason}` };
          return { result, pretty: () => `BM25 index: ${bm25.docs} engrams (${bm25.ms} ms)\n${result.note}` };
        }
        const vectors = outcome.vectors;
        const result = { bm25, vectors, note: null };
        return {
          result,
          pretty: () =>
            `BM25 index: ${bm25.docs} engrams (${bm25.ms} ms)\nvectors (${vectors.model}, ${vectors.dim}-d): embedded ${vectors.embedded}, pruned ${vectors.pruned}, still missing ${vectors.remaining}`,
        };
      }),
    );

  const model = program.command('model').description('embedding models: which is in use, and fetching one');
  model
    .command('status')
    .description('the embedder in use and why, pulled models, and vector coverage in the store')
    .action(
      action((context) => {
        const result = modelStatus(context.store(), context.settings());
        return {
          result,
          pretty: () =>
            [
              `embedder: ${result.embedder ? `${result.embedder.kind} ${result.embedder.model}` : 'none (BM25 only)'} — ${result.reason}`,
              `pulled: ${result.pulled.models.map((m) => `${m.id}${m.id === result.pulled.default ? ' (default)' : ''}`).join(', ') || '—'}`,
              ...result.vector_spaces.map((s) => `vectors: ${s.model} ${s.dim}-d: ${s.vectors} stored, ${s.pending} missing or stale`),
              result.vector_error ? `vector search unavailable: ${result.vector_error}` : '',
            ]
              .filter(Boolean)
              .join('\n'),
        };
      }),
    );
  model
    .command('pull')
    .description(`download an embedding model from Hugging Face (the only command that downloads; default ${DEFAULT_MODEL.id}, checksum-verified)`)
    .argument('[id]', 'model id', DEFAULT_MODEL.id)
    .option('--no-default', 'do not make it the default model')
    .option('--quiet', 'no progress bar')
    .option('--if-reachable', 'for installers: when the hub cannot be reached or the pull fails, say so in one line and exit 0 (search keeps its current model)')
    .option('--timeout <seconds>', 'give up after this long (default 600)', integerOption('--timeout', 1))
    .action(
      action(async (context, id: string, flags: { default: boolean; quiet?: boolean; ifReachable?: boolean; timeout?: number }) => {
        const settings = context.settings();
        const endpoint = settings.env.hfEndpoint ?? 'https://huggingface.co/';
        const proxy = settings.env.proxy;
        const current = resolveEmbedder(settings);
        const fallback = current.spec ? `${current.spec.model}` : 'BM25 only';
        const skip = (why: string) => {
          context.io.stderr.write(`engram: ${why}\n`);
          return { result: { id, pulled: false, reason: why }, pretty: () => '' };
        };
        if (flags.ifReachable) {
          // Installers call this on every run: do nothing when the user chose otherwise or the model is already here.
          if (settings.env.modelPull === 'off') return skip('model pull skipped (ENGRAM_MODEL_PULL=off)');
          if (settings.config.embed.provider !== 'auto' || settings.config.embed.model) {
            return skip(`model pull skipped: embeddings are configured (${current.reason})`);
          }
          if (readPulledModels(settings.paths.models).default === id && current.spec?.kind === 'transformers' && current.spec.model === id) {
            return skip(`embedding model ${id} is already installed`);
          }
          const reach = await hubReachable({ id, endpoint, proxy, timeoutMs: 5_000 });
          if (!reach.ok) return skip(`the model hub ${endpoint} is not reachable (${reach.reason}); search keeps using ${fallback} (run 'engram model pull' later)`);
        }
        if (!flags.quiet) context.io.stderr.write(`engram: downloading ${id} from ${endpoint} into ${settings.paths.models}\n`);
        const bar = flags.quiet ? { update: () => {}, stop: () => {} } : progressBar(context.io, id);
        let result;
        try {
          result = await pullModel({
            id,
            modelsDir: settings.paths.models,
            endpoint,
            proxy,
            makeDefault: flags.default,
            now: context.io.now,
            ...(flags.timeout ? { timeoutMs: flags.timeout * 1000 } : {}),
            onProgress: (done, total) => bar.update(done, total),
          });
        } catch (error) {
          if (!flags.ifReachable) throw error;
          return skip(`${(error as Error).message}; search keeps using ${fallback}`);
        } finally {
          bar.stop();
        }
        const after = result.default
          ? 'it is now the default model: the background server re-embeds existing engrams with it and searches with the old vectors until that finishes (progress: engram status)'
          : '';
        if (flags.quiet && result.default) context.io.stderr.write(`engram: pulled ${result.id}; ${after}\n`);
        return {
          result: { ...result, pulled: true },
          pretty: () =>
            `pulled ${result.id}@${result.revision.slice(0, 12)} (${result.dim}-d${result.quantized ? ', int8' : ''}, ${(result.bytes / 1e6).toFixed(1)} MB, ${result.verified.length} file(s) checksum-verified${result.unverified.length ? `, ${result.unverified.length} without a published checksum` : ''}) into ${result.folder}${after ? `\n${after}` : ''}`,
        };
      }),
    );

  const bench = program.command('bench').description('measure Engram on your own data');
  bench
    .command('retrieval')
    .description('retrieval quality on a labelled set, in a throwaway store (one JSON line per mode)')
    .option('--memories <file>', 'JSONL: {"id","text","group"?,"session"?,"category"?,"tags"?} (session: stored as session_id, in file order)')
    .option('--queries <file>', 'JSONL: {"q","relevant":[ids],"group"?,"kind"?}')
    .addOption(new Option('--set <name>', 'a labelled set shipped with Engram instead of files (docs/SEARCH.md)').choices([...EVAL_SET_NAMES]))
    .addOption(new Option('--split <split>', 'which queries of --set: dev (tuning) or test (held out, for reporting)').choices(['dev', 'test']).default('test'))
    .option('--store-per-group', 'each group of --memories is its own store (as --set dialogue does)')
    .option('--warm-up <file>', "JSONL queries searched first in each mode and scored nowhere (default with --set and --split test: the set's dev queries, as docs/SEARCH.md's tables ran)")
    .option('--k <n>', 'cut-off for recall@k, hit@k and mrr (1–100)', integerOption('--k', 1), 10)
    .addOption(new Option('--mode <mode>', 'which signals').choices([...SEARCH_MODES, 'all']).default('all'))
    .option('--rrf-k <n>', 'override the RRF constant', numberOption('--rrf-k', 1, 1000))
    .option('--bm25-weight <w>', 'override the BM25 fusion weight', numberOption('--bm25-weight', 0, 10))
    .option('--vector-weight <w>', 'override the vector fusion weight', numberOption('--vector-weight', 0, 10))
    .action(
      action(
        async (
          context,
          flags: {
            memories?: string;
            queries?: string;
            set?: EvalSetName;
            split: EvalSplit;
            storePerGroup?: boolean;
            warmUp?: string;
            k: number;
            mode: SearchMode | 'all';
            rrfK?: number;
            bm25Weight?: number;
            vectorWeight?: number;
          },
        ) => {
          if (flags.k > 100) throw new EngramError('USAGE', '--k must be at most 100');
          if (flags.set && (flags.memories || flags.queries)) throw new EngramError('USAGE', 'give either --set or --memories and --queries');
          if (!flags.set && !(flags.memories && flags.queries)) throw new EngramError('USAGE', 'give --set NAME, or both --memories and --queries');
          const files = flags.set
            ? evalSetFiles(context.installRoot, flags.set, flags.split)
            : {
                memories: resolve(context.io.cwd, flags.memories as string),
                queries: resolve(context.io.cwd, flags.queries as string),
                storePerGroup: flags.storePerGroup === true,
              };
          // The engine's state moves with its searches (the store's vector reliability): a held-out split is searched
          // after the dev queries, as the tables in docs/SEARCH.md were, so the command reproduces them.
          const warmUpFile = flags.warmUp
            ? resolve(context.io.cwd, flags.warmUp)
            : flags.set && flags.split === 'test'
              ? evalSetFiles(context.installRoot, flags.set, 'dev').queries
              : null;
          const settings = context.settings();
          const tuning = searchTuning(settings.config);
          if (flags.rrfK !== undefined) tuning.rrfK = flags.rrfK;
          if (flags.bm25Weight !== undefined) tuning.weights.bm25 = flags.bm25Weight;
          if (flags.vectorWeight !== undefined) tuning.weights.vector = flags.vectorWeight;
          const bar = progressBar(context.io, 'embedding memories');
          const reports = await runRetrievalBench({
            memories: readInputFile(context.io.cwd, files.memories).split('\n'),
            queries: readInputFile(context.io.cwd, files.queries).split('\n'),
            storePerGroup: files.storePerGroup,
            ...(warmUpFile ? { warmUp: readInputFile(context.io.cwd, warmUpFile).split('\n') } : {}),
            k: flags.k,
            modes: flags.mode === 'all' ? ['bm25', 'vector', 'hybrid'] : [flags.mode],
            embedder: resolveEmbedder(settings),
            tuning,
            batchSize: settings.config.embed.batch_size,
            onProgress: (stage, done, total) => {
              if (stage === 'embed') bar.update(done, total);
            },
          }).finally(() => bar.stop());
          if (!program.opts<{ pretty?: boolean }>().pretty) {
            for (const report of reports) context.io.stdout.write(`${JSON.stringify(report)}\n`);
            return { result: undefined, pretty: () => '' };
          }
          return { result: reports, pretty: () => renderBench(reports) };
        },
      ),
    );
}
