import { join } from 'node:path';
import { detectEnvironment, type Agent, type Settings } from '../../core/index.js';
import type { HookEnvironment } from './inject.js';

/**
 * Where an agent works, as hooks and the agent's tools see it: detected once per folder and cached (core/environment),
 * with the tag rules of config.json. `recheckAfterMs`: how long the warm server trusts a folder's result in memory
 * without stat'ing its inputs (core/environment).
 */
export function workEnvironment(settings: Settings, cwd: string, agent: Agent, options: { recheckAfterMs?: number } = {}): HookEnvironment {
  const found = detectEnvironment({
    cwd,
    agent,
    env: settings.env,
    rules: settings.config.tags,
    cacheDir: join(settings.paths.cache, 'env'),
    ...options,
  });
  return {
    agent,
    os: found.os,
    cwd: found.cwd,
    home: found.home,
    mcpServers: found.mcpServers,
    tags: found.tags,
    ...(found.repo ? { repo: found.repo } : {}),
  };
}
