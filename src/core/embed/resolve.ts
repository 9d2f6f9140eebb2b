import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import * as z from 'zod';
import type { Settings } from '../config.js';
import type { EmbedderChoice, EmbedderSpec } from './types.js';
import { useLiteInstalled } from './use-lite.js';

/** `$ENGRAM_HOME/models/engram-models.json`: what `engram model pull` fetched, and which one is the default. */
export const PulledModelsSchema = z.object({
  default: z.string().min(1).nullable(),
  models: z.array(z.object({ id: z.string().min(1), dim: z.number().int().positive(), pulled_at: z.string(), revision: z.string().optional() })),
});
export type PulledModels = z.infer<typeof PulledModelsSchema>;

export const PULLED_MODELS_FILE = 'engram-models.json';

/** Reads the pulled-models record; absent or unreadable means none. */
export function readPulledModels(modelsDir: string): PulledModels {
  try {
    return PulledModelsSchema.parse(JSON.parse(readFileSync(join(modelsDir, PULLED_MODELS_FILE), 'utf8')));
  } catch {
    return { default: null, models: [] };
  }
}

/** The folder models are read from: `embed.model_dir` (`~` and relative paths resolved against the home), else `$ENGRAM_HOME/models`. */
export function modelDirectory(settings: Settings): string {
  const configured = settings.config.embed.model_dir;
  if (!configured) return settings.paths.models;
  if (configured === '~' || configured.startsWith('~/')) return join(settings.env.userHome, configured.slice(1));
  return isAbsolute(configured) ? configured : resolve(settings.paths.home, configured);
}

/** The transformers.js files of a model folder, or why it is not usable. */
export function inspectModelFolder(folder: string): { ok: true; quantized: boolean } | { ok: false; missing: string } {
  if (!existsSync(join(folder, 'config.json'))) return { ok: false, missing: 'config.json' };
  if (!existsSync(join(folder, 'tokenizer.json'))) return { ok: false, missing: 'tokenizer.json' };
  if (existsSync(join(folder, 'onnx', 'model_quantized.onnx'))) return { ok: true, quantized: true };
  if (existsSync(join(folder, 'onnx', 'model.onnx'))) return { ok: true, quantized: false };
  return { ok: false, missing: 'onnx/model_quantized.onnx or onnx/model.onnx' };
}

function transformersChoice(model: string, modelDir: string, why: string): EmbedderChoice {
  const folder = join(modelDir, model);
  const files = inspectModelFolder(folder);
  if (!files.ok) {
    return {
      spec: null,
      reason: `embedding model '${model}' is not usable in ${modelDir} (${files.missing} missing); run 'engram model pull ${model}' or set ENGRAM_MODEL_DIR`,
    };
  }
  const spec: EmbedderSpec = { kind: 'transformers', model, modelDir, folder, quantized: files.quantized };
  return { spec, reason: why };
}

/**
 * Decides which embedder to use, without loading it. Order for `auto`: an explicitly configured model
 * (`ENGRAM_MODEL` / `embed.model`), then the default pulled hub model, then USE lite from npm, then none. The best
 * real model wins because a weak model's vectors can drag fusion below BM25 alone (see services/recall/tuning.ts).
 */
export function resolveEmbedder(settings: Settings): EmbedderChoice {
  const { provider, model } = settings.config.embed;
  const modelDir = modelDirectory(settings);
  switch (provider) {
    case 'none':
      return { spec: null, reason: 'embeddings are switched off (embed.provider / ENGRAM_EMBEDDER = none)' };
    case 'test':
      return { spec: { kind: 'test', model: 'test:hash' }, reason: 'deterministic test embedder (ENGRAM_EMBEDDER=test)' };
    case 'use-lite':
      return useLiteInstalled()
        ? { spec: { kind: 'use-lite', model: 'use-lite' }, reason: 'configured: Universal Sentence Encoder lite' }
        : { spec: null, reason: 'USE lite (@energetic-ai/embeddings) is not installed; run ./install.sh' };
    case 'transformers': {
      const chosen = model ?? readPulledModels(settings.paths.models).default;
      if (!chosen) {
        return { spec: null, reason: "embed.provider is transformers but no model is set; set ENGRAM_MODEL or run 'engram model pull'" };
      }
      return transformersChoice(chosen, modelDir, `configured transformers model ${chosen}`);
    }
    case 'auto': {
      if (model) return transformersChoice(model, modelDir, `configured model ${model}`);
      const pulled = readPulledModels(settings.paths.models).default;
      if (pulled) {
        const choice = transformersChoice(pulled, settings.paths.models, `pulled model ${pulled}`);
        if (choice.spec) return choice;
      }
      if (useLiteInstalled()) return { spec: { kind: 'use-lite', model: 'use-lite' }, reason: 'no hub model pulled; using USE lite from npm' };
      return { spec: null, reason: "no embedding model available; run 'engram model pull' (search uses BM25 only)" };
    }
  }
}

/**
 * The embedder that made a vector space, from the id its vectors are stored under (`use-lite`, `test:hash`,
 * `transformers:<model>`), so search can keep using an older space (and its model) while a new one is filled.
 */
export function choiceForModel(settings: Settings, modelId: string): EmbedderChoice {
  if (modelId === 'use-lite') {
    return useLiteInstalled() ? { spec: { kind: 'use-lite', model: 'use-lite' }, reason: 'earlier vectors (USE lite)' } : { spec: null, reason: 'USE lite is not installed' };
  }
  if (modelId === 'test:hash') return { spec: { kind: 'test', model: 'test:hash' }, reason: 'earlier vectors (test embedder)' };
  const model = modelId.startsWith('transformers:') ? modelId.slice('transformers:'.length) : modelId;
  for (const dir of [modelDirectory(settings), settings.paths.models]) {
    const choice = transformersChoice(model, dir, `earlier vectors (${model})`);
    if (choice.spec) return choice;
  }
  return { spec: null, reason: `the model of earlier vectors (${model}) is no longer on disk` };
}
