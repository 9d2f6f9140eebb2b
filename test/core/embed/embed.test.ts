import { createReadStream, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createHashingEmbedder,
  loadEmbedder,
  loadSettings,
  pullModel,
  readEnv,
  readPulledModels,
  resolveEmbedder,
  useLiteInstalled,
  type Embedder,
} from '../../../src/core/index.js';
import { hasModels, MODELS_DIR, tempDir, thrown } from '../../_helpers.js';

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
  }
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
  // (/<org>/<name>/resolve/main/<file>) and counts requests. Real HTTP, real transformers.js download code.
  let server: Server;
  let endpoint: string;
  const requests: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      requests.push(request.url ?? '');
      const match = /^\/acme\/tiny-encoder\/resolve\/main\/(.+)$/.exec(request.url ?? '');
      const file = match ? join(MODELS_DIR, 'ctx-use-256', decodeURIComponent(match[1] as string)) : '';
      if (!match || !existsSync(file) || file.includes('..')) {
        response.writeHead(404).end('not found');
        return;
      }
      response.writeHead(200, { 'content-length': statSync(file).size });
      createReadStream(file).pipe(response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('downloads into $ENGRAM_HOME/models, records it as the default, and auto then uses it offline', async () => {
    const home = tempDir();
    const progress: string[] = [];
    const result = await pullModel({
      id: 'acme/tiny-encoder',
      modelsDir: join(home, 'models'),
      endpoint,
      onProgress: (event) => progress.push(event.status),
    });
    expect(result).toMatchObject({ id: 'acme/tiny-encoder', dim: 256, quantized: true, default: true });
    expect(existsSync(join(home, 'models', 'acme', 'tiny-encoder', 'onnx', 'model_quantized.onnx'))).toBe(true);
    expect(requests.some((url) => url.endsWith('onnx/model_quantized.onnx'))).toBe(true);
    expect(progress).toContain('done');
    expect(readPulledModels(join(home, 'models')).default).toBe('acme/tiny-encoder');

    const settings = loadSettings(readEnv({ HOME: home, ENGRAM_HOME: home }));
    const choice = resolveEmbedder(settings);
    expect(choice.spec).toMatchObject({ kind: 'transformers', model: 'acme/tiny-encoder' });
    const before = requests.length;
    const embedder = await loadEmbedder(choice.spec!);
    await expectsMeaning(embedder);
    expect(requests.length).toBe(before); // loading never touches the network
  });

  it('fails clearly for an unknown model or a bad id', async () => {
    const missing = await pullModel({ id: 'acme/does-not-exist', modelsDir: tempDir(), endpoint }).catch((e: unknown) => e);
    expect((missing as Error).message).toContain('could not download acme/does-not-exist');
    const bad = await pullModel({ id: '../etc', modelsDir: tempDir(), endpoint }).catch((e: unknown) => e);
    expect((bad as { code: string }).code).toBe('INVALID_INPUT');
  });
});
