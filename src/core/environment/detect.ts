import { resolve } from 'node:path';
import { LIMITS, normalizeTags } from '../engram.js';
import { findRepo } from '../repo.js';
import { clearMemory, contextHash, lookup, save } from './cache.js';
import { readRemotes } from './git.js';
import { InputLog } from './inputs.js';
import { claudeStatePath, clearMcpMemory, detectMcpServers } from './mcp.js';
import {
  BUILTIN_DEPENDENCY_TAGS,
  BUILTIN_DIR_PATTERNS,
  BUILTIN_FILE_MARKERS,
  BUILTIN_REMOTE_PATTERNS,
  detectTags,
  type TagReasons,
} from './tags.js';
import type { CachedEnvironment, DetectedEnvironment, EnvironmentOptions } from './types.js';

declare const __ENGRAM_BUILTIN_TABLES_HASH__: string | undefined;

/** The built-in tag tables: their content is part of every cached entry's context ({@link cacheContext}). */
export const builtinTables = (): unknown[] => [BUILTIN_REMOTE_PATTERNS, BUILTIN_FILE_MARKERS, BUILTIN_DEPENDENCY_TAGS, BUILTIN_DIR_PATTERNS];

/**
 * `contextHash(builtinTables())`, computed by scripts/build.mjs from these same tables and stamped into the bundles:
 * hashing their ~3 KB in JavaScript cost a hook that falls back ~3 ms on every event. Computed here when run from
 * source.
 */
const BUILT_TABLES_HASH = typeof __ENGRAM_BUILTIN_TABLES_HASH__ === 'string' ? __ENGRAM_BUILTIN_TABLES_HASH__ : undefined;

/** The OS name prerequisites use: Node's platform, with `win32` called `windows`. */
export const osName = (platform: NodeJS.Platform): string => (platform === 'win32' ? 'windows' : platform);

let builtinHash: string | undefined;
/** The last context computed: a process normally has one settings object, so this spares a hash per call. */
let lastContext: { rules: EnvironmentOptions['rules']; parts: string; value: string } | undefined;

/**
 * Everything besides files that shapes a result; part of the cache's validity check. Rules are compared by identity
 * for the memo (parsed config is never changed in place), then hashed by content.
 */
function cacheContext(options: EnvironmentOptions, platform: NodeJS.Platform): string {
  const { env, rules } = options;
  const parts = [platform, env.userHome, claudeStatePath(env), env.codexHome].join('\0');
  if (lastContext?.rules === rules && lastContext.parts === parts) return lastContext.value;
  builtinHash ??= BUILT_TABLES_HASH ?? contextHash(builtinTables());
  const value = contextHash([builtinHash, rules, parts]);
  lastContext = { rules, parts, value };
  return value;
}

/**
 * Normalises tags the way engram tags are (so the two compare), merging the reasons of tags that normalise alike.
 * A tag that is not valid is dropped with an error; past LIMITS.tags, the rest are dropped with one.
 */
function normalizedReasons(found: TagReasons, errors: string[]): Record<string, string[]> {
  const reasons = new Map<string, string[]>();
  for (const [raw, why] of found) {
    let tag: string | undefined;
    try {
      tag = normalizeTags([raw])[0];
    } catch (error) {
      errors.push(`tag '${raw}' dropped: ${(error as Error).message}`);
    }
    if (tag === undefined) continue;
    reasons.set(tag, [...new Set([...(reasons.get(tag) ?? []), ...why])]);
  }
  const tags = [...reasons.keys()].sort();
  if (tags.length > LIMITS.tags) {
    errors.push(`${tags.length} tags detected; only the first ${LIMITS.tags} (alphabetically) are kept`);
  }
  return Object.fromEntries(tags.slice(0, LIMITS.tags).map((tag) => [tag, reasons.get(tag) as string[]]));
}

/** Reads everything afresh, recording each input's stamp in `log`. */
function detect(options: EnvironmentOptions, cwd: string, platform: NodeJS.Platform, log: InputLog): CachedEnvironment {
  if (!log.stat(cwd)?.isDirectory()) log.errors.push(`${cwd} is not a folder that exists`);
  const repo = findRepo(cwd);
  const repoRoot = repo?.root ?? null;
  const remotes = repo ? readRemotes(repo.root, log) : [];
  const mcpServers = detectMcpServers(options.agent, options.env, { cwd, repoRoot }, log);
  const found = detectTags({ cwd, repoRoot, remotes, rules: options.rules, platform, log });
  const reasons = normalizedReasons(found, log.errors);
  return {
    os: osName(platform),
    cwd,
    home: options.env.userHome,
    repo: repo?.name ?? null,
    repoRoot,
    remotes,
    mcpServers,
    tags: Object.keys(reasons),
    reasons,
    errors: log.errors,
  };
}

/** A copy the caller may change without changing what is cached. */
function copy(result: CachedEnvironment): CachedEnvironment {
  return {
    ...result,
    remotes: [...result.remotes],
    mcpServers: [...result.mcpServers],
    tags: [...result.tags],
    reasons: Object.fromEntries(Object.entries(result.reasons).map(([tag, why]) => [tag, [...why]])),
    errors: [...result.errors],
  };
}

/**
 * Detects where the agent works: OS, repository, remotes, the agent's MCP servers and environment tags from five
 * sources (path, remotes, file markers, package.json dependencies, top-level folders). Results are cached per
 * folder and agent and reused while every file they were read from is unchanged (see docs/ENVIRONMENT.md).
 * Never throws: problems are listed in `errors`.
 */
export function detectEnvironment(options: EnvironmentOptions): DetectedEnvironment {
  const started = performance.now();
  const platform = options.platform ?? process.platform;
  const cwd = resolve(options.cwd);
  const elapsed = (): number => Math.round((performance.now() - started) * 1000) / 1000;
  try {
    const context = options.cacheDir === null ? '' : cacheContext(options, platform);
    if (options.cacheDir !== null) {
      const hit = lookup(options.cacheDir, cwd, options.agent, context, { recheckAfterMs: options.recheckAfterMs, now: options.now });
      if (hit) return { ...copy(hit.result), cache: 'hit', ms: elapsed() };
    }
    const startedAtMs = Date.now();
    const log = new InputLog();
    const result = detect(options, cwd, platform, log);
    if (options.cacheDir === null) return { ...result, cache: 'off', ms: elapsed() };
    const saved = save(
      options.cacheDir,
      { cwd, agent: options.agent, context, stamps: log.stamps, result: copy(result) },
      { startedAtMs, newestMtimeMs: log.newestMtimeMs },
    );
    const errors = saved.saved || saved.reason === 'racy' ? result.errors : [...result.errors, saved.error];
    return { ...result, errors, cache: 'miss', ms: elapsed() };
  } catch (error) {
    // A bug, not a condition we know: report it in the result rather than break the hook that asked.
    return {
      os: osName(platform),
      cwd,
      home: options.env.userHome,
      repo: null,
      repoRoot: null,
      remotes: [],
      mcpServers: [],
      tags: [],
      reasons: {},
      cache: options.cacheDir === null ? 'off' : 'miss',
      ms: elapsed(),
      errors: [`environment detection failed: ${error instanceof Error ? error.message : String(error)}`],
    };
  }
}

/** Forgets everything this process cached in memory (tests; files on disk stay). */
export function clearEnvironmentMemory(): void {
  clearMemory();
  clearMcpMemory();
}
