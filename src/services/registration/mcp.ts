/**
 * Engram's MCP server in the agents' own configuration. plugin.json's `mcpServers.engram` is the one definition:
 * Claude Code's plugin manifest carries it as is (`${CLAUDE_PLUGIN_ROOT}`, scripts/manifests.mjs); for Codex, `engram
 * hooks install --agent codex` writes it as `[mcp_servers.engram]` in config.toml with this install's folder, and
 * `uninstall` removes exactly that table. The file is edited as text, so the user's other tables, keys and comments
 * stay as they were; the result is parsed again before it is written.
 * @module
 */
import { readFileSync, renameSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { EngramError } from '../../core/index.js';
import pluginManifest from '../../../plugin.json' with { type: 'json' };

/** How an MCP client starts Engram's server. */
export interface McpServerEntry {
  command: string;
  args: string[];
}

const PLUGIN = pluginManifest as unknown as { mcpServers: Record<string, McpServerEntry> };

/** Variables Engram reads that Codex does not pass to MCP servers unless told to (it passes a short default list). */
export const MCP_ENV_VARS = [
  'ENGRAM_HOME',
  'ENGRAM_SERVER',
  'ENGRAM_EMBEDDER',
  'ENGRAM_MODEL',
  'ENGRAM_MODEL_DIR',
  'ENGRAM_LOG_LEVEL',
  // The HTTP API's port and switch: a server the MCP entry starts serves where the user's shell says.
  'ENGRAM_PORT',
  'ENGRAM_HTTP',
  'CLAUDE_CONFIG_DIR',
  'CODEX_HOME',
];

/** plugin.json's server entry with the plugin root placeholder replaced by an install folder. */
export function engramMcpEntry(root: string): McpServerEntry {
  const entry = PLUGIN.mcpServers.engram;
  if (!entry) throw new EngramError('INTERNAL', 'plugin.json has no mcpServers.engram entry');
  const fill = (value: string): string => value.replaceAll('${CLAUDE_PLUGIN_ROOT}', root);
  return { command: fill(entry.command), args: entry.args.map(fill) };
}

/** The install folder an entry runs (`<root>/bin/engram`), if it has that form. */
export function entryRoot(entry: { args?: unknown }): string | undefined {
  const first = Array.isArray(entry.args) ? entry.args[0] : undefined;
  return typeof first === 'string' && first.endsWith('/bin/engram') ? dirname(dirname(first)) : undefined;
}

const MARKER = "# Engram's MCP server: written by `engram hooks install --agent codex`, removed by `engram hooks uninstall`";

/** `[mcp_servers.engram]`, `[mcp_servers."engram".env]`, … (quotes and spaces aside). */
const isEngramHeader = (line: string): boolean => {
  const header = /^\s*\[\[?([^\]]*)\]\]?\s*(#.*)?$/.exec(line);
  if (!header) return false;
  const key = (header[1] ?? '').replace(/["'\s]/g, '');
  return key === 'mcp_servers.engram' || key.startsWith('mcp_servers.engram.');
};
const isHeader = (line: string): boolean => /^\s*\[/.test(line);

function parse(text: string, file: string): Record<string, unknown> {
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (error) {
    throw new EngramError('INVALID_INPUT', `${file} is not valid TOML (${(error as Error).message.split('\n')[0]}); fix it first, nothing was changed`);
  }
}

const engramIn = (config: Record<string, unknown>): unknown => (config.mcp_servers as Record<string, unknown> | undefined)?.engram;

/** The text without Engram's tables (and the comment line that introduces them). */
function withoutEngram(text: string): string {
  const lines = text.split('\n');
  const kept: string[] = [];
  let skipping = false;
  for (const line of lines) {
    if (isHeader(line)) skipping = isEngramHeader(line);
    if (skipping) continue;
    kept.push(line);
  }
  const result: string[] = [];
  for (const [i, line] of kept.entries()) {
    // The marker belongs to the table just removed; an orphan marker is removed too.
    if (line === MARKER && !isEngramHeader(kept[i + 1] ?? '')) continue;
    result.push(line);
  }
  return result.join('\n').replace(/\n{3,}$/, '\n\n');
}

const tomlString = (value: string): string => JSON.stringify(value);

function block(entry: McpServerEntry): string {
  return [
    MARKER,
    '[mcp_servers.engram]',
    `command = ${tomlString(entry.command)}`,
    `args = [${entry.args.map(tomlString).join(', ')}]`,
    `env_vars = [${MCP_ENV_VARS.map(tomlString).join(', ')}]`,
    '',
  ].join('\n');
}

/** What registering or removing did to one config.toml. */
export interface McpRegistration {
  file: string;
  action: 'added' | 'updated' | 'unchanged' | 'removed' | 'absent';
  changed: boolean;
  entry?: McpServerEntry;
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw new EngramError('IO', `cannot read ${file}: ${(error as Error).message}`);
  }
}

/** Temp file + rename: a reader sees the old file or the new one, never half of one. */
function writeAtomically(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = join(dirname(file), `.${process.pid}.engram.tmp`);
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, file);
}

function sameEntry(found: unknown, wanted: McpServerEntry): boolean {
  if (typeof found !== 'object' || found === null) return false;
  const entry = found as Record<string, unknown>;
  return (
    entry.command === wanted.command &&
    JSON.stringify(entry.args) === JSON.stringify(wanted.args) &&
    JSON.stringify(entry.env_vars) === JSON.stringify(MCP_ENV_VARS) &&
    Object.keys(entry).every((key) => ['command', 'args', 'env_vars'].includes(key))
  );
}

/**
 * Registers this install's MCP server in a Codex config.toml (`[mcp_servers.engram]`), replacing an earlier Engram
 * entry and touching nothing else. Refuses a file that is not TOML, or that defines the entry in a form a line edit
 * cannot replace (an inline table or dotted keys), saying so.
 */
export function registerCodexMcp(file: string, root: string, options: { dryRun?: boolean } = {}): McpRegistration {
  const wanted = engramMcpEntry(root);
  const text = readText(file);
  const before = engramIn(parse(text, file));
  if (sameEntry(before, wanted)) return { file, action: 'unchanged', changed: false, entry: wanted };
  const rest = withoutEngram(text);
  if (engramIn(parse(rest, file)) !== undefined) {
    throw new EngramError(
      'INVALID_INPUT',
      `${file} defines mcp_servers.engram inline or with dotted keys; remove it by hand and run this again (nothing was changed)`,
    );
  }
  const next = `${rest.trimEnd()}${rest.trim() === '' ? '' : '\n\n'}${block(wanted)}`;
  if (!sameEntry(engramIn(parse(next, file)), wanted)) throw new EngramError('INTERNAL', `writing mcp_servers.engram into ${file} did not round-trip`);
  if (!options.dryRun) writeAtomically(file, next);
  return { file, action: before === undefined ? 'added' : 'updated', changed: true, entry: wanted };
}

/** Removes Engram's `[mcp_servers.engram]` tables from a Codex config.toml, and nothing else. */
export function unregisterCodexMcp(file: string, options: { dryRun?: boolean } = {}): McpRegistration {
  const text = readText(file);
  if (engramIn(parse(text, file)) === undefined) return { file, action: 'absent', changed: false };
  const next = withoutEngram(text);
  if (engramIn(parse(next, file)) !== undefined) {
    throw new EngramError('INVALID_INPUT', `${file} defines mcp_servers.engram inline or with dotted keys; remove it by hand (nothing was changed)`);
  }
  if (!options.dryRun) writeAtomically(file, next.trim() === '' ? '' : `${next.trimEnd()}\n`);
  return { file, action: 'removed', changed: true };
}

/** Engram's MCP entry in a Codex config.toml, or undefined (an unreadable file counts as none). */
export function codexMcpEntry(file: string): Record<string, unknown> | undefined {
  try {
    const found = engramIn(parseToml(readText(file)) as Record<string, unknown>);
    return typeof found === 'object' && found !== null ? (found as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
