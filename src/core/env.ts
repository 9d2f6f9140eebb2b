import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import * as z from 'zod';
import { engramHome } from '../../scripts/home.mjs';

/** Log levels, most verbose first. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export const LogLevelSchema = z.enum(LOG_LEVELS);
export type LogLevel = z.infer<typeof LogLevelSchema>;

/**
 * Everything Engram reads from the process environment. This module is the only one that touches `process.env`;
 * the rest of the code receives an `EngramEnv`.
 */
export interface EngramEnv {
  /** `$ENGRAM_HOME`, default `~/.engram`. Always absolute. */
  home: string;
  /** `$ENGRAM_LOG_LEVEL`, overrides config.json's `log.level`. */
  logLevel: LogLevel | undefined;
  /** The user's home folder (`$HOME`). */
  userHome: string;
  /** Claude Code's config root: `$CLAUDE_CONFIG_DIR`, default `~/.claude`. */
  claudeConfigDir: string;
  /** Codex's home: `$CODEX_HOME`, default `~/.codex`. */
  codexHome: string;
  /**
   * `$ENGRAM_INSTALL_ROOT`: the install folder (hooks/run.cjs, bin/engram, fixtures/), set by bin/engram when the CLI
   * it runs lives in a runtime folder outside it (scripts/install-state.mjs). Unset: the CLI's own folder.
   */
  installRoot: string | undefined;
  /** Set when a hook runs inside a plugin: `$CLAUDE_PLUGIN_ROOT` or Codex's `$PLUGIN_ROOT`. */
  pluginRoot: string | undefined;
  /** True when Codex launched us (`$PLUGIN_ROOT` or `$CODEX_HOME` is set), false when Claude Code did. */
  codexHookEnv: boolean;
  /** True when Claude Code launched us (`$CLAUDE_PROJECT_DIR` is only set by Claude Code). */
  claudeHookEnv: boolean;
  /** `$ENGRAM_EMBEDDER`: `transformers`, `use-lite`, `none`, `auto` (or `test`, for plumbing tests). */
  embedder: string | undefined;
  /** `$ENGRAM_MODEL_DIR`: a folder of local embedding models (transformers.js layout). */
  modelDir: string | undefined;
  /** `$ENGRAM_MODEL`: the model id inside `modelDir`. */
  model: string | undefined;
  /** `$HF_ENDPOINT`: a Hugging Face mirror for `engram model pull` (default https://huggingface.co). */
  hfEndpoint: string | undefined;
  /** `$HTTPS_PROXY` / `$HTTP_PROXY` / `$NO_PROXY` (either case): the proxies `engram model pull` goes through. */
  proxy: { https: string | undefined; http: string | undefined; none: string | undefined };
  /** `$ENGRAM_MODEL_PULL`: `off` stops ./install.sh and the first-run bootstrap from fetching the default model. */
  modelPull: 'off' | undefined;
  /** `$ENGRAM_SERVER`: `off` keeps hooks in-process (no background server). */
  server: 'off' | undefined;
  /** `$ENGRAM_HTTP`: `off` keeps the background server from serving the HTTP API. */
  http: 'off' | undefined;
  /** `$ENGRAM_PORT`: the HTTP API's port (the Go engram's variable, so its users' settings carry over); 0 = any. */
  port: number | undefined;
  /** `$ENGRAM_DATA_DIR`: the Go engram's data folder, where `engram import --from-go` looks for its engram.db. */
  goDataDir: string | undefined;
  /** `$ENGRAM_SERVER_IDLE_MS`: the background server's idle timeout in milliseconds (tests use a short one). */
  serverIdleMs: number | undefined;
  /**
   * `$ENGRAM_MEMORY_PROBE_MS`: the background server appends its memory figures to `logs/memory.jsonl` this often and
   * writes a heap snapshot on SIGUSR2 (bench/soak.mjs sets it; unset, neither happens).
   */
  memoryProbeMs: number | undefined;
  /** `$ENGRAM_LLM_PROVIDER`: `auto`, `none`, `openai` or `command` (validated with the config). */
  llmProvider: string | undefined;
  /** `$ENGRAM_LLM_BASE_URL`: an OpenAI-compatible endpoint such as `http://127.0.0.1:11434/v1`. */
  llmBaseUrl: string | undefined;
  /** `$ENGRAM_LLM_MODEL`: the model name sent to that endpoint. */
  llmModel: string | undefined;
  /**
   * `$ENGRAM_LLM_COMMAND` split into argv like a shell would split simple words: spaces separate, single and double
   * quotes group, a backslash escapes the next character; no variables, globs or pipes (see {@link splitCommand}).
   * The API key is deliberately not here: it is read at call time through {@link llmApiKey}, so it never sits in
   * Settings or reaches a log.
   */
  llmCommand: string[] | undefined;
}

type Vars = Record<string, string | undefined>;

const nonEmpty = (value: string | undefined): string | undefined => (value && value.trim() !== '' ? value : undefined);

const positiveNumber = (value: string | undefined): number | undefined => {
  const number = Number(nonEmpty(value));
  return Number.isFinite(number) && number > 0 ? number : undefined;
};

/** A TCP port number (0–65535), or undefined for anything else. */
const portNumber = (value: string | undefined): number | undefined => {
  const text = nonEmpty(value)?.trim();
  if (text === undefined || !/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port <= 65_535 ? port : undefined;
};

/**
 * Splits a command line into argv: whitespace separates words, `'…'` keeps its content literally, `"…"` keeps it
 * except that a backslash escapes `"` and itself, and an unquoted backslash escapes the next character. An unclosed
 * quote runs to the end. Nothing is expanded: the words go to `spawn` as they are, without a shell.
 */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i += 1) {
    const char = line[i] as string;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === '\\' && (line[i + 1] === '"' || line[i + 1] === '\\')) word += line[++i];
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/**
 * The LLM API key, read when a call is made from the variable named by `llm.api_key_env` (default
 * `ENGRAM_LLM_API_KEY`). Undefined when unset or blank: local servers need no key.
 */
export function llmApiKey(variableName: string, vars: Vars = process.env): string | undefined {
  return nonEmpty(vars[variableName])?.trim();
}

/** The HTTP API's token for remote access, read from the variable named by `http.token_env` when the API starts. */
export function httpToken(variableName: string, vars: Vars = process.env): string | undefined {
  return nonEmpty(vars[variableName])?.trim();
}

/**
 * The environment for a child process: ours plus `extra`. Here because this module is the only one that reads
 * `process.env`.
 */
export function childEnv(extra: Record<string, string>, vars: Vars = process.env): Record<string, string | undefined> {
  return { ...vars, ...extra };
}

/** Expands a leading `~` and makes a path absolute against `cwd`. */
function absolutePath(path: string, userHome: string, cwd: string): string {
  const expanded = path === '~' ? userHome : path.startsWith('~/') ? join(userHome, path.slice(2)) : path;
  return isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
}

/**
 * Reads Engram's environment variables.
 * @param vars the environment, default `process.env`
 * @param options `homedir` and `cwd` for tests
 */
export function readEnv(vars: Vars = process.env, options: { homedir?: string; cwd?: string } = {}): EngramEnv {
  const userHome = options.homedir ?? nonEmpty(vars.HOME) ?? homedir();
  const cwd = options.cwd ?? process.cwd();
  const level = nonEmpty(vars.ENGRAM_LOG_LEVEL)?.toLowerCase();
  return {
    home: engramHome(vars, { userHome, cwd }),
    logLevel: LogLevelSchema.safeParse(level).success ? (level as LogLevel) : undefined,
    userHome,
    claudeConfigDir: absolutePath(nonEmpty(vars.CLAUDE_CONFIG_DIR) ?? join(userHome, '.claude'), userHome, cwd),
    codexHome: absolutePath(nonEmpty(vars.CODEX_HOME) ?? join(userHome, '.codex'), userHome, cwd),
    installRoot: nonEmpty(vars.ENGRAM_INSTALL_ROOT) && absolutePath(vars.ENGRAM_INSTALL_ROOT as string, userHome, cwd),
    pluginRoot: nonEmpty(vars.CLAUDE_PLUGIN_ROOT) ?? nonEmpty(vars.PLUGIN_ROOT),
    codexHookEnv: Boolean(nonEmpty(vars.PLUGIN_ROOT) ?? nonEmpty(vars.CODEX_HOME)),
    claudeHookEnv: Boolean(nonEmpty(vars.CLAUDE_PROJECT_DIR)),
    embedder: nonEmpty(vars.ENGRAM_EMBEDDER)?.trim().toLowerCase(),
    modelDir: nonEmpty(vars.ENGRAM_MODEL_DIR) && absolutePath(vars.ENGRAM_MODEL_DIR as string, userHome, cwd),
    model: nonEmpty(vars.ENGRAM_MODEL)?.trim(),
    hfEndpoint: nonEmpty(vars.HF_ENDPOINT)?.trim(),
    proxy: {
      https: nonEmpty(vars.HTTPS_PROXY ?? vars.https_proxy)?.trim(),
      http: nonEmpty(vars.HTTP_PROXY ?? vars.http_proxy)?.trim(),
      none: nonEmpty(vars.NO_PROXY ?? vars.no_proxy)?.trim(),
    },
    modelPull: ['off', '0', 'false', 'no'].includes(nonEmpty(vars.ENGRAM_MODEL_PULL)?.trim().toLowerCase() ?? '') ? 'off' : undefined,
    server: ['off', '0', 'false', 'no'].includes(nonEmpty(vars.ENGRAM_SERVER)?.trim().toLowerCase() ?? '') ? 'off' : undefined,
    serverIdleMs: positiveNumber(vars.ENGRAM_SERVER_IDLE_MS),
    memoryProbeMs: positiveNumber(vars.ENGRAM_MEMORY_PROBE_MS),
    http: ['off', '0', 'false', 'no'].includes(nonEmpty(vars.ENGRAM_HTTP)?.trim().toLowerCase() ?? '') ? 'off' : undefined,
    port: portNumber(vars.ENGRAM_PORT),
    goDataDir: nonEmpty(vars.ENGRAM_DATA_DIR) && absolutePath(vars.ENGRAM_DATA_DIR as string, userHome, cwd),
    llmProvider: nonEmpty(vars.ENGRAM_LLM_PROVIDER)?.trim().toLowerCase(),
    llmBaseUrl: nonEmpty(vars.ENGRAM_LLM_BASE_URL)?.trim(),
    llmModel: nonEmpty(vars.ENGRAM_LLM_MODEL)?.trim(),
    llmCommand: nonEmpty(vars.ENGRAM_LLM_COMMAND) ? splitCommand(vars.ENGRAM_LLM_COMMAND as string) : undefined,
  };
}
