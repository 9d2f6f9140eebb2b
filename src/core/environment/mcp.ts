import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { EngramEnv } from '../env.js';
import type { InputLog, Stamp } from './inputs.js';
import type { EnvironmentAgent } from './types.js';

/** `.claude.json` holds Claude Code's whole state and grows to several MB; beyond this it is not read at all. */
const MAX_AGENT_CONFIG_BYTES = 32 * 1024 * 1024;
/** Project files (`.mcp.json`, `.codex/config.toml`) are hand-written and small. */
const MAX_PROJECT_CONFIG_BYTES = 1024 * 1024;
/** Server names longer than this are not names anyone configured on purpose. */
const MAX_NAME_CHARS = 200;

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

const serverNames = (servers: unknown): string[] =>
  isObject(servers) ? Object.keys(servers).filter((name) => name.trim() !== '' && name.length <= MAX_NAME_CHARS) : [];

const stringList = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item) => typeof item === 'string') : []);

/**
 * Claude Code's global state file: `$CLAUDE_CONFIG_DIR/.claude.json` when that variable relocates the config, else
 * `~/.claude.json` (in the home folder, not inside `~/.claude`). `EngramEnv.claudeConfigDir` defaults to `~/.claude`,
 * so the default value means "not relocated".
 */
export function claudeStatePath(env: EngramEnv): string {
  const relocated = env.claudeConfigDir !== join(env.userHome, '.claude');
  return join(relocated ? env.claudeConfigDir : env.userHome, '.claude.json');
}

/** What detection needs from `.claude.json`: user-scope servers and, per project folder, local-scope servers. */
interface ClaudeState {
  userServers: string[];
  projects: Map<string, { servers: string[]; disabledMcpJson: string[] }>;
}

/**
 * Parsed `.claude.json` summaries by path, reused while the file's stamp is unchanged: a long-running process that
 * asks about many folders parses the (large) file once.
 */
const claudeStates = new Map<string, { stamp: Stamp; state: ClaudeState }>();

function readClaudeState(path: string, log: InputLog): ClaudeState | undefined {
  log.stat(path);
  const stamp = log.stamps.get(path) as Stamp;
  const known = claudeStates.get(path);
  if (known && known.stamp === stamp) return known.state;
  const text = readConfig(path, MAX_AGENT_CONFIG_BYTES, log);
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    log.errors.push(`${path} is not valid JSON: ${(error as Error).message}`);
    return undefined;
  }
  if (!isObject(raw)) return undefined;
  const projects = new Map<string, { servers: string[]; disabledMcpJson: string[] }>();
  if (isObject(raw.projects)) {
    for (const [folder, project] of Object.entries(raw.projects)) {
      if (!isObject(project)) continue;
      const servers = serverNames(project.mcpServers);
      const disabledMcpJson = stringList(project.disabledMcpjsonServers);
      if (servers.length || disabledMcpJson.length) projects.set(folder, { servers, disabledMcpJson });
    }
  }
  const state: ClaudeState = { userServers: serverNames(raw.mcpServers), projects };
  claudeStates.set(path, { stamp, state });
  return state;
}

/** Reads a config file for its text; absent → undefined, oversized → an error and undefined. */
function readConfig(path: string, maxBytes: number, log: InputLog): string | undefined {
  const file = log.readText(path, maxBytes);
  if (!file) return undefined;
  if (file.truncated) {
    log.errors.push(`${path} is ${file.size} bytes, more than ${maxBytes}; its MCP servers were not read`);
    return undefined;
  }
  return file.text;
}

/** `mcpServers` keys of a project's `.mcp.json`. */
function readMcpJson(path: string, log: InputLog): string[] {
  const text = readConfig(path, MAX_PROJECT_CONFIG_BYTES, log);
  if (text === undefined) return [];
  try {
    const raw: unknown = JSON.parse(text);
    return isObject(raw) ? serverNames(raw.mcpServers) : [];
  } catch (error) {
    log.errors.push(`${path} is not valid JSON: ${(error as Error).message}`);
    return [];
  }
}

/** `[mcp_servers.<name>]` tables of a Codex config.toml, without those switched off by `enabled = false`. */
function readCodexToml(path: string, maxBytes: number, log: InputLog): string[] {
  const text = readConfig(path, maxBytes, log);
  if (text === undefined) return [];
  try {
    const servers = parseToml(text).mcp_servers;
    return serverNames(servers).filter((name) => {
      const server = (servers as JsonObject)[name];
      return !(isObject(server) && server.enabled === false);
    });
  } catch (error) {
    log.errors.push(`${path} is not valid TOML: ${(error as Error).message.split('\n')[0]}`);
    return [];
  }
}

/** Where detection looks: the repository root and the cwd (the same folder once when they are equal). */
export interface ProjectFolders {
  cwd: string;
  repoRoot: string | null;
}

const projectFolders = ({ cwd, repoRoot }: ProjectFolders): string[] => (repoRoot && repoRoot !== cwd ? [repoRoot, cwd] : [cwd]);

/**
 * Claude Code's MCP servers: user scope (`mcpServers` in `.claude.json`), local scope (`projects[<folder>].mcpServers`
 * there) and project scope (`.mcp.json` at the repository root or cwd, minus the folder's `disabledMcpjsonServers`).
 * Servers that plugins bring are not listed: they live in each plugin's own manifest.
 */
function claudeServers(env: EngramEnv, folders: ProjectFolders, log: InputLog): string[] {
  const names: string[] = [];
  const disabled = new Set<string>();
  const state = readClaudeState(claudeStatePath(env), log);
  if (state) {
    names.push(...state.userServers);
    for (const folder of projectFolders(folders)) {
      const project = state.projects.get(folder);
      names.push(...(project?.servers ?? []));
      project?.disabledMcpJson.forEach((name) => disabled.add(name));
    }
  }
  for (const folder of projectFolders(folders)) {
    names.push(...readMcpJson(join(folder, '.mcp.json'), log).filter((name) => !disabled.has(name)));
  }
  return names;
}

/** Codex's MCP servers: `$CODEX_HOME/config.toml` and a project's `.codex/config.toml` (root and cwd). */
function codexServers(env: EngramEnv, folders: ProjectFolders, log: InputLog): string[] {
  return [
    ...readCodexToml(join(env.codexHome, 'config.toml'), MAX_AGENT_CONFIG_BYTES, log),
    ...projectFolders(folders).flatMap((folder) =>
      readCodexToml(join(folder, '.codex', 'config.toml'), MAX_PROJECT_CONFIG_BYTES, log),
    ),
  ];
}

/** Names of the MCP servers configured for the agent, sorted and unique. */
export function detectMcpServers(agent: EnvironmentAgent, env: EngramEnv, folders: ProjectFolders, log: InputLog): string[] {
  const names = [
    ...(agent === 'codex' ? [] : claudeServers(env, folders, log)),
    ...(agent === 'claude' ? [] : codexServers(env, folders, log)),
  ];
  return [...new Set(names)].sort();
}

/** Forgets parsed `.claude.json` summaries (tests). */
export function clearMcpMemory(): void {
  claudeStates.clear();
}
