import { existsSync, readFileSync } from 'node:fs';
import * as z from 'zod';
import { LIMITS, normalizeTags } from './engram.js';
import type { EngramEnv } from './env.js';
import { LogLevelSchema } from './env.js';
import { EngramError } from './errors.js';
import { homePaths, type HomePaths } from './paths.js';

/** Embedder choices; see `embed.provider`. */
export const EMBEDDER_PROVIDERS = ['auto', 'transformers', 'use-lite', 'none', 'test'] as const;
export type EmbedderProvider = (typeof EMBEDDER_PROVIDERS)[number];

/** LLM choices; see `llm.provider`. */
export const LLM_PROVIDERS = ['auto', 'none', 'openai', 'command'] as const;
export type LlmProviderSetting = (typeof LLM_PROVIDERS)[number];

/** An OpenAI-compatible base URL (`http://127.0.0.1:11434/v1`): http or https, no credentials in it. */
const llmBaseUrlSchema = () =>
  z
    .string()
    .min(1)
    .max(2000)
    .superRefine((value, context) => {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        context.addIssue({ code: 'custom', message: 'must be an http(s) URL such as http://127.0.0.1:11434/v1' });
        return;
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        context.addIssue({ code: 'custom', message: 'must be an http(s) URL such as http://127.0.0.1:11434/v1' });
      }
      if (url.username || url.password) {
        context.addIssue({ code: 'custom', message: 'must not carry credentials; put the key in the variable named by llm.api_key_env' });
      }
    });

/** Whether a host name or address only reaches this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const name = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return name === 'localhost' || name === '::1' || /^127(?:\.\d{1,3}){3}$/.test(name);
}

/** Upper bound on user tag rules of each kind: detection runs in hooks and must stay bounded. */
const MAX_TAG_RULES = 200;

/** Tags a rule adds; the same rule as engram tags (core/engram.ts normalizeTags), so the two can be compared. */
const ruleTagsSchema = () =>
  z
    .array(z.string().min(1))
    .min(1)
    .max(LIMITS.tags)
    .superRefine((tags, context) => {
      try {
        normalizeTags(tags);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
      }
    });

/** `{pattern, tags}`: the pattern must compile as a JavaScript regular expression (no flags). */
const tagRuleSchema = () =>
  z.strictObject({
    pattern: z
      .string()
      .min(1)
      .max(1000)
      .superRefine((pattern, context) => {
        try {
          new RegExp(pattern);
        } catch (error) {
          context.addIssue({ code: 'custom', message: `not a valid JavaScript regular expression: ${(error as Error).message}` });
        }
      }),
    tags: ruleTagsSchema(),
  });

/** Why a file marker or folder key was refused. */
const MARKER_RULE = 'must be a relative path of one or two segments (no leading /, no . or ..)';

/** A path relative to a folder: one or two `/`-separated segments, no `.` or `..`, so detection never looks deeper. */
function isMarkerPath(path: string): boolean {
  const segments = path.replace(/\/$/, '').split('/');
  return segments.length <= 2 && segments.every((segment) => !['', '.', '..'].includes(segment) && !segment.includes('\\'));
}

/** `{key: tags}` with at most MAX_TAG_RULES keys, each key checked by `validKey` (its problem named at its path). */
const tagMap = (validKey: (key: string) => boolean, keyRule: string) =>
  z.record(z.string(), ruleTagsSchema()).superRefine((map, context) => {
    const keys = Object.keys(map);
    if (keys.length > MAX_TAG_RULES) context.addIssue({ code: 'custom', message: `at most ${MAX_TAG_RULES} entries` });
    for (const key of keys) {
      if (key.length > 214 || !validKey(key)) context.addIssue({ code: 'custom', path: [key], message: `key ${keyRule}` });
    }
  });

/**
 * `$ENGRAM_HOME/config.json`. Every key is optional; defaults are chosen so a user never needs the file.
 * Unknown keys are rejected: a typo in our own config should fail loudly, not be ignored.
 */
const buildConfigSchema = () =>
  z.strictObject({
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
        /** Characters SessionStart may inject (pinned and project memories). Claude Code cuts a hook's context at
         * 10,000 characters and Codex drops oversized SessionStart output, so the cap stays well below. @default 3000 */
        session_start_chars: z.number().int().min(200).max(9_500).default(3_000),
        /** Characters one prompt's memories may take. @default 2000 */
        prompt_chars: z.number().int().min(200).max(9_500).default(2_000),
        /** Characters one tool call's memories may take. @default 1200 */
        tool_chars: z.number().int().min(200).max(9_500).default(1_200),
        /** Everything injected into one session's context, until a compaction empties it. @default 24000 */
        session_chars: z.number().int().min(1_000).max(1_000_000).default(24_000),
      })
      .prefault({}),
    tapes: z
      .strictObject({
        /** Record every ended session as a tape (in the repository's .engram/tapes/ when it opted in with `engram
         * init`, else under $ENGRAM_HOME/tapes/). Off: only `engram ingest` / `engram record` make tapes. @default true */
        record: z.boolean().default(true),
      })
      .prefault({}),
    server: z
      .strictObject({
        /** Run the background server that keeps the index and model warm for hooks. Off: hooks answer in-process
         * with BM25 alone. `$ENGRAM_SERVER=off` wins. @default true */
        enabled: z.boolean().default(true),
        /** The server exits after this many minutes without a request. @default 15 */
        idle_minutes: z.number().min(0.05).max(24 * 60).default(15),
      })
      .prefault({}),
    http: z
      .strictObject({
        /** Serve the Go engram's HTTP API from the background server (and `engram serve`). `$ENGRAM_HTTP=off` wins.
         * @default true */
        enabled: z.boolean().default(true),
        /** Where it listens. A name other than a loopback address needs `allow_remote` and a token. @default "127.0.0.1" */
        host: z.string().min(1).max(255).default('127.0.0.1'),
        /** Its port: the Go engram's, so its clients keep working. `$ENGRAM_PORT` wins; 0 picks a free port.
         * @default 7437 */
        port: z.number().int().min(0).max(65_535).default(7437),
        /** Allow a non-loopback `host`. Every request must then carry `Authorization: Bearer <token>` with the token
         * held in the variable named by `token_env`; without one the API does not start. @default false */
        allow_remote: z.boolean().default(false),
        /** Name of the environment variable holding the token for remote access (never the token itself).
         * @default "ENGRAM_HTTP_TOKEN" */
        token_env: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name')
          .default('ENGRAM_HTTP_TOKEN'),
        /** Longest a request may take before it is answered 503 (an import gets four times as long). @default 30000 */
        timeout_ms: z.number().int().min(1_000).max(600_000).default(30_000),
      })
      .prefault({})
      .superRefine((http, context) => {
        if (!http.allow_remote && !isLoopbackHost(http.host)) {
          context.addIssue({
            code: 'custom',
            path: ['host'],
            message: `${http.host} is not a loopback address; set http.allow_remote to true (and a token) to listen there`,
          });
        }
      }),
    sync: z
      .strictObject({
        /** Also share user prompts through `engram sync` (they stay on the machine by default: they are a person's
         * words, not project memory). @default false */
        prompts: z.boolean().default(false),
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
        /** Worker threads that embed a big import or reindex with USE lite, each with its own model (~120 MB); 0 or 1:
         * embed in the command's own thread. Default: cores − 1, at least 2 (none on one core). */
        workers: z.number().int().min(0).max(64).optional(),
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
    tags: z
      .strictObject({
        /** Use the built-in rules (docs/ENVIRONMENT.md lists them); user rules below are added to them. @default true */
        builtin: z.boolean().default(true),
        /** Regexes on the working directory (forward slashes on every OS), e.g. `{"pattern": "/work/acme/", "tags": ["acme"]}`. */
        path_patterns: z.array(tagRuleSchema()).max(MAX_TAG_RULES).default([]),
        /** Regexes on git remote URLs (credentials removed), e.g. `{"pattern": "github\\.com[:/]acme/", "tags": ["acme"]}`. */
        remote_patterns: z.array(tagRuleSchema()).max(MAX_TAG_RULES).default([]),
        /** A file or folder at the repository root or the cwd (`*` wildcards, at most two levels) → tags. */
        file_markers: tagMap(isMarkerPath, MARKER_RULE).default({}),
        /** A package.json dependency (`@scope/*` matches a whole scope) → tags. */
        dependency_tags: tagMap((key) => key.trim() !== '', 'must be a package name').default({}),
        /** A folder at the repository root (`packages/`, `src/components/`; at most two levels) → tags. */
        dir_patterns: tagMap(isMarkerPath, MARKER_RULE).default({}),
      })
      .prefault({}),
    governance: z
      .strictObject({
        /**
         * Let low-risk (tier 1) engrams from extraction, the agent (MCP) or sync become active without a person, when
         * nothing active contradicts them. Off by default: extraction is a model's reading of a conversation, and one
         * wrong lesson injected into every later session costs more than a right one waiting for `engram review`
         * (most sessions teach nothing, so the queue stays short). Tier 3 waits for a person whatever this says.
         * @default false
         */
        autopromote: z.boolean().default(false),
        /** Risk tier per engram kind, merged over the built-in table (docs/GOVERNANCE.md), e.g. `{"convention": 1}`.
         * Text that forbids or requires an action, or names credentials or production, is tier 3 whatever its kind. */
        tiers: z
          .record(z.string().min(1).max(LIMITS.kindChars), z.union([z.literal(1), z.literal(2), z.literal(3)]))
          .default({}),
        /** How long an engram of each kind stays fresh after a person confirmed it or it was last found useful
         * (`180d`, `8w`, `6m`, `1y`, or `never`), merged over the built-in table; `default` covers other kinds. A stale
         * engram is not injected unless pinned and is listed by `engram review` to be confirmed again. */
        decay: z
          .record(
            z.string().min(1).max(LIMITS.kindChars),
            z.string().regex(/^(never|[1-9]\d{0,4}[dwmy])$/, "must look like '180d', '8w', '6m', '1y' or 'never'"),
          )
          .default({}),
        /** Ask the configured LLM whether two similar engrams contradict (rules decide without one, or with `off`).
         * @default "auto" */
        conflict_llm: z.enum(['auto', 'off']).default('auto'),
        /** Characters `engram context sync` and the MCP `memory://recall` resource may use. @default 4000 */
        context_chars: z.number().int().min(500).max(50_000).default(4_000),
      })
      .prefault({}),
    llm: z
      .strictObject({
        /**
         * Which LLM evaluation and extraction use (docs/LLM.md). `auto`: `openai` when a base_url is set, else
         * `command` when a command is set, else `none` — no LLM, callers fall back to rules.
         * `$ENGRAM_LLM_PROVIDER` wins. @default "auto"
         */
        provider: z.enum(LLM_PROVIDERS).default('auto'),
        /** An OpenAI-compatible endpoint up to `/chat/completions`, e.g. `http://127.0.0.1:11434/v1`. `$ENGRAM_LLM_BASE_URL` wins. */
        base_url: llmBaseUrlSchema().optional(),
        /** Model name sent to the endpoint (required for `openai`); `$ENGRAM_LLM_MODEL` wins. */
        model: z.string().min(1).max(200).optional(),
        /** Name of the environment variable holding the API key. The key itself never goes in config.json. @default "ENGRAM_LLM_API_KEY" */
        api_key_env: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name')
          .default('ENGRAM_LLM_API_KEY'),
        /** A command that reads the prompt on stdin and prints the answer, as argv: `["claude", "-p", "--model", "haiku"]`. `$ENGRAM_LLM_COMMAND` wins. */
        command: z.array(z.string().min(1).max(4000)).min(1).max(64).optional(),
        /** How long one call may take before it is abandoned (the command's process group is killed). @default 60000 */
        timeout_ms: z.number().int().min(1_000).max(600_000).default(60_000),
        /** Retries after a network error, 408, 429 or 5xx (OpenAI-compatible only). @default 2 */
        max_retries: z.number().int().min(0).max(5).default(2),
        /** Calls one agent session may make. @default 20 */
        max_calls_per_session: z.number().int().min(0).max(100_000).default(20),
        /** Tokens (prompt + completion) one agent session may use. @default 100000 */
        max_tokens_per_session: z.number().int().min(0).max(100_000_000).default(100_000),
        /** Calls per UTC day, all sessions together. @default 200 */
        max_calls_per_day: z.number().int().min(0).max(1_000_000).default(200),
        /** Tokens (prompt + completion) per UTC day, all sessions together. @default 400000 */
        max_tokens_per_day: z.number().int().min(0).max(1_000_000_000).default(400_000),
        /** Longest prompt (system + user text) accepted; longer ones are refused, never cut, so callers excerpt. @default 24000 */
        max_prompt_chars: z.number().int().min(1_000).max(1_000_000).default(24_000),
      })
      .prefault({}),
  });

let builtConfigSchema: ReturnType<typeof buildConfigSchema> | undefined;

/**
 * The schema of `$ENGRAM_HOME/config.json`, built on first use: building its ~90 zod schemas cost every process that
 * loads core ~7 ms, and a hook without a config.json never needs it ({@link defaultConfig}).
 */
export function configSchema(): ReturnType<typeof buildConfigSchema> {
  return (builtConfigSchema ??= buildConfigSchema());
}

export type Config = z.infer<ReturnType<typeof buildConfigSchema>>;

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

/**
 * The config is parsed once per process: zod's compiled fast path for its ~20 objects (generated with `new Function`
 * on the first parse) would cost a hook more than it ever saves — 1.5–3 ms of an in-process fallback hook.
 */
const PARSE_ONCE = { jitless: true } as const;

/** Parses config text, throwing CONFIG_INVALID with the file path and every problem found. */
export function parseConfig(text: string, path: string): Config {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new EngramError('CONFIG_INVALID', `${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = configSchema().safeParse(raw, PARSE_ONCE);
  if (!parsed.success) {
    throw new EngramError('CONFIG_INVALID', `${path} is invalid: ${formatIssues(parsed.error)}`, {
      details: { path, issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
    });
  }
  return parsed.data;
}

declare const __ENGRAM_DEFAULT_CONFIG__: string | undefined;

/**
 * Default configuration (what an absent config.json means). The bundles carry it as JSON, computed by
 * scripts/build.mjs with the schema below, so a hook without a config.json builds no config schema at all; run from
 * source, the schema parses `{}`.
 */
export function defaultConfig(): Config {
  if (typeof __ENGRAM_DEFAULT_CONFIG__ === 'string') return JSON.parse(__ENGRAM_DEFAULT_CONFIG__) as Config;
  return configSchema().parse({}, PARSE_ONCE);
}

/**
 * Environment variables win over config.json. A bad `$ENGRAM_EMBEDDER`, `$ENGRAM_LLM_PROVIDER` or
 * `$ENGRAM_LLM_BASE_URL` is an error like a bad config value: silently ignoring it would leave the user searching with a
 * model, or sending prompts to an endpoint, they did not ask for.
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
  if (env.server === 'off') config.server.enabled = false;
  if (env.http === 'off') config.http.enabled = false;
  if (env.port !== undefined) config.http.port = env.port;
  if (env.serverIdleMs !== undefined) config.server.idle_minutes = env.serverIdleMs / 60_000;
  if (env.llmProvider !== undefined) {
    const provider = z.enum(LLM_PROVIDERS).safeParse(env.llmProvider);
    if (!provider.success) {
      throw new EngramError('CONFIG_INVALID', `ENGRAM_LLM_PROVIDER must be one of ${LLM_PROVIDERS.join(', ')}, got '${env.llmProvider}'`);
    }
    config.llm.provider = provider.data;
  }
  if (env.llmBaseUrl !== undefined) {
    const baseUrl = llmBaseUrlSchema().safeParse(env.llmBaseUrl);
    if (!baseUrl.success) throw new EngramError('CONFIG_INVALID', `ENGRAM_LLM_BASE_URL ${formatIssues(baseUrl.error).replace(/^\(root\): /, '')}`);
    config.llm.base_url = baseUrl.data;
  }
  if (env.llmModel) config.llm.model = env.llmModel;
  if (env.llmCommand) config.llm.command = env.llmCommand;
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
      config = withEnvOverrides(defaultConfig(), { ...env, embedder: undefined, llmProvider: undefined, llmBaseUrl: undefined });
    }
    return {
      settings: { env, paths: homePaths(env.home), config, configSource: 'defaults' },
      configError: error instanceof EngramError ? error : new EngramError('CONFIG_INVALID', String(error)),
    };
  }
}
