import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { claudeStatePath, type EngramEnv } from '../../core/index.js';
import {
  claudePluginState,
  codexMcpEntry,
  codexPluginState,
  engramMcpEntry,
  entryRoot,
  inspectClaude,
  inspectCodex,
  projectRoot,
  readCodexConfig,
} from '../registration/index.js';
import type { Check } from './report.js';

/** How long doctor waits for `engram mcp` to answer initialize and tools/list. */
const START_TIMEOUT_MS = 15_000;

/** An object's `mcpServers.engram`, if the JSON file has one. */
function jsonEntry(file: string, pick: (data: Record<string, unknown>) => unknown = (data) => data.mcpServers): Record<string, unknown> | undefined {
  try {
    const servers = pick(JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) as Record<string, unknown> | undefined;
    const entry = servers?.engram;
    return typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A registered entry that runs an install folder that is gone is broken; one that runs another install is stale. */
function rootProblem(entry: Record<string, unknown>, installRoot: string): string | undefined {
  const root = entryRoot(entry);
  if (root === undefined || root.includes('${')) return undefined;
  if (!existsSync(join(root, 'bin', 'engram'))) return `it runs ${root}/bin/engram, which does not exist`;
  if (root !== installRoot) return `it runs the Engram in ${root}, not this one (${installRoot})`;
  return undefined;
}

/**
 * Is Engram's MCP server registered with Claude Code? By the enabled plugin (whose manifest declares it), in
 * `.claude.json` (user scope, from `claude mcp add`) or the project's `.mcp.json`.
 */
export function checkClaudeMcp(env: EngramEnv, options: { installRoot: string; cwd?: string | undefined }): Check {
  const where: string[] = [];
  const problems: string[] = [];
  for (const id of claudePluginState(env).enabled) {
    const path = claudePluginState(env).install_path;
    const manifest = path ? jsonEntry(join(path, '.claude-plugin', 'plugin.json')) : undefined;
    if (manifest || !path) where.push(`the plugin ${id}`);
    else problems.push(`the plugin ${id} (${path}) declares no MCP server: update it`);
  }
  const files = [
    { file: claudeStatePath(env), entry: jsonEntry(claudeStatePath(env)) },
    ...(options.cwd ? [{ file: join(projectRoot(options.cwd), '.mcp.json'), entry: jsonEntry(join(projectRoot(options.cwd), '.mcp.json')) }] : []),
  ];
  for (const { file, entry } of files) {
    if (!entry) continue;
    const problem = rootProblem(entry, options.installRoot);
    if (problem) problems.push(`${file}: ${problem}`);
    else where.push(file);
  }
  const fix = `claude mcp add --scope user engram -- ${[engramMcpEntry(options.installRoot).command, ...engramMcpEntry(options.installRoot).args].join(' ')}`;
  if (problems.length) return { name: 'claude_mcp', status: 'degraded', detail: problems.join('; '), fix };
  if (where.length) return { name: 'claude_mcp', status: 'ok', detail: `Engram's MCP server is registered by ${where.join(' and ')}` };
  if (inspectClaude(env, options).status === 'skipped') return { name: 'claude_mcp', status: 'skipped', detail: 'Claude Code is not set up here' };
  return { name: 'claude_mcp', status: 'degraded', detail: "Claude Code has no Engram MCP server: the agent cannot search, save or correct its memory", fix };
}

/** Is Engram's MCP server registered with Codex (`[mcp_servers.engram]` in the user's or the project's config.toml)? */
export function checkCodexMcp(env: EngramEnv, options: { installRoot: string; cwd?: string | undefined }): Check {
  const files = [join(env.codexHome, 'config.toml'), ...(options.cwd ? [join(projectRoot(options.cwd), '.codex', 'config.toml')] : [])];
  const found = files.map((file) => ({ file, entry: codexMcpEntry(file) })).filter((item) => item.entry !== undefined);
  // A plugin install gets it from Codex's own CLI (installing the hooks from settings too would run them twice).
  const entry = engramMcpEntry(options.installRoot);
  const fix = codexPluginState(readCodexConfig(env).config).enabled.length
    ? `codex mcp add engram -- ${[entry.command, ...entry.args].join(' ')}`
    : 'engram hooks install --agent codex   (it also writes [mcp_servers.engram] into config.toml)';
  const problems = found.flatMap(({ file, entry }) => {
    const problem = rootProblem(entry as Record<string, unknown>, options.installRoot);
    return problem ? [`${file}: ${problem}`] : [];
  });
  if (problems.length) return { name: 'codex_mcp', status: 'degraded', detail: problems.join('; '), fix };
  if (found.length) return { name: 'codex_mcp', status: 'ok', detail: `Engram's MCP server is registered in ${found.map((item) => item.file).join(' and ')}` };
  if (inspectCodex(env, options).status === 'skipped') return { name: 'codex_mcp', status: 'skipped', detail: 'Codex is not set up here' };
  return { name: 'codex_mcp', status: 'degraded', detail: 'Codex has no Engram MCP server ([mcp_servers.engram] in config.toml)', fix };
}

/** Does `engram mcp` start? Runs it as an agent would and asks for initialize and tools/list (no tool is called). */
export function checkMcpStarts(env: EngramEnv, options: { installRoot: string }): Check {
  const request = (id: number, method: string, params: object = {}) => `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`;
  const input =
    request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'engram-doctor', version: '1' } }) +
    `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n` +
    request(2, 'tools/list');
  const started = performance.now();
  const result = spawnSync(process.execPath, [join(options.installRoot, 'bin', 'engram'), 'mcp'], {
    input,
    encoding: 'utf8',
    timeout: START_TIMEOUT_MS,
    env: { ...process.env, ENGRAM_HOME: env.home },
  });
  const ms = Math.round(performance.now() - started);
  const answers = new Map<number, { result?: { serverInfo?: { name?: string }; tools?: unknown[] } }>();
  for (const line of (result.stdout ?? '').split('\n')) {
    try {
      const message = JSON.parse(line) as { id?: number };
      if (typeof message.id === 'number') answers.set(message.id, message as never);
    } catch {
      // Not a frame: reported below if nothing usable came.
    }
  }
  const tools = answers.get(2)?.result?.tools;
  if (answers.get(1)?.result?.serverInfo?.name === 'engram' && Array.isArray(tools)) {
    return { name: 'mcp_server', status: 'ok', detail: `engram mcp answers initialize and lists ${tools.length} tools (${ms} ms)` };
  }
  const why = result.error ? result.error.message : (result.stderr ?? '').trim().split('\n').at(-1) || `exit ${result.status}`;
  return { name: 'mcp_server', status: 'error', detail: `engram mcp did not answer initialize and tools/list: ${why}`, fix: 'engram doctor again after ./install.sh; see $ENGRAM_HOME/logs/mcp.log' };
}
