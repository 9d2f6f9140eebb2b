import { Option, type Command } from 'commander';
import {
  EngramError,
  findRepo,
  normalizeCategory,
  normalizeTags,
  pullModel,
  resolveEmbedder,
} from '../../core/index.js';
import {
  currentOs,
  modelStatus,
  rebuildBm25Snapshot,
  reindexVectors,
  runRetrievalBench,
  SEARCH_MODES,
  searchTuning,
  type SearchMode,
  type SearchResponse,
  type RetrievalReport,
} from '../../services/index.js';
import { integerOption, numberOption, parseStatuses, readInputFile } from '../_args.js';
import { progressBar } from '../progress.js';
import type { Action } from '../program.js';

/** The default hub model for `engram model pull`: small (23 MB int8), 384-d, good on short technical text. */
const DEFAULT_HUB_MODEL = 'Xenova/all-MiniLM-L6-v2';

function renderSearch(response: SearchResponse): string {
  if (response.abstained) return `nothing searched: the query has no content words (${response.abstained})`;
  const lines = response.results.map((hit) => {
    const ranks = `bm25 ${hit.ranks.bm25 ?? '–'} · vector ${hit.ranks.vector ?? '–'}`;
    const state = hit.engram.status === 'active' ? '' : ` (${hit.engram.status})`;
    return `#${hit.id}  ${hit.score.toFixed(3)}  (${ranks})  [${hit.engram.category}]${state} ${hit.engram.text}`;
  });
  const footer = [
    `${response.results.length} result(s), ${response.mode}${response.model ? ` with ${response.model}` : ''}, ${response.timings.total_ms} ms`,
    response.degraded ? `note: ${response.degraded}` : '',
  ].filter(Boolean);
  return [...(lines.length ? lines : ['No results.']), '', ...footer].join('\n');
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
    .option('--status <list>', 'review states to find (default active): pending, active, rejected, deprecated or all')
    .action(
      action(
        async (
          context,
          query: string,
          flags: { topK?: number; mode: SearchMode; category?: string; tags?: string; project?: string; envTags?: string; status?: string },
        ) => {
          if (flags.topK !== undefined && flags.topK > 100) throw new EngramError('USAGE', '--top-k must be at most 100');
          const repo = findRepo(context.io.cwd);
          const env = context.env();
          const response = await context.searchEngine().search({
            query,
            mode: flags.mode,
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
        const { embedder, reason } = await context.searchEngine().embedder();
        if (!embedder) {
          const result = { bm25, vectors: null, note: `vectors not rebuilt: ${reason}` };
          return { result, pretty: () => `BM25 index: ${bm25.docs} engrams (${bm25.ms} ms)\n${result.note}` };
        }
        const bar = progressBar(context.io, 'embedding');
        const vectors = await reindexVectors(store, embedder, {
          all: flags.all ?? false,
          batchSize: settings.config.embed.batch_size,
          onProgress: (done, total) => bar.update(done, total),
          now: context.io.now,
        }).finally(() => bar.stop());
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
    .description(`download an embedding model from Hugging Face (the only command that downloads; default ${DEFAULT_HUB_MODEL})`)
    .argument('[id]', 'model id', DEFAULT_HUB_MODEL)
    .option('--no-default', 'do not make it the default model')
    .action(
      action(async (context, id: string, flags: { default: boolean }) => {
        const settings = context.settings();
        const endpoint = settings.env.hfEndpoint ?? 'https://huggingface.co/';
        context.io.stderr.write(`engram: downloading ${id} from ${endpoint} into ${settings.paths.models}\n`);
        const bar = progressBar(context.io, id);
        const bytes = new Map<string, { loaded: number; total: number }>();
        const result = await pullModel({
          id,
          modelsDir: settings.paths.models,
          endpoint,
          makeDefault: flags.default,
          now: context.io.now,
          onProgress: (event) => {
            if (event.status !== 'progress' || !event.file) return;
            bytes.set(event.file, { loaded: event.loaded ?? 0, total: event.total ?? 0 });
            const all = [...bytes.values()];
            bar.update(
              all.reduce((sum, b) => sum + b.loaded, 0),
              all.reduce((sum, b) => sum + b.total, 0),
            );
          },
        }).finally(() => bar.stop());
        return {
          result,
          pretty: () =>
            `pulled ${result.id} (${result.dim}-d${result.quantized ? ', int8' : ''}) into ${result.folder}${result.default ? '\nit is now the default model; run `engram reindex` to embed existing engrams' : ''}`,
        };
      }),
    );

  const bench = program.command('bench').description('measure Engram on your own data');
  bench
    .command('retrieval')
    .description('retrieval quality on a labelled set, in a throwaway store (one JSON line per mode)')
    .requiredOption('--memories <file>', 'JSONL: {"id","text","group"?,"category"?,"tags"?}')
    .requiredOption('--queries <file>', 'JSONL: {"q","relevant":[ids],"group"?,"kind"?}')
    .option('--k <n>', 'cut-off for recall@k, hit@k and mrr (1–100)', integerOption('--k', 1), 10)
    .addOption(new Option('--mode <mode>', 'which signals').choices([...SEARCH_MODES, 'all']).default('all'))
    .option('--rrf-k <n>', 'override the RRF constant', numberOption('--rrf-k', 1, 1000))
    .option('--bm25-weight <w>', 'override the BM25 fusion weight', numberOption('--bm25-weight', 0, 10))
    .option('--vector-weight <w>', 'override the vector fusion weight', numberOption('--vector-weight', 0, 10))
    .action(
      action(
        async (
          context,
          flags: { memories: string; queries: string; k: number; mode: SearchMode | 'all'; rrfK?: number; bm25Weight?: number; vectorWeight?: number },
        ) => {
          if (flags.k > 100) throw new EngramError('USAGE', '--k must be at most 100');
          const settings = context.settings();
          const tuning = searchTuning(settings.config);
          if (flags.rrfK !== undefined) tuning.rrfK = flags.rrfK;
          if (flags.bm25Weight !== undefined) tuning.weights.bm25 = flags.bm25Weight;
          if (flags.vectorWeight !== undefined) tuning.weights.vector = flags.vectorWeight;
          const bar = progressBar(context.io, 'embedding memories');
          const reports = await runRetrievalBench({
            memories: readInputFile(context.io.cwd, flags.memories).split('\n'),
            queries: readInputFile(context.io.cwd, flags.queries).split('\n'),
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
