import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { loadEmbedder } from './load.js';
import type { Embedder, EmbedderSpec } from './types.js';

/**
 * Embedding on several cores. USE lite runs tfjs on one WASM thread (its threaded build needs browser workers, so
 * tfjs turns threads off in Node), and one text costs ~30 ms of that thread whatever the batch: a pool of worker
 * threads, each with its own model (~120 MB each), embeds a bulk job (import, reindex) about `workers` times faster
 * on idle cores. transformers.js models need no pool: onnxruntime already runs each batch on every core (a single
 * text runs on one thread: transformers.ts `ONE_TEXT_SESSION_OPTIONS`).
 *
 * Only bulk paths start a pool; hooks, searches and the in-process fallback embed in their own thread.
 */
export interface EmbedderPool extends Embedder {
  /** Worker threads embedding; 0 when they could not start and embedding runs in this thread. */
  readonly workers: number;
  /** Stops the workers (a no-op for the in-thread fallback). */
  close(): Promise<void>;
}

/** Options for {@link loadEmbedderPool}. */
export interface PoolOptions {
  /** The worker bundle (dist/embed-worker.mjs: an entry that calls {@link runEmbedWorker}). */
  script: string;
  /** Worker threads. @default {@link defaultEmbedWorkers} */
  workers?: number;
  log?: (line: string) => void;
  /** Give up on workers that are not ready (model loaded) by then and embed in this thread. @default 120 s */
  startTimeoutMs?: number;
}

/** Cores − 1, but at least 2 on a machine with 2 or more cores (the calling thread mostly waits); 0 on one core. */
export function defaultEmbedWorkers(cores = availableParallelism()): number {
  return cores < 2 ? 0 : Math.max(2, cores - 1);
}

/** Fewer texts than this are embedded in the caller's thread: a pool's workers each load the model (~0.5–1 s). */
export const POOL_MIN_TEXTS = 64;

/**
 * How many worker threads a bulk job of `texts` texts with an embedder of `kind` should embed on: `configured`
 * (config.json `embed.workers`) or {@link defaultEmbedWorkers}, and 0 — embed in this thread — unless the embedder is
 * USE lite (transformers.js already runs each call on every core), there are 2 workers or more and the job is big
 * enough to pay for loading a model per worker. Shared by the CLI's bulk commands and the server's background embedding.
 */
export function bulkEmbedWorkers(kind: string | undefined, configured: number | undefined, texts: number): number {
  const workers = configured ?? defaultEmbedWorkers();
  return kind === 'use-lite' && workers >= 2 && texts >= POOL_MIN_TEXTS ? workers : 0;
}

/** Texts per {@link EmbedderPool.embed} call that keep every worker busy: two USE lite groups each. */
export const POOL_TEXTS_PER_WORKER = 32;

type Request = { id: number; texts: string[] };
type Reply = { id: number; vectors: Float32Array[] } | { id: number; error: string };
type Hello = { ready: true; model: string; dim: number } | { ready: false; error: string };

interface Member {
  worker: Worker;
  waiting: Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>;
  /** Why the worker stopped (it errored or exited); calls to it fail at once. */
  dead?: Error;
}

/**
 * Starts `workers` threads that each load the embedder `spec` names, and returns an embedder that splits each call
 * over them. When the script is missing, a worker fails to start or to load the model, or fewer than 2 workers are
 * asked for, it returns the in-thread embedder instead (workers: 0) — the caller's work goes on either way. A worker
 * that dies later sends its calls to the in-thread embedder too.
 */
export async function loadEmbedderPool(spec: EmbedderSpec, options: PoolOptions): Promise<EmbedderPool> {
  const log = options.log ?? (() => {});
  const count = options.workers ?? defaultEmbedWorkers();
  const inThread = async (): Promise<EmbedderPool> => {
    const embedder = await loadEmbedder(spec, log);
    return { kind: embedder.kind, model: embedder.model, dim: embedder.dim, workers: 0, embed: (texts) => embedder.embed(texts), close: async () => {} };
  };
  if (count < 2 || !existsSync(options.script)) {
    if (count >= 2) log(`embedding workers not started: ${options.script} is missing`);
    return inThread();
  }
  const members: Member[] = [];
  let hello: Hello;
  try {
    const hellos = await Promise.all(Array.from({ length: count }, () => startMember(options.script, spec, members, options.startTimeoutMs ?? 120_000)));
    hello = hellos.find((h) => !h.ready) ?? (hellos[0] as Hello);
  } catch (error) {
    hello = { ready: false, error: (error as Error).message };
  }
  if (!hello.ready) {
    log(`embedding workers not started (${hello.error}); embedding in this thread`);
    await Promise.all(members.map((m) => m.worker.terminate()));
    return inThread();
  }
  let nextId = 1;
  let fallback: Promise<Embedder> | undefined;
  const call = (member: Member, texts: string[]): Promise<Float32Array[]> =>
    new Promise((resolve, reject) => {
      if (member.dead) return reject(member.dead);
      const id = nextId++;
      member.waiting.set(id, { resolve, reject });
      member.worker.postMessage({ id, texts } satisfies Request);
    });
  const { model, dim } = hello;
  return {
    kind: spec.kind,
    model,
    dim,
    workers: count,
    async embed(texts) {
      if (texts.length === 0) return [];
      const parts = splitByLength(texts, members.length);
      try {
        const results = await Promise.all(parts.map((part, k) => call(members[k] as Member, part.map((i) => texts[i] as string))));
        const out = new Array<Float32Array>(texts.length);
        parts.forEach((part, k) => part.forEach((index, j) => (out[index] = (results[k] as Float32Array[])[j] as Float32Array)));
        return out;
      } catch (error) {
        log(`an embedding worker failed (${(error as Error).message}); embedding in this thread`);
        fallback ??= loadEmbedder(spec, log);
        return (await fallback).embed(texts);
      }
    },
    async close() {
      await Promise.all(members.map((m) => m.worker.terminate()));
    },
  };
}

/** Starts one worker and resolves with its hello (model loaded, or why not). */
function startMember(script: string, spec: EmbedderSpec, members: Member[], timeoutMs: number): Promise<Hello> {
  return new Promise<Hello>((resolve) => {
    const worker = new Worker(script, { workerData: { spec } });
    const member: Member = { worker, waiting: new Map() };
    members.push(member);
    const timer = setTimeout(() => resolve({ ready: false, error: `no answer in ${timeoutMs} ms` }), timeoutMs);
    const failAll = (error: Error): void => {
      clearTimeout(timer);
      member.dead ??= error;
      resolve({ ready: false, error: error.message });
      for (const { reject } of member.waiting.values()) reject(error);
      member.waiting.clear();
    };
    worker.once('message', (first: Hello) => {
      clearTimeout(timer);
      resolve(first);
      worker.on('message', (reply: Reply) => {
        const waiting = member.waiting.get(reply.id);
        if (!waiting) return;
        member.waiting.delete(reply.id);
        if ('error' in reply) waiting.reject(new Error(reply.error));
        else waiting.resolve(reply.vectors);
      });
    });
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`the embedding worker exited with code ${code}`)));
  });
}

/**
 * Indices of `texts` in `parts` runs of similar length (shortest first), each run about the same total length, so
 * every worker gets about the same work and pads its model calls little (see use-lite.ts lengthGroups).
 */
export function splitByLength(texts: readonly string[], parts: number): number[][] {
  const order = texts.map((_, i) => i).sort((a, b) => (texts[a] as string).length - (texts[b] as string).length || a - b);
  const count = Math.max(1, Math.min(parts, texts.length));
  // Cost of a text ≈ its length plus a fixed share (tokenizer, per-call overhead): balance on that.
  const cost = (i: number): number => (texts[i] as string).length + 32;
  const total = order.reduce((sum, i) => sum + cost(i), 0);
  const out: number[][] = Array.from({ length: count }, () => []);
  let part = 0;
  let acc = 0;
  for (const [position, index] of order.entries()) {
    const left = order.length - position;
    // Move on when this part has its share, keeping at least one text for each part still to fill.
    if (part < count - 1 && (acc >= (total * (part + 1)) / count || left <= count - 1 - part) && (out[part] as number[]).length > 0) part++;
    (out[part] as number[]).push(index);
    acc += cost(index);
  }
  return out;
}

/** The worker's body (dist/embed-worker.mjs): load the embedder named in workerData, then answer embed requests. */
export function runEmbedWorker(): void {
  const port = parentPort;
  if (!port) throw new Error('runEmbedWorker runs in a worker thread');
  const { spec } = workerData as { spec: EmbedderSpec };
  loadEmbedder(spec).then(
    (embedder) => {
      port.postMessage({ ready: true, model: embedder.model, dim: embedder.dim } satisfies Hello);
      // One request at a time, in order (concurrent calls on one model would only interleave its kernels).
      let queue: Promise<void> = Promise.resolve();
      port.on('message', (request: Request) => {
        queue = queue.then(() =>
          embedder.embed(request.texts).then(
            // Each vector's buffer is moved, not copied (once each: views may share one).
            (vectors) => port.postMessage({ id: request.id, vectors } satisfies Reply, [...new Set(vectors.map((v) => v.buffer as ArrayBuffer))]),
            (error: Error) => port.postMessage({ id: request.id, error: error.message } satisfies Reply),
          ),
        );
      });
    },
    (error: Error) => port.postMessage({ ready: false, error: error.message } satisfies Hello),
  );
}
