import { join } from 'node:path';
import { EngramError } from '../errors.js';
import { quietly } from './quiet.js';
import { meanPoolRow } from './pooling.js';
import { loadStaticTableEmbedder } from './static-table.js';
import { transformersModelId, type Embedder, type EmbedderSpec } from './types.js';

type TransformersSpec = Extract<EmbedderSpec, { kind: 'transformers' }>;

/** The parts of @xenova/transformers we use. */
interface TransformersModule {
  env: {
    allowLocalModels: boolean;
    allowRemoteModels: boolean;
    localModelPath: string;
    cacheDir: string;
    useFSCache: boolean;
    remoteHost: string;
  };
  pipeline(
    task: 'feature-extraction',
    model: string,
    options: { quantized: boolean; progress_callback?: (event: DownloadEvent) => void },
  ): Promise<FeatureExtractor>;
}

/** transformers.js progress events while fetching model files. */
export interface DownloadEvent {
  status: string;
  file?: string;
  loaded?: number;
  total?: number;
}

type FeatureExtractor = ((
  texts: string[],
  options: { pooling: 'mean'; normalize: boolean },
) => Promise<{ dims: number[]; data: Float32Array }>) & {
  /** The pipeline's parts, present on transformers.js pipelines: {@link meanPooledRows} calls them directly. */
  tokenizer?: (texts: string[], options: { padding: boolean; truncation: boolean }) => { attention_mask: Tensor } & Record<string, unknown>;
  model?: ((inputs: Record<string, unknown>) => Promise<Record<string, Tensor | undefined>>) & { session?: OnnxSession };
};

/** An onnxruntime InferenceSession, as transformers.js holds it (`pipeline.model.session`). */
export interface OnnxSession {
  readonly inputNames: readonly string[];
  run(feeds: Record<string, unknown>): Promise<Record<string, Tensor | undefined>>;
}

/** The InferenceSession class (its static `create`), reached through a session transformers.js made. */
interface OnnxSessionClass {
  create(path: string, options: Record<string, unknown>): Promise<OnnxSession>;
}

interface Tensor {
  dims: number[];
  data: ArrayLike<number | bigint>;
}

/** Imports transformers.js lazily: it costs ~200 ms and only embedding paths need it. */
export async function importTransformers(): Promise<TransformersModule> {
  try {
    return (await import('@xenova/transformers')) as unknown as TransformersModule;
  } catch (error) {
    throw new EngramError(
      'NATIVE_MODULE_MISSING',
      `@xenova/transformers could not be loaded (${(error as Error).message.split('\n')[0]}); run ./install.sh in the Engram folder`,
      { cause: error },
    );
  }
}

/** Splits a `[n, dim]` tensor into per-row vectors. */
function rows(output: { dims: number[]; data: Float32Array }, count: number): Float32Array[] {
  const dim = output.dims.at(-1) ?? 0;
  return Array.from({ length: count }, (_, i) => output.data.slice(i * dim, (i + 1) * dim));
}

/**
 * Session options for one text at a time (a search's query): a single intra-op thread. onnxruntime's default pool
 * (one thread per physical core) hands each operator of a 1-row batch to a worker that then spin-waits for more work:
 * an isolated query cost ~20 ms of CPU on a 2-core machine for ~2 ms of work, and the spinning worker took a core from
 * the rest of the search and from the hook process waiting for it (docs/PERFORMANCE.md, section 6, wave 9). The
 * results are the same bits: the threads split rows of each product, not its sums (test/core/embed/embed.test.ts).
 */
export const ONE_TEXT_SESSION_OPTIONS = { executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' } as const;

/**
 * A second session of the pipeline's model file for single texts, with {@link ONE_TEXT_SESSION_OPTIONS}. It is made
 * from the file's path: onnxruntime-node 1.14 ignores the options of a session made from a buffer (its binding parses
 * the byte offset as the options), which is how transformers.js makes its own. Null when the pipeline holds no
 * session to take the class from; single texts then go through the pipeline's session as before.
 */
export async function oneTextSession(extract: FeatureExtractor, modelFile: string): Promise<OnnxSession | null> {
  const session = extract.model?.session;
  const create = (session?.constructor as Partial<OnnxSessionClass> | undefined)?.create;
  if (!session || typeof create !== 'function') return null;
  return create.call(session.constructor, modelFile, { ...ONE_TEXT_SESSION_OPTIONS });
}

/** The model's inputs fed to `session` as transformers.js feeds its own (only the names the session declares). */
function feeds(session: OnnxSession, inputs: Record<string, unknown>): Record<string, unknown> {
  const fed: Record<string, unknown> = {};
  for (const name of session.inputNames) {
    if (!(name in inputs)) throw new EngramError('INTERNAL', `the tokenizer gave no '${name}' input for the embedding model`);
    fed[name] = inputs[name];
  }
  return fed;
}

/**
 * What the pipeline computes for `{ pooling: 'mean', normalize: true }` — tokenize, run the model, mean-pool the
 * last hidden state over the attention mask, L2-normalise — with the pooling done here on typed arrays. transformers.js
 * pools by reading its int64 mask through `Number()` once per token per dimension, which was 55 % of embedding time
 * with a static model (docs/PERFORMANCE.md). The arithmetic is the library's, in the same order and precision (sums
 * in doubles rounded to float32, the norm accumulated in float32), so the vectors are bit-identical. A single text
 * runs on `single` when there is one (see {@link ONE_TEXT_SESSION_OPTIONS}); batches on the pipeline's session.
 */
async function meanPooledRows(
  extract: Required<Pick<FeatureExtractor, 'tokenizer' | 'model'>>,
  texts: string[],
  single: OnnxSession | null,
): Promise<Float32Array[]> {
  const inputs = extract.tokenizer(texts, { padding: true, truncation: true });
  const outputs = single && texts.length === 1 ? await single.run(feeds(single, inputs)) : await extract.model(inputs);
  const hidden = outputs.last_hidden_state ?? outputs.logits ?? outputs.token_embeddings;
  if (!hidden) throw new EngramError('INTERNAL', 'the embedding model returned no hidden state');
  const [batch = 0, length = 0, dim = 0] = hidden.dims;
  const data = hidden.data as Float32Array;
  const mask = inputs.attention_mask.data;
  return Array.from({ length: batch }, (_, i) => meanPoolRow(data, i * length, length, dim, (j) => Number(mask[i * length + j])));
}

/**
 * Wraps a loaded pipeline as an Embedder (mean pooling, normalised). `modelFile` — the pipeline's .onnx file — adds a
 * one-thread session for single texts ({@link oneTextSession}).
 */
export async function embedderFromPipeline(extract: FeatureExtractor, model: string, modelFile?: string): Promise<Embedder> {
  const single = modelFile && extract.tokenizer && extract.model ? await oneTextSession(extract, modelFile) : null;
  const probe = await extract(['engram'], { pooling: 'mean', normalize: true });
  const dim = probe.dims.at(-1) ?? 0;
  if (dim <= 0) throw new EngramError('INTERNAL', `model ${model} produced no vector`);
  // A session's first run allocates its buffers: done here, not in the first search.
  if (single) await meanPooledRows(extract as Parameters<typeof meanPooledRows>[0], ['engram'], single);
  return {
    kind: 'transformers',
    model: transformersModelId(model),
    dim,
    async embed(texts) {
      if (texts.length === 0) return [];
      // transformers.js callables are not Functions (no bind): called through their owner.
      if (extract.tokenizer && extract.model) return quietly(() => meanPooledRows(extract as Parameters<typeof meanPooledRows>[0], [...texts], single));
      const output = await quietly(() => extract([...texts], { pooling: 'mean', normalize: true }));
      return rows(output, texts.length);
    },
  };
}

/**
 * Loads a transformers.js feature-extraction model from a local folder, never from the network: remote models are
 * switched off here, and only `engram model pull` turns them on.
 */
export async function loadTransformersEmbedder(spec: TransformersSpec, log?: (line: string) => void): Promise<Embedder> {
  // A static table (a lookup and a mean) is embedded directly, bit for bit as the pipeline would (static-table.ts).
  const table = loadStaticTableEmbedder(spec);
  if (table) return table;
  const transformers = await importTransformers();
  return quietly(async () => {
    const { env } = transformers;
    env.allowLocalModels = true;
    env.allowRemoteModels = false;
    env.useFSCache = false;
    env.localModelPath = spec.modelDir.endsWith('/') ? spec.modelDir : `${spec.modelDir}/`;
    let extract: FeatureExtractor;
    try {
      extract = await transformers.pipeline('feature-extraction', spec.model, { quantized: spec.quantized });
    } catch (error) {
      throw new EngramError('NOT_FOUND', `embedding model ${spec.model} could not be loaded from ${spec.folder}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return embedderFromPipeline(extract, spec.model, join(spec.folder, 'onnx', spec.quantized ? 'model_quantized.onnx' : 'model.onnx'));
  }, log);
}
