import { isAbsolute, join, relative } from 'node:path';
import type { Engram, EngramStatus, LearnedBy, Prerequisites, RecallFields } from '../../core/index.js';
import { injectable, type Freshness } from '../governance/index.js';

/**
 * What recall knows about where the agent is working. A field left undefined is unknown, and the gate that needs it
 * passes: search from a script or a benchmark has no environment, and hiding memories because we could not tell
 * would be worse than showing one whose condition we could not check.
 */
export interface SearchEnvironment {
  /** `linux`, `darwin` or `windows`. */
  os?: string;
  /** The project (repository) name, see core/repo. */
  repo?: string;
  /** The working directory. */
  cwd?: string;
  /** The user's home, for `~` in path prerequisites. */
  home?: string;
  /** MCP servers configured for the agent. */
  mcpServers?: readonly string[];
  /** Environment tags (for tag relevance; not a gate). */
  tags?: readonly string[];
}

/** Which engrams are visible: one project's, optionally with the personal ones (no project). */
export interface ProjectScope {
  project: string;
  includePersonal: boolean;
}

/** Hard filters a caller asks for. */
export interface SearchFilters {
  /** Hierarchical: `development` matches `development` and `development/frontend`. */
  category?: string;
  /** All of these tags. */
  tags?: readonly string[];
  scope?: ProjectScope;
  /** Review states returned. @default ['active'] — nothing unreviewed is found unless asked for. */
  statuses?: readonly EngramStatus[];
  /**
   * Pending engrams learned this way are returned too: the agent's own saves (`['agent']`) are found by its explicit
   * searches at once, marked pending, while hooks never pass this and so never inject them.
   */
  pendingLearnedBy?: readonly LearnedBy[];
  /** Hooks: leave out what may not be injected — stale engrams (unless pinned) and engrams whose code is gone. */
  injection?: Freshness;
}

/** The review states a search shows by default. */
export const DEFAULT_STATUSES: readonly EngramStatus[] = ['active'];

/** True when the engram's review state is one the caller asked for. */
export function statusVisible(engram: Pick<RecallFields, 'status' | 'learned_by'>, filters: Pick<SearchFilters, 'statuses' | 'pendingLearnedBy'>): boolean {
  if ((filters.statuses ?? DEFAULT_STATUSES).includes(engram.status)) return true;
  return engram.status === 'pending' && (filters.pendingLearnedBy?.includes(engram.learned_by) ?? false);
}

const OS_ALIASES: Record<string, string> = { macos: 'darwin', mac: 'darwin', osx: 'darwin', win32: 'windows', win: 'windows' };
const normalizeOs = (os: string): string => OS_ALIASES[os.toLowerCase()] ?? os.toLowerCase();

/** The OS name prerequisites use, for this process. */
export function currentOs(platform: NodeJS.Platform = process.platform): string {
  return normalizeOs(platform);
}

/** True when `dir` is `root` or inside it (directory boundaries: `/work/app` does not contain `/work/application`). */
function within(dir: string, root: string): boolean {
  const path = relative(root, dir);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

function expandHome(path: string, home: string | undefined): string {
  if (home && (path === '~' || path.startsWith('~/'))) return join(home, path.slice(1));
  return path;
}

/**
 * Structural prerequisites are hard gates: os, repos, paths (cwd inside one of them) and mcp_servers (all present).
 * `tags` is not a gate; tag relevance handles it.
 */
export function prerequisitesHold(prerequisites: Prerequisites | null, env: SearchEnvironment): boolean {
  if (!prerequisites) return true;
  const { os, repos, paths, mcp_servers: mcpServers } = prerequisites;
  if (os?.length && env.os !== undefined && !os.some((item) => normalizeOs(item) === normalizeOs(env.os as string))) {
    return false;
  }
  if (repos?.length && env.repo !== undefined) {
    const repo = (env.repo as string).toLowerCase();
    if (!repos.some((item) => item.toLowerCase() === repo)) return false;
  }
  if (paths?.length && env.cwd !== undefined) {
    const cwd = env.cwd as string;
    if (!paths.some((path) => within(cwd, expandHome(path, env.home)))) return false;
  }
  if (mcpServers?.length && env.mcpServers !== undefined) {
    const present = new Set(env.mcpServers);
    if (!mcpServers.every((server) => present.has(server))) return false;
  }
  return true;
}

/** True when an engram's category is `category` or below it. */
export const inCategory = (engramCategory: string, category: string): boolean =>
  engramCategory === category || engramCategory.startsWith(`${category}/`);

/** True when every requested tag is present. */
export const hasAllTags = (engramTags: readonly string[], tags: readonly string[] | undefined): boolean =>
  !tags?.length || tags.every((tag) => engramTags.includes(tag));

/** True when the engram is visible in the scope. */
export function inScope(engram: Pick<Engram, 'project'>, scope: ProjectScope | undefined): boolean {
  if (!scope) return true;
  return engram.project === scope.project || (scope.includePersonal && engram.project === null);
}

/**
 * Every hard gate, in one place: live, in a review state the caller asked for (active by default), injectable when
 * hooks ask (fresh or pinned, code not gone), the caller's filters, the structural prerequisites.
 */
export function passesGates(engram: RecallFields, filters: SearchFilters, env: SearchEnvironment): boolean {
  if (engram.deleted_at !== null || !statusVisible(engram, filters)) return false;
  if (filters.injection && !injectable(engram, filters.injection)) return false;
  if (filters.category !== undefined && !inCategory(engram.category, filters.category)) return false;
  if (!hasAllTags(engram.tags, filters.tags)) return false;
  if (!inScope(engram, filters.scope)) return false;
  return prerequisitesHold(engram.prerequisites, env);
}
