import type { Config } from '../config.js';
import type { EngramEnv } from '../env.js';

/** Which agent's MCP configuration to read; `unknown` reads both Claude Code's and Codex's. */
export type EnvironmentAgent = 'claude' | 'codex' | 'unknown';

/** What `detectEnvironment` needs. Everything is passed in; nothing is read from `process`. */
export interface EnvironmentOptions {
  /** The folder the agent works in. */
  cwd: string;
  agent: EnvironmentAgent;
  /** From core/env.ts `readEnv()`: the user's home and the agents' config folders. */
  env: EngramEnv;
  /** config.json's `tags` section, parsed. */
  rules: Config['tags'];
  /** Where per-folder results are cached (`<settings.paths.cache>/env`); null = no caching at all. */
  cacheDir: string | null;
  /** The OS, for tests. @default process.platform */
  platform?: NodeJS.Platform;
  /**
   * For a long-running process (the warm server, which answers every hook): how long a folder's result held in memory
   * is served without stat'ing its inputs again, in ms — a change to one of them is seen at most this late (they are
   * project files: package.json, .git/config, MCP configs). @default 0: every call looks at them.
   */
  recheckAfterMs?: number;
  /** The clock `recheckAfterMs` counts with, for tests. @default Date.now */
  now?: () => number;
}

/** Where the agent works, as hooks and recall see it. */
export interface DetectedEnvironment {
  /** `linux`, `darwin`, `windows` (Node's `win32`), or another `process.platform` value as it is. */
  os: string;
  /** The folder, resolved to an absolute path. */
  cwd: string;
  /** The user's home folder. */
  home: string;
  /** The project name (core/repo.ts): the main working tree's folder name, shared by its worktrees. */
  repo: string | null;
  /** The working tree that contains cwd (a linked worktree's own root). */
  repoRoot: string | null;
  /** Remote URLs from the git config, credentials removed. */
  remotes: string[];
  /** MCP servers configured for the agent: sorted, unique. */
  mcpServers: string[];
  /** Environment tags: sorted, unique, normalised like engram tags. */
  tags: string[];
  /** Tag → why it was detected, e.g. `["file marker tsconfig.json", "dependency typescript"]`. */
  reasons: Record<string, string[]>;
  /** `hit`: reused from the cache; `miss`: detected now; `off`: no cache was asked for. */
  cache: 'hit' | 'miss' | 'off';
  /** Time this call took, in milliseconds. */
  ms: number;
  /** Problems met (an unreadable or malformed file…); detection never throws. */
  errors: string[];
}

/** The part of a result that is cached: everything but how this call got it. */
export type CachedEnvironment = Omit<DetectedEnvironment, 'cache' | 'ms'>;
