import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createHashingEmbedder,
  DEFAULT_MODEL,
  hubReachable,
  loadEmbedder,
  loadSettings,
  pullModel,
  readEnv,
  readPulledModels,
  resolveEmbedder,
  useLiteInstalled,
  type Embedder,
} from '../../../src/core/index.js';
import { embedderFromPipeline, oneTextSession } from '../../../src/core/embed/transformers.js';
import { hasModels, MODELS_DIR, ROOT, tempDir, thrown } from '../../_helpers.js';

const cosine = (a: Float32Array, b: Float32Array): number => a.reduce((sum, x, i) => sum + x * (b[i] as number), 0);

const settingsFor = (vars: Record<string, string>) => loadSettings(readEnv({ HOME: tempDir(), ENGRAM_HOME: tempDir(), ...vars }));

describe('resolveEmbedder', () => {
  it('honours ENGRAM_EMBEDDER, ENGRAM_MODEL and ENGRAM_MODEL_DIR', () => {
    expect(resolveEmbedder(settingsFor({ ENGRAM_EMBEDDER: 'none' })).spec).toBeNull();
    expect(resolveEmbedder(settingsFor({ ENGRAM_EMBEDDER: 'test' })).spec).toEqual({ kind: 'test', model: 'test:hash' });
    expect(resolveEmbedder(settingsFor({ ENGRAM_EMBEDDER: 'use-lite' })).spec).toEqual({ kind: 'use-lite', model: 'use-lite' });
  });

  it.skipIf(!hasModels('static-use-256'))('resolves ENGRAM_MODEL inside ENGRAM_MODEL_DIR to that folder', () => {
    const chosen = resolveEmbedder(settingsFor({ ENGRAM_MODEL_DIR: MODELS_DIR, ENGRAM_MODEL: 'static-use-256' }));
    expect(chosen.spec).toEqual({
      kind: 'transformers',
      model: 'static-use-256',
      modelDir: MODELS_DIR,
      folder: join(MODELS_DIR, 'static-use-256'),
      quantized: true,
    });
  });

  it('rejects an unknown ENGRAM_EMBEDDER with a clear error', () => {
    const error = thrown(() => settingsFor({ ENGRAM_EMBEDDER: 'openai' }));
    expect(error?.code).toBe('CONFIG_INVALID');
    expect(error?.message).toContain('ENGRAM_EMBEDDER must be one of auto, transformers, use-lite, none, test');
  });

  it('auto picks a pulled model first, then USE lite, and a missing model says how to get it', () => {
    const home = tempDir();
    const settings = loadSettings(readEnv({ HOME: home, ENGRAM_HOME: home }));
    expect(resolveEmbedder(settings).spec).toEqual(useLiteInstalled() ? { kind: 'use-lite', model: 'use-lite' } : null);
    // A configured model that is not there: no embedder, and the reason names the fix.
    const missing = resolveEmbedder(loadSettings(readEnv({ HOME: home, ENGRAM_HOME: home, ENGRAM_MODEL: 'Xenova/all-MiniLM-L6-v2' })));
    expect(missing.spec).toBeNull();
    expect(missing.reason).toContain("engram model pull Xenova/all-MiniLM-L6-v2");
    // A pulled default wins over USE lite.
    const folder = join(home, 'models', 'org', 'model');
    mkdirSync(join(folder, 'onnx'), { recursive: true });
    for (const file of ['config.json', 'tokenizer.json', 'onnx/model_quantized.onnx']) writeFileSync(join(folder, file), '{}');
    writeFileSync(join(home, 'models', 'engram-models.json'), JSON.stringify({ default: 'org/model', models: [{ id: 'org/model', dim: 8, pulled_at: 'x' }] }));
    expect(resolveEmbedder(settings).spec).toMatchObject({ kind: 'transformers', model: 'org/model', folder });
  });

  it('the hashing test embedder is deterministic and unit-length', async () => {
    const embedder = createHashingEmbedder();
    const [a, b] = await embedder.embed(['Flaky tests', 'flaky test']);
    expect(a).toHaveLength(64);
    expect(cosine(a as Float32Array, a as Float32Array)).toBeCloseTo(1, 5);
    expect(cosine(a as Float32Array, b as Float32Array)).toBeCloseTo(1, 5);
  });
});

/** Paraphrase pairs and an unrelated text: a real sentence encoder must put each pair closer than the stranger. */
async function expectsMeaning(embedder: Embedder): Promise<void> {
  const [a1, a2, b1, b2, stranger] = await embedder.embed([
    'Run the build before running the test suite.',
    'Compile first, then execute the tests.',
    'The database migration failed because the index already exists.',
    'Schema change broke: that index was created before.',
    'My cat likes to sleep in the sun.',
  ]);
  for (const vector of [a1, a2, b1, b2, stranger]) {
    expect(vector).toHaveLength(embedder.dim);
    expect(cosine(vector as Float32Array, vector as Float32Array)).toBeCloseTo(1, 4);
  }
  expect(cosine(a1 as Float32Array, a2 as Float32Array)).toBeGreaterThan(cosine(a1 as Float32Array, stranger as Float32Array));
  expect(cosine(b1 as Float32Array, b2 as Float32Array)).toBeGreaterThan(cosine(b1 as Float32Array, stranger as Float32Array));
  expect(cosine(a1 as Float32Array, a2 as Float32Array)).toBeGreaterThan(cosine(a1 as Float32Array, b2 as Float32Array));
}

describe('transformers.js models from ../shared/models (offline)', () => {
  for (const model of ['static-use-256', 'ctx-use-256'] as const) {
    it.skipIf(!hasModels(model))(`loads ${model} from disk and embeds by meaning`, async () => {
      const settings = settingsFor({ ENGRAM_MODEL_DIR: MODELS_DIR, ENGRAM_MODEL: model });
      const spec = resolveEmbedder(settings).spec;
      if (!spec) throw new Error('model not resolved');
      const embedder = await loadEmbedder(spec);
      expect(embedder).toMatchObject({ kind: 'transformers', model: `transformers:${model}`, dim: 256 });
      await expectsMeaning(embedder);
      // Batches and single texts agree.
      const [batched] = await embedder.embed(['Run the build before running the test suite.', 'x']);
      const [single] = await embedder.embed(['Run the build before running the test suite.']);
      expect(cosine(batched as Float32Array, single as Float32Array)).toBeCloseTo(1, 4);
      expect(await embedder.embed([])).toEqual([]);
    });

    it(`${model}: pools exactly as the transformers.js pipeline does (bit-identical vectors, padded batch)`, async () => {
      const { pipeline, env } = await import('@xenova/transformers');
      env.allowLocalModels = true;
      env.allowRemoteModels = false;
      env.useFSCache = false;
      env.localModelPath = `${MODELS_DIR}/`;
      const extract = await pipeline('feature-extraction', model, { quantized: true });
      const settings = settingsFor({ ENGRAM_MODEL_DIR: MODELS_DIR, ENGRAM_MODEL: model });
      const embedder = await loadEmbedder(resolveEmbedder(settings).spec!);
      // Different lengths, so the short ones are padded and the mask matters.
      const texts = ['pnpm', 'Run the build before running the test suite, always, even for a one-line change.', 'Never commit .env files'];
      const ours = await embedder.embed(texts);
      const theirs = await extract(texts, { pooling: 'mean', normalize: true });
      const dim = theirs.dims.at(-1) as number;
      texts.forEach((_, i) => expect(Array.from(ours[i] as Float32Array)).toEqual(Array.from((theirs.data as Float32Array).slice(i * dim, (i + 1) * dim))));
    });
  }
});

describe.skipIf(!hasModels('ctx-use-256'))('ctx-use-256: single texts on a one-thread session (docs/PERFORMANCE.md, wave 9)', () => {
  const MODEL = 'ctx-use-256';
  const MODEL_FILE = join(MODELS_DIR, MODEL, 'onnx', 'model_quantized.onnx');
  type Extract = Parameters<typeof embedderFromPipeline>[0];
  const pipelineFor = async (): Promise<Extract> => {
    const { pipeline, env } = await import('@xenova/transformers');
    env.allowLocalModels = true;
    env.allowRemoteModels = false;
    env.useFSCache = false;
    env.localModelPath = `${MODELS_DIR}/`;
    return (await pipeline('feature-extraction', MODEL, { quantized: true })) as unknown as Extract;
  };
  const lines = (file: string, key: string): string[] =>
    readFileSync(join(ROOT, 'fixtures', 'eval', file), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line)[key] as string);

  it('gives the pipeline its vectors bit for bit, and runs one text on its own session and batches on the pipeline', async () => {
    const reference = await pipelineFor();
    const extract = await pipelineFor();
    const session = extract.model?.session;
    if (!session) throw new Error('the pipeline holds no session');
    let pipelineRuns = 0;
    const run = session.run.bind(session);
    session.run = (feeds) => {
      pipelineRuns++;
      return run(feeds);
    };
    const embedder = await embedderFromPipeline(extract, MODEL, MODEL_FILE);
    // Every eval question and lesson, and a prompt past the model's 128 tokens (truncated the same way).
    const texts = [...lines('queries-dev.jsonl', 'q'), ...lines('queries-test.jsonl', 'q'), ...lines('memories.jsonl', 'text')];
    texts.push(Array.from({ length: 60 }, (_, i) => `step ${i}: rebuild the index, then rerun the failing test`).join('; '));
    pipelineRuns = 0;
    for (const text of texts) {
      const [ours] = await embedder.embed([text]);
      const theirs = await reference([text], { pooling: 'mean', normalize: true });
      expect(Array.from(ours as Float32Array)).toEqual(Array.from(theirs.data));
    }
    expect(pipelineRuns).toBe(0);
    await embedder.embed(['Run the build first.', 'Never commit .env files']);
    expect(pipelineRuns).toBe(1);
  }, 120_000);

  it.skipIf(process.platform !== 'linux')('starts no onnxruntime worker thread for single texts (the pipeline\'s own session does)', async () => {
    const extract = await pipelineFor();
    const threads = (): number => readdirSync('/proc/self/task').length;
    const before = threads();
    const single = await oneTextSession(extract, MODEL_FILE);
    expect(single).not.toBeNull();
    expect(threads()).toBe(before);
    if (availableParallelism() >= 2) {
      // The counter can see a pool: a session with onnxruntime's default options starts its worker threads.
      const create = (extract.model?.session?.constructor as unknown as { create: (path: string, options: object) => Promise<unknown> }).create;
      await create.call(extract.model?.session?.constructor, MODEL_FILE, { executionProviders: ['cpu'] });
      expect(threads()).toBeGreaterThan(before);
    }
  }, 60_000);
});

describe.skipIf(!useLiteInstalled())('Universal Sentence Encoder lite from npm', () => {
  it('loads offline and embeds by meaning', async () => {
    const embedder = await loadEmbedder({ kind: 'use-lite', model: 'use-lite' });
    expect(embedder).toMatchObject({ kind: 'use-lite', model: 'use-lite', dim: 512 });
    await expectsMeaning(embedder);
  }, 60_000);
});

describe.skipIf(!hasModels('ctx-use-256'))('engram model pull', () => {
  // A loopback stand-in for the Hugging Face hub: it serves ../shared/models/ctx-use-256 at the hub's URL layout
  // (/<org>/<name>/resolve/<revision>/<file>), publishes the SHA-256 of the ONNX graph in X-Linked-Etag as the hub
  // does for LFS files, and can misbehave on request: `corrupt` flips a byte of the graph, `stall` sends half the
  // graph and then nothing. Real HTTP, real download, verification and loading code.
  let server: Server;
  let proxy: Server;
  let endpoint: string;
  let proxyUrl: string;
  const requests: string[] = [];
  const proxied: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      requests.push(request.url ?? '');
      const match = /^\/acme\/(tiny-encoder|corrupt|stall)\/resolve\/main\/(.+)$/.exec(request.url ?? '');
      const file = match ? join(MODELS_DIR, 'ctx-use-256', decodeURIComponent(match[2] as string)) : '';
      if (!match || !existsSync(file) || file.includes('..')) {
        response.writeHead(404).end('not found');
        return;
      }
      const body = readFileSync(file);
      const lfs = file.endsWith('.onnx');
      const headers = { 'content-length': body.length, ...(lfs ? { 'x-linked-etag': `"${createHash('sha256').update(body).digest('hex')}"` } : {}) };
      if (request.method === 'HEAD') return void response.writeHead(200, headers).end();
      response.writeHead(200, headers);
      if (lfs && match[1] === 'corrupt') {
        const bad = Buffer.from(body);
        bad[1000] = (bad[1000] as number) ^ 0xff;
        return void response.end(bad);
      }
      if (lfs && match[1] === 'stall') return void response.write(body.subarray(0, body.length >> 1)); // and never ends
      response.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    // A forward proxy on loopback that tunnels with CONNECT (as corporate proxies do for curl and npm).
    proxy = createServer((_request, response) => void response.writeHead(405).end());
    proxy.on('connect', (request, socket: Socket, head: Buffer) => {
      proxied.push(request.url ?? '');
      const [host, port] = (request.url ?? '').split(':');
      const upstream = connect(Number(port), host as string, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    proxy.closeAllConnections();
    await Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), new Promise<void>((resolve) => proxy.close(() => resolve()))]);
  });

  it('downloads into $ENGRAM_HOME/models with progress, verifies the published checksum, records it as the default, and auto then uses it offline', async () => {
    const home = tempDir();
    const progress: Array<[number, number]> = [];
    const result = await pullModel({
      id: 'acme/tiny-encoder',
      modelsDir: join(home, 'models'),
      endpoint,
      onProgress: (done, total) => progress.push([done, total]),
    });
    expect(result).toMatchObject({ id: 'acme/tiny-encoder', dim: 256, quantized: true, default: true, revision: 'main' });
    expect(result.verified).toEqual(['onnx/model_quantized.onnx']);
    expect(existsSync(join(home, 'models', 'acme', 'tiny-encoder', 'onnx', 'model_quantized.onnx'))).toBe(true);
    expect(progress.at(-1)?.[0]).toBe(result.bytes);
    expect(progress.at(-1)?.[0]).toBeGreaterThan(10_000_000);
    expect(readPulledModels(join(home, 'models')).default).toBe('acme/tiny-encoder');

    const settings = loadSettings(readEnv({ HOME: home, ENGRAM_HOME: home }));
    const choice = resolveEmbedder(settings);
    expect(choice.spec).toMatchObject({ kind: 'transformers', model: 'acme/tiny-encoder' });
    const before = requests.length;
    const embedder = await loadEmbedder(choice.spec!);
    await expectsMeaning(embedder);
    expect(requests.length).toBe(before); // loading never touches the network
  });

  it('refuses a file whose SHA-256 does not match, and leaves no model behind', async () => {
    const models = tempDir();
    const error = (await pullModel({ id: 'acme/corrupt', modelsDir: models, endpoint }).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/model_quantized\.onnx: SHA-256 [0-9a-f]{64} does not match/);
    expect(existsSync(join(models, 'acme', 'corrupt', 'onnx', 'model_quantized.onnx'))).toBe(false);
    expect(existsSync(join(models, 'acme', 'corrupt', 'onnx', 'model_quantized.onnx.partial'))).toBe(false);
    expect(readPulledModels(models).default).toBeNull();
  });

  it('gives up on a download that stops sending, with a clear reason', async () => {
    const error = (await pullModel({ id: 'acme/stall', modelsDir: tempDir(), endpoint, stallMs: 300 }).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain('no data for 0.3 s');
  });

  it('goes through HTTP_PROXY when one is set', async () => {
    proxied.length = 0;
    const result = await pullModel({ id: 'acme/tiny-encoder', modelsDir: tempDir(), endpoint, proxy: { http: proxyUrl } });
    expect(result.dim).toBe(256);
    expect(proxied).toContain(new URL(endpoint).host);
    // NO_PROXY exempts the host: straight to the hub.
    proxied.length = 0;
    await pullModel({ id: 'acme/tiny-encoder', modelsDir: tempDir(), endpoint, proxy: { http: proxyUrl, none: 'localhost,127.0.0.1' } });
    expect(proxied).toEqual([]);
  });

  it('says whether the hub can be reached, quickly', async () => {
    expect(await hubReachable({ id: 'acme/tiny-encoder', endpoint })).toEqual({ ok: true, reason: 'reachable' });
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const closed = await hubReachable({ id: 'acme/tiny-encoder', endpoint: `http://127.0.0.1:${closedPort}/`, timeoutMs: 2_000 });
    expect(closed.ok).toBe(false);
    expect(closed.reason).toMatch(/ECONNREFUSED|fetch failed/);
  });

  it('pins the default model to a revision and a SHA-256 per file', () => {
    expect(DEFAULT_MODEL.id).toBe('Xenova/all-MiniLM-L6-v2');
    expect(DEFAULT_MODEL.revision).toMatch(/^[0-9a-f]{40}$/);
    for (const file of DEFAULT_MODEL.files) expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
    // Its tokenizer is the one ../shared/models carries: the pin is checked against real bytes.
    const tokenizer = DEFAULT_MODEL.files.find((file) => file.path === 'tokenizer.json');
    expect(createHash('sha256').update(readFileSync(join(MODELS_DIR, 'ctx-use-256', 'tokenizer.json'))).digest('hex')).toBe(tokenizer?.sha256);
  });

  it('the built CLI pulls through the same code (bundled), and --if-reachable says one line when the hub is down', async () => {
    const home = tempDir();
    const run = (args: string[], env: Record<string, string>) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli.mjs'), ...args], { env: { ...process.env, HOME: home, ENGRAM_HOME: home, ...env } });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk) => (stdout += chunk));
        child.stderr.on('data', (chunk) => (stderr += chunk));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    const pulled = await run(['model', 'pull', 'acme/tiny-encoder', '--quiet'], { HF_ENDPOINT: endpoint });
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(JSON.parse(pulled.stdout)).toMatchObject({ id: 'acme/tiny-encoder', dim: 256, pulled: true, verified: ['onnx/model_quantized.onnx'] });
    const again = await run(['model', 'pull', 'acme/tiny-encoder', '--if-reachable'], { HF_ENDPOINT: endpoint });
    expect(again.stderr).toContain('already installed');
    const down = await run(['model', 'pull', '--if-reachable'], { HF_ENDPOINT: 'http://127.0.0.1:1/', ENGRAM_HOME: tempDir() });
    expect(down.code).toBe(0);
    expect(down.stderr.trim().split('\n')).toHaveLength(1);
    expect(down.stderr).toMatch(/^engram: the model hub http:\/\/127\.0\.0\.1:1\/ is not reachable \(.+\); search keeps using /);
  }, 60_000);

  it('fails clearly for an unknown model or a bad id', async () => {
    const missing = await pullModel({ id: 'acme/does-not-exist', modelsDir: tempDir(), endpoint }).catch((e: unknown) => e);
    expect((missing as Error).message).toContain('HTTP 404');
    const bad = await pullModel({ id: '../etc', modelsDir: tempDir(), endpoint }).catch((e: unknown) => e);
    expect((bad as { code: string }).code).toBe('INVALID_INPUT');
  });
});
