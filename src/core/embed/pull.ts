import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EngramError } from '../errors.js';
import { quietly } from './quiet.js';
import { PULLED_MODELS_FILE, readPulledModels } from './resolve.js';
import { embedderFromPipeline, importTransformers, type DownloadEvent } from './transformers.js';

/** Options for {@link pullModel}. */
export interface PullOptions {
  /** Hugging Face model id, e.g. `Xenova/all-MiniLM-L6-v2`. */
  id: string;
  /** `$ENGRAM_HOME/models`. */
  modelsDir: string;
  /** Hub or mirror base URL. @default https://huggingface.co/ */
  endpoint?: string;
  /** Make it the default model for `auto`. @default true */
  makeDefault?: boolean;
  onProgress?: (event: DownloadEvent) => void;
  now?: () => Date;
}

/** What {@link pullModel} fetched. */
export interface PullResult {
  id: string;
  dim: number;
  folder: string;
  quantized: boolean;
  default: boolean;
}

const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)?$/;

/**
 * Downloads a feature-extraction model into `$ENGRAM_HOME/models/<id>/` (transformers.js layout), checks it by
 * embedding a probe text, and records it. The only code path in Engram that touches the network for models.
 */
export async function pullModel(options: PullOptions): Promise<PullResult> {
  if (!MODEL_ID.test(options.id) || options.id.includes('..')) {
    throw new EngramError('INVALID_INPUT', `'${options.id}' is not a model id such as Xenova/all-MiniLM-L6-v2`);
  }
  const transformers = await importTransformers();
  const { env } = transformers;
  mkdirSync(options.modelsDir, { recursive: true, mode: 0o700 });
  const endpoint = options.endpoint ?? 'https://huggingface.co/';
  const load = (quantized: boolean) =>
    quietly(async () => {
      env.allowLocalModels = false;
      env.allowRemoteModels = true;
      env.useFSCache = true;
      env.cacheDir = options.modelsDir;
      env.remoteHost = endpoint.endsWith('/') ? endpoint : `${endpoint}/`;
      try {
        return await transformers.pipeline('feature-extraction', options.id, {
          quantized,
          ...(options.onProgress ? { progress_callback: options.onProgress } : {}),
        });
      } finally {
        env.allowRemoteModels = false;
        env.allowLocalModels = true;
      }
    });
  let quantized = true;
  let extract;
  try {
    extract = await load(true);
  } catch (first) {
    // Some repositories publish only the full-precision graph.
    if (!/model_quantized\.onnx/.test((first as Error).message)) throw pullError(options.id, endpoint, first);
    quantized = false;
    try {
      extract = await load(false);
    } catch (error) {
      throw pullError(options.id, endpoint, error);
    }
  }
  const embedder = await embedderFromPipeline(extract, options.id);
  const record = readPulledModels(options.modelsDir);
  const at = (options.now ?? (() => new Date()))().toISOString();
  const makeDefault = options.makeDefault ?? true;
  const models = [...record.models.filter((m) => m.id !== options.id), { id: options.id, dim: embedder.dim, pulled_at: at }];
  const next = { default: makeDefault ? options.id : record.default, models };
  const file = join(options.modelsDir, PULLED_MODELS_FILE);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
  return { id: options.id, dim: embedder.dim, folder: join(options.modelsDir, options.id), quantized, default: makeDefault };
}

function pullError(id: string, endpoint: string, error: unknown): EngramError {
  return new EngramError('IO', `could not download ${id} from ${endpoint}: ${(error as Error).message}`, { cause: error });
}
