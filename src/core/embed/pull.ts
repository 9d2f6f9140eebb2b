import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EngramError } from '../errors.js';
import { PULLED_MODELS_FILE, readPulledModels } from './resolve.js';
import { loadTransformersEmbedder } from './transformers.js';

/** One file of a model in transformers.js layout, with what it must be when it is pinned. */
export interface ModelFile {
  path: string;
  bytes?: number;
  sha256?: string;
  /** Absent on the hub is fine (e.g. special_tokens_map.json). */
  optional?: boolean;
}

/** A model Engram knows byte for byte: a fixed revision and the SHA-256 of every file it fetches. */
export interface ModelManifest {
  id: string;
  revision: string;
  dim: number;
  files: ModelFile[];
  /** What retrieval quality it implies (engram doctor says it). */
  quality: string;
}

/**
 * The default model of `engram model pull`: small (23 MB int8), 384-d, trained for sentence similarity on a billion
 * pairs, so it reads meaning far better than the offline encoders (USE lite and its distillations). Pinned to one
 * revision; every file is checked against its SHA-256 (the same digests other projects pin for this revision, and
 * its tokenizer is byte-identical to the one ../shared/models carries).
 */
export const DEFAULT_MODEL: ModelManifest = {
  id: 'Xenova/all-MiniLM-L6-v2',
  revision: '751bff37182d3f1213fa05d7196b954e230abad9',
  dim: 384,
  quality: 'strong: a sentence-similarity model (all-MiniLM-L6-v2, int8); hybrid search uses its vectors fully',
  files: [
    { path: 'config.json', bytes: 650, sha256: '7135149f7cffa1a573466c6e4d8423ed73b62fd2332c575bf738a0d033f70df7' },
    { path: 'tokenizer.json', bytes: 711_661, sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0' },
    { path: 'tokenizer_config.json', bytes: 366, sha256: '9261e7d79b44c8195c1cada2b453e55b00aeb81e907a6664974b4d7776172ab3' },
    { path: 'special_tokens_map.json', bytes: 125, sha256: 'b6d346be366a7d1d48332dbc9fdf3bf8960b5d879522b7799ddba59e76237ee3' },
    { path: 'onnx/model_quantized.onnx', bytes: 22_972_370, sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1' },
  ],
};

const KNOWN: readonly ModelManifest[] = [DEFAULT_MODEL];

/** The pinned manifest of a model id, if Engram knows it. */
export const knownModel = (id: string): ModelManifest | undefined => KNOWN.find((model) => model.id === id);

/** Proxies as the environment gives them (core/env). */
export interface ProxySettings {
  https?: string | undefined;
  http?: string | undefined;
  none?: string | undefined;
}

/** Options for {@link pullModel}. */
export interface PullOptions {
  /** Hugging Face model id, e.g. `Xenova/all-MiniLM-L6-v2`. */
  id: string;
  /** `$ENGRAM_HOME/models`. */
  modelsDir: string;
  /** Hub or mirror base URL (`$HF_ENDPOINT`). @default https://huggingface.co/ */
  endpoint?: string;
  proxy?: ProxySettings;
  /** Make it the default model for `auto`. @default true */
  makeDefault?: boolean;
  /** The whole pull is abandoned after this long. @default 600 000 (10 minutes) */
  timeoutMs?: number;
  /** …and after this long without a byte. @default 30 000 */
  stallMs?: number;
  /** Bytes so far and in all (the total grows as file sizes become known). */
  onProgress?: (done: number, total: number) => void;
  now?: () => Date;
}

/** What {@link pullModel} fetched. */
export interface PullResult {
  id: string;
  dim: number;
  folder: string;
  revision: string;
  quantized: boolean;
  default: boolean;
  /** Files checked against a known SHA-256 (pinned, or the digest the hub published for it), and those that could
   * not be (small git-stored files of a model Engram does not pin). */
  verified: string[];
  unverified: string[];
  bytes: number;
}

const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)?$/;
const DEFAULT_ENDPOINT = 'https://huggingface.co/';

/** Does NO_PROXY exempt this host? (`*`, exact names, and suffixes such as `.corp` or `corp`.) */
function exempt(host: string, noProxy: string | undefined): boolean {
  if (!noProxy) return false;
  return noProxy
    .split(/[\s,]+/)
    .filter(Boolean)
    .some((entry) => {
      const name = entry.replace(/:\d+$/, '').toLowerCase();
      return name === '*' || host === name || host.endsWith(name.startsWith('.') ? name : `.${name}`);
    });
}

/** The fetch `pull` uses: undici's, through the environment's proxy when one applies (Node's own fetch ignores
 * HTTP(S)_PROXY). Proxies are reached with CONNECT, as curl and npm do. */
async function proxiedFetch(proxy: ProxySettings | undefined): Promise<(url: string, init: { method?: string; signal: AbortSignal; headers?: Record<string, string> }) => Promise<Response>> {
  // undici is CommonJS: bundled by esbuild, its exports arrive on `default`; loaded by Node, as named exports.
  const loaded = (await import('undici')) as typeof import('undici') & { default?: typeof import('undici') };
  const undici = typeof loaded.fetch === 'function' ? loaded : (loaded.default as typeof import('undici'));
  const agents = new Map<string, InstanceType<typeof undici.ProxyAgent>>();
  return (url, init) => {
    const target = new URL(url);
    const via = exempt(target.hostname.toLowerCase(), proxy?.none) ? undefined : target.protocol === 'https:' ? (proxy?.https ?? proxy?.http) : proxy?.http;
    let dispatcher = via ? agents.get(via) : undefined;
    if (via && !dispatcher) {
      dispatcher = new undici.ProxyAgent(via);
      agents.set(via, dispatcher);
    }
    return undici.fetch(url, { ...init, ...(dispatcher ? { dispatcher } : {}) }) as unknown as Promise<Response>;
  };
}

const base = (endpoint: string): string => (endpoint.endsWith('/') ? endpoint : `${endpoint}/`);
const fileUrl = (endpoint: string, id: string, revision: string, path: string): string =>
  `${base(endpoint)}${id}/resolve/${encodeURIComponent(revision)}/${path}`;

/** The SHA-256 the hub publishes for a file stored in Git LFS (its `X-Linked-Etag`, or an ETag that is one). */
function publishedSha256(headers: Headers): string | undefined {
  for (const name of ['x-linked-etag', 'etag']) {
    const value = headers.get(name)?.replace(/^W\//, '').replace(/"/g, '').trim().toLowerCase();
    if (value && /^[0-9a-f]{64}$/.test(value)) return value;
  }
  return undefined;
}

/**
 * Can the hub be reached? One small request (a model's config.json) with a short timeout. Used by
 * `engram model pull --if-reachable`, which ./install.sh and the first-run bootstrap run.
 */
export async function hubReachable(options: { id: string; endpoint?: string; proxy?: ProxySettings; timeoutMs?: number }): Promise<{ ok: boolean; reason: string }> {
  const endpoint = options.endpoint ?? DEFAULT_ENDPOINT;
  const revision = knownModel(options.id)?.revision ?? 'main';
  try {
    const fetch = await proxiedFetch(options.proxy);
    const response = await fetch(fileUrl(endpoint, options.id, revision, 'config.json'), { method: 'HEAD', signal: AbortSignal.timeout(options.timeoutMs ?? 5_000) });
    return response.ok ? { ok: true, reason: 'reachable' } : { ok: false, reason: `HTTP ${response.status}` };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { ok: false, reason: cause?.code ?? cause?.message ?? (error as Error).message };
  }
}

/**
 * Downloads a feature-extraction model into `$ENGRAM_HOME/models/<id>/` (transformers.js layout), checks every file
 * (size and SHA-256 against the pinned manifest for a model Engram knows, against the hub's published digest for
 * LFS files of other models), loads it once to learn its dimension, and records it. Files land under a `.partial`
 * name and are renamed only when whole and verified, so an interrupted or corrupt download never replaces a good
 * model. The only code path in Engram that touches the network for models.
 */
export async function pullModel(options: PullOptions): Promise<PullResult> {
  if (!MODEL_ID.test(options.id) || options.id.includes('..')) {
    throw new EngramError('INVALID_INPUT', `'${options.id}' is not a model id such as Xenova/all-MiniLM-L6-v2`);
  }
  const endpoint = options.endpoint ?? DEFAULT_ENDPOINT;
  const manifest = knownModel(options.id);
  const revision = manifest?.revision ?? 'main';
  const folder = join(options.modelsDir, options.id);
  mkdirSync(folder, { recursive: true, mode: 0o700 });

  const deadline = AbortSignal.timeout(options.timeoutMs ?? 600_000);
  const fetch = await proxiedFetch(options.proxy);
  const expectedTotal = manifest ? manifest.files.reduce((sum, file) => sum + (file.bytes ?? 0), 0) : 0;
  let total = expectedTotal;
  let done = 0;
  const verified: string[] = [];
  const unverified: string[] = [];

  /** Fetches one file to `<folder>/<path>`; false when it is optional and absent. */
  const fetchFile = async (file: ModelFile): Promise<boolean> => {
    const url = fileUrl(endpoint, options.id, revision, file.path);
    const target = join(folder, file.path);
    // Already here and matching its pinned digest: nothing to fetch (a repeated pull, a resumed install).
    if (file.sha256 && existsSync(target) && createHash('sha256').update(readFileSync(target)).digest('hex') === file.sha256) {
      done += file.bytes ?? 0;
      options.onProgress?.(done, total);
      verified.push(file.path);
      return true;
    }
    const stall = new AbortController();
    let stallTimer = setTimeout(() => stall.abort(new Error(`no data for ${(options.stallMs ?? 30_000) / 1000} s`)), options.stallMs ?? 30_000);
    const signal = AbortSignal.any([deadline, stall.signal]);
    const partial = `${target}.partial`;
    try {
      const response = await fetch(url, { signal, headers: { 'user-agent': 'engram (model pull)' } });
      if (response.status === 404 && file.optional) return false;
      if (!response.ok || !response.body) throw new EngramError('IO', `${url}: HTTP ${response.status}`);
      const length = Number(response.headers.get('content-length') ?? 0);
      if (!file.bytes && length > 0) total += length;
      const expected = file.sha256 ?? publishedSha256(response.headers);
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      const hash = createHash('sha256');
      const out = createWriteStream(partial, { mode: 0o600 });
      let bytes = 0;
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          clearTimeout(stallTimer);
          stallTimer = setTimeout(() => stall.abort(new Error(`no data for ${(options.stallMs ?? 30_000) / 1000} s`)), options.stallMs ?? 30_000);
          hash.update(chunk);
          bytes += chunk.byteLength;
          done += chunk.byteLength;
          if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
          options.onProgress?.(done, Math.max(total, done));
        }
      } finally {
        await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
      }
      if (file.bytes !== undefined && bytes !== file.bytes) {
        throw new EngramError('IO', `${file.path}: expected ${file.bytes} bytes, got ${bytes}; the download was cut or the file is not the pinned one`);
      }
      const digest = hash.digest('hex');
      if (expected && digest !== expected) {
        throw new EngramError('IO', `${file.path}: SHA-256 ${digest} does not match the expected ${expected}; refusing it`);
      }
      (expected ? verified : unverified).push(file.path);
      renameSync(partial, target);
      return true;
    } catch (error) {
      rmSync(partial, { force: true });
      if (error instanceof EngramError) throw error;
      const reason = deadline.aborted
        ? `the pull took longer than ${Math.round((options.timeoutMs ?? 600_000) / 1000)} s`
        : stall.signal.aborted
          ? String((stall.signal.reason as Error).message)
          : ((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message);
      throw new EngramError('IO', `could not download ${options.id} from ${endpoint}: ${file.path}: ${reason}`, { cause: error });
    } finally {
      clearTimeout(stallTimer);
    }
  };

  let quantized = true;
  if (manifest) {
    for (const file of manifest.files) await fetchFile(file);
  } else {
    for (const path of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) await fetchFile({ path });
    await fetchFile({ path: 'special_tokens_map.json', optional: true });
    // Some repositories publish only the full-precision graph.
    if (!(await fetchFile({ path: 'onnx/model_quantized.onnx', optional: true }))) {
      quantized = false;
      if (!(await fetchFile({ path: 'onnx/model.onnx', optional: true }))) {
        throw new EngramError('NOT_FOUND', `${options.id} on ${endpoint} has neither onnx/model_quantized.onnx nor onnx/model.onnx (not a transformers.js model)`);
      }
    }
  }

  // Loading it once proves the files make a model, and gives its dimension.
  const embedder = await loadTransformersEmbedder({ kind: 'transformers', model: options.id, modelDir: options.modelsDir, folder, quantized });
  if (manifest && embedder.dim !== manifest.dim) {
    throw new EngramError('INTERNAL', `${options.id} produced ${embedder.dim}-d vectors; expected ${manifest.dim}`);
  }
  const record = readPulledModels(options.modelsDir);
  const at = (options.now ?? (() => new Date()))().toISOString();
  const makeDefault = options.makeDefault ?? true;
  const models = [...record.models.filter((m) => m.id !== options.id), { id: options.id, dim: embedder.dim, pulled_at: at, revision }];
  const next = { default: makeDefault ? options.id : record.default, models };
  const file = join(options.modelsDir, PULLED_MODELS_FILE);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
  return { id: options.id, dim: embedder.dim, folder, revision, quantized, default: makeDefault, verified, unverified, bytes: done };
}
