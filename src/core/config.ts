import { existsSync, readFileSync } from 'node:fs';
import * as z from 'zod';
import type { EngramEnv } from './env.js';
import { LogLevelSchema } from './env.js';
import { EngramError } from './errors.js';
import { homePaths, type HomePaths } from './paths.js';

/** Embedder choices; see `embed.provider`. */
export const EMBEDDER_PROVIDERS = ['auto', 'transformers', 'use-lite', 'none', 'test'] as const;
export type EmbedderProvider = (typeof EMBEDDER_PROVIDERS)[number];

/**
 * `$ENGRAM_HOME/config.json`. Every key is optional; defaults are chosen so a user never needs the file.
 * Unknown keys are rejected: a typo in our own config should fail loudly, not be ignored.
 */
export const ConfigSchema = z.strictObject({
  capture: z
    .strictObject({
      /** Store the (redacted) text of user prompts the hooks see. @default true */
      prompts: z.boolean().default(true),
    })
    .prefault({}),
  log: z
    .strictObject({
      /** Minimum level written to `$ENGRAM_HOME/logs/`. @default "info" */
      level: LogLevelSchema.default('info'),
      /** A log file is rotated to `<name>.1` when it grows past this size. @default 5 MiB */
      max_bytes: z
        .number()
        .int()
        .min(64 * 1024)
        .max(1024 * 1024 * 1024)
        .default(5 * 1024 * 1024),
    })
    .prefault({}),
  store: z
    .strictObject({
      /** How long a CLI write waits for another writer before failing with STORE_LOCKED. @default 10000 */
      busy_timeout_ms: z.number().int().min(0).max(600_000).default(10_000),
    })
    .prefault({}),
  hooks: z
    .strictObject({
      /**
       * How long a hook waits for the write lock. Short on purpose: a hook that cannot write logs the miss and lets
       * the agent continue. @default 1500
       */
      busy_timeout_ms: z.number().int().min(0).max(30_000).default(1_500),
    })
    .prefault({}),
  embed: z
    .strictObject({
      /**
       * Which embedder makes vectors. `auto` picks the best real model on the machine: a configured or pulled
       * transformers.js model, else the Universal Sentence Encoder lite from npm, else none (BM25 only).
       * `test` is a deterministic hashing embedder for plumbing tests, never a real choice.
       * Overridden by `$ENGRAM_EMBEDDER`. @default "auto"
       */
      provider: z.enum(EMBEDDER_PROVIDERS).default('auto'),
      /** transformers.js model id (a folder inside `model_dir`), e.g. `Xenova/all-MiniLM-L6-v2`. `$ENGRAM_MODEL` wins. */
      model: z.string().min(1).max(200).optional(),
      /** Folder of local models; default `$ENGRAM_HOME/models`, where `engram model pull` puts them. `$ENGRAM_MODEL_DIR` wins. */
      model_dir: z.string().min(1).optional(),
      /** Texts per embedding call when indexing (import, reindex). Default: per embedder (services/recall/tuning.ts). */
      batch_size: z.number().int().min(1).max(1024).optional(),
    })
    .prefault({}),
  search: z
    .strictObject({
      /** Reciprocal rank fusion constant k (see services/recall/tuning.ts). */
      rrf_k: z.number().min(1).max(1000).optional(),
      /** Weight of the BM25 list in fusion. */
      bm25_weight: z.number().min(0).max(10).optional(),
      /** Weight of the vector list in fusion. */
      vector_weight: z.number().min(0).max(10).optional(),
      /** Results returned when the caller does not say. */
      top_k: z.number().int().min(1).max(100).optional(),
    })
    .prefault({}),
});

export type Config = z.infer<typeof ConfigSchema>;

/** The resolved configuration plus where it came from. */
export interface Settings {
  env: EngramEnv;
  paths: HomePaths;
  config: Config;
  /** `file` when config.json was read, `defaults` when it does not exist. */
  configSource: 'file' | 'defaults';
}

/** Formats zod issues as `path: message` lines. */
export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}

/** Parses config text, throwing CONFIG_INVALID with the file path and every problem found. */
export function parseConfig(text: string, path: string): Config {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new EngramError('CONFIG_INVALID', `${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw new EngramError('CONFIG_INVALID', `${path} is invalid: ${formatIssues(parsed.error)}`, {
      details: { path, issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
    });
  }
  return parsed.data;
}

/** Default configuration (what an absent config.json means). */
export function defaultConfig(): Config {
  return ConfigSchema.parse({});
}

/**
 * Environment variables win over config.json. A bad `$ENGRAM_EMBEDDER` is an error like a bad config value: silently
 * ignoring it would leave the user searching with a model they did not ask for.
 */
function withEnvOverrides(config: Config, env: EngramEnv): Config {
  if (env.logLevel) config.log.level = env.logLevel;
  if (env.embedder !== undefined) {
    const provider = z.enum(EMBEDDER_PROVIDERS).safeParse(env.embedder);
    if (!provider.success) {
      throw new EngramError(
        'CONFIG_INVALID',
        `ENGRAM_EMBEDDER must be one of ${EMBEDDER_PROVIDERS.join(', ')}, got '${env.embedder}'`,
      );
    }
    config.embed.provider = provider.data;
  }
  if (env.model) config.embed.model = env.model;
  if (env.modelDir) config.embed.model_dir = env.modelDir;
  return config;
}

/**
 * Loads settings for one process: paths from the environment, config.json if present, then environment overrides.
 * Throws CONFIG_INVALID for a broken config file; hooks catch that and fall back to `defaultConfig()`.
 */
export function loadSettings(env: EngramEnv): Settings {
  const paths = homePaths(env.home);
  const exists = existsSync(paths.config);
  const config = withEnvOverrides(exists ? parseConfig(readFileSync(paths.config, 'utf8'), paths.config) : defaultConfig(), env);
  return { env, paths, config, configSource: exists ? 'file' : 'defaults' };
}

/** Like loadSettings, but a broken config file yields defaults plus the error, for callers that must not fail. */
export function loadSettingsLeniently(env: EngramEnv): { settings: Settings; configError: EngramError | undefined } {
  try {
    return { settings: loadSettings(env), configError: undefined };
  } catch (error) {
    let config: Config;
    try {
      config = withEnvOverrides(defaultConfig(), env);
    } catch {
      config = withEnvOverrides(defaultConfig(), { ...env, embedder: undefined });
    }
    return {
      settings: { env, paths: homePaths(env.home), config, configSource: 'defaults' },
      configError: error instanceof EngramError ? error : new EngramError('CONFIG_INVALID', String(error)),
    };
  }
}
