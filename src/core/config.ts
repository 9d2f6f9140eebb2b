import { existsSync, readFileSync } from 'node:fs';
import * as z from 'zod';
import type { EngramEnv } from './env.js';
import { LogLevelSchema } from './env.js';
import { EngramError } from './errors.js';
import { homePaths, type HomePaths } from './paths.js';

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

/** Environment variables win over config.json. */
function withEnvOverrides(config: Config, env: EngramEnv): Config {
  if (env.logLevel) config.log.level = env.logLevel;
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
    const config = withEnvOverrides(defaultConfig(), env);
    return {
      settings: { env, paths: homePaths(env.home), config, configSource: 'defaults' },
      configError: error instanceof EngramError ? error : new EngramError('CONFIG_INVALID', String(error)),
    };
  }
}
