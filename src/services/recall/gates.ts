import { isAbsolute, join, relative } from 'node:path';
import type { Engram, Prerequisites, RecallFields } from '../../core/index.js';

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

/** Every hard gate, in one place: live, not deprecated, the caller's filters, the structural prerequisites. */
export function passesGates(engram: RecallFields, filters: SearchFilters, env: SearchEnvironment): boolean {
  if (engram.deleted_at !== null || engram.deprecated) return false;
  if (filters.category !== undefined && !inCategory(engram.category, filters.category)) return false;
  if (!hasAllTags(engram.tags, filters.tags)) return false;
  if (!inScope(engram, filters.scope)) return false;
  return prerequisitesHold(engram.prerequisites, env);
}
