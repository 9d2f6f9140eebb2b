import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EngramError, findRepo, type EngramEnv } from '../../core/index.js';
import type { Agent } from './plugin.js';
import { snakeEvent } from './plugin.js';
import { engramEntries, type SettingsData } from './settings-file.js';

/** Where settings-file hooks go: the user's own settings, the repository's (shared), or the repository's local file. */
export const SCOPES = ['user', 'project', 'local'] as const;
export type Scope = (typeof SCOPES)[number];

/** The scopes an agent has: Codex has no local (uncommitted) hooks file. */
export function scopesFor(agent: Agent): Scope[] {
  return agent === 'claude' ? ['user', 'project', 'local'] : ['user', 'project'];
}

/** The repository `cwd` belongs to (its working tree root), or `cwd` itself outside git. */
export function projectRoot(cwd: string): string {
  return findRepo(cwd)?.root ?? resolve(cwd);
}

/**
 * The settings file that holds an agent's hooks at a scope. Claude Code: `$CLAUDE_CONFIG_DIR/settings.json`,
 * `<project>/.claude/settings.json`, `<project>/.claude/settings.local.json`. Codex: `$CODEX_HOME/hooks.json`,
 * `<project>/.codex/hooks.json`.
 */
export function settingsFileFor(agent: Agent, scope: Scope, env: EngramEnv, cwd: string): string {
  if (agent === 'claude') {
    if (scope === 'user') return join(env.claudeConfigDir, 'settings.json');
    return join(projectRoot(cwd), '.claude', scope === 'project' ? 'settings.json' : 'settings.local.json');
  }
  if (scope === 'local') {
    throw new EngramError(
      'USAGE',
      'Codex has no local hooks file: use --scope user ($CODEX_HOME/hooks.json) or --scope project (<repository>/.codex/hooks.json)',
    );
  }
  return scope === 'user' ? join(env.codexHome, 'hooks.json') : join(projectRoot(cwd), '.codex', 'hooks.json');
}

/** The path and, when it differs, the resolved path: Codex may name a file either way in its trust keys. */
export function pathVariants(file: string): string[] {
  try {
    const real = realpathSync(file);
    return real === file ? [file] : [file, real];
  } catch {
    return [file];
  }
}

/**
 * The trust keys Codex gives Engram's handlers in one hooks.json: `<absolute path>:<event_snake_case>:<group>:<handler>`
 * (observed with Codex 0.169.0).
 */
export function codexTrustKeys(file: string, data: SettingsData): string[] {
  return engramEntries(data).flatMap((entry) =>
    pathVariants(file).map((path) => `${path}:${snakeEvent(entry.event)}:${entry.group}:${entry.handler}`),
  );
}
