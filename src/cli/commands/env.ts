import type { Command } from 'commander';
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { detectEnvironment, EngramError, type DetectedEnvironment, type EnvironmentAgent } from '../../core/index.js';
import type { Action } from '../action.js';

const AGENTS: readonly EnvironmentAgent[] = ['claude', 'codex', 'unknown'];

/** `--agent`: whose MCP configuration to read. */
function parseAgent(value: string | undefined): EnvironmentAgent {
  if (value === undefined) return 'unknown';
  const agent = value.trim().toLowerCase();
  if (!AGENTS.includes(agent as EnvironmentAgent)) {
    throw new EngramError('USAGE', `--agent must be claude or codex (or unknown for both), got '${value}'`);
  }
  return agent as EnvironmentAgent;
}

/** `--cwd`, resolved against the shell's folder; it must be an existing folder. */
function parseCwd(base: string, value: string | undefined): string {
  const cwd = resolve(base, value ?? '.');
  const stats = statSync(cwd, { throwIfNoEntry: false });
  if (!stats) throw new EngramError('NOT_FOUND', `--cwd ${cwd} does not exist`);
  if (!stats.isDirectory()) throw new EngramError('USAGE', `--cwd ${cwd} is not a folder`);
  return cwd;
}

/** Tags with their reasons, one per line, after the facts. */
function renderEnvironment(found: DetectedEnvironment): string {
  const width = Math.max(0, ...found.tags.map((tag) => tag.length));
  const lines = [
    `os: ${found.os}`,
    `cwd: ${found.cwd}`,
    `repo: ${found.repo ? `${found.repo} (${found.repoRoot})` : '—'}`,
    `remotes: ${found.remotes.join(', ') || '—'}`,
    `mcp servers: ${found.mcpServers.join(', ') || '—'}`,
    `tags:${found.tags.length ? '' : ' —'}`,
    ...found.tags.map((tag) => `  ${tag.padEnd(width)}  ${(found.reasons[tag] ?? []).join('; ')}`),
    `cache: ${found.cache} (${found.ms.toFixed(2)} ms)`,
    ...found.errors.map((error) => `problem: ${error}`),
  ];
  return lines.join('\n');
}

/** env. */
export function registerEnvCommands(program: Command, action: Action): void {
  program
    .command('env')
    .description('where the agent works: os, repository, remotes, MCP servers and environment tags with their reasons')
    .option('--cwd <dir>', 'the folder to describe (default: the current folder)')
    .option('--agent <agent>', "whose MCP servers to list: claude or codex (default: both)")
    .option('--no-cache', 'detect afresh, without reading or writing the cache')
    .action(
      action((context, flags: { cwd?: string; agent?: string; cache: boolean }) => {
        const agent = parseAgent(flags.agent);
        const cwd = parseCwd(context.io.cwd, flags.cwd);
        const settings = context.settings();
        const found = detectEnvironment({
          cwd,
          agent,
          env: settings.env,
          rules: settings.config.tags,
          cacheDir: flags.cache ? join(settings.paths.cache, 'env') : null,
        });
        return { result: found, pretty: () => renderEnvironment(found) };
      }),
    );
}
