import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EngramEnv } from '../../core/index.js';
import type { Check } from './checks.js';

/** The hook events Engram registers for Codex (one handler each in hooks/codex-hooks.json). */
export const CODEX_HOOK_EVENTS = ['session_start', 'user_prompt_submit', 'stop', 'session_end'] as const;

const readJson = (path: string): unknown => {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
};

/**
 * Is Engram installed and enabled as a Claude Code plugin? Reads what `claude plugin install` writes:
 * `plugins/installed_plugins.json` (where) and `settings.json` `enabledPlugins` (on or off).
 */
export function checkClaude(env: EngramEnv): Check {
  const root = env.claudeConfigDir;
  const installed = readJson(join(root, 'plugins', 'installed_plugins.json')) as
    | { plugins?: Record<string, Array<{ installPath?: string; version?: string; scope?: string }>> }
    | undefined;
  const ids = Object.keys(installed?.plugins ?? {}).filter((id) => id.startsWith('engram@'));
  if (ids.length === 0) {
    return {
      name: 'claude',
      status: existsSync(root) ? 'degraded' : 'skipped',
      detail: existsSync(root)
        ? `Engram is not installed as a Claude Code plugin (no engram@… in ${join(root, 'plugins', 'installed_plugins.json')})`
        : `no Claude Code configuration at ${root}`,
      fix: 'claude plugin marketplace add <engram folder> && claude plugin install engram@engram',
    };
  }
  const settings = readJson(join(root, 'settings.json')) as { enabledPlugins?: Record<string, boolean> } | undefined;
  const enabled = ids.filter((id) => settings?.enabledPlugins?.[id] === true);
  const install = installed?.plugins?.[ids[0] as string]?.[0];
  if (enabled.length === 0) {
    return {
      name: 'claude',
      status: 'degraded',
      detail: `${ids.join(', ')} is installed but not enabled in ${join(root, 'settings.json')}`,
      fix: `claude plugin enable ${ids[0]}`,
    };
  }
  return {
    name: 'claude',
    status: 'ok',
    detail: `${enabled.join(', ')} enabled (version ${install?.version ?? '?'}, ${install?.installPath ?? 'unknown path'})`,
  };
}

/**
 * Is Engram installed, enabled and trusted as a Codex plugin? Codex runs a plugin hook only when config.toml holds a
 * `[hooks.state."<plugin>@<marketplace>:<hooks file>:<event>:…"]` trusted_hash for it, and skips it silently
 * otherwise, so untrusted hooks are reported as degraded.
 */
export function checkCodex(env: EngramEnv): Check {
  const file = join(env.codexHome, 'config.toml');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { name: 'codex', status: 'skipped', detail: `no Codex configuration at ${file}` };
  }
  const plugin = /^\[plugins\."(engram@[^"]+)"\]\s*\n(?:[^[]*?\n)?\s*enabled\s*=\s*(true|false)/m.exec(text);
  if (!plugin) {
    return {
      name: 'codex',
      status: 'degraded',
      detail: `Engram is not installed as a Codex plugin (no [plugins."engram@…"] in ${file})`,
      fix: 'codex plugin marketplace add <engram folder> && codex plugin add engram@engram',
    };
  }
  const id = plugin[1] as string;
  if (plugin[2] !== 'true') {
    return { name: 'codex', status: 'degraded', detail: `${id} is installed but disabled in ${file}` };
  }
  const trusted = CODEX_HOOK_EVENTS.filter((event) =>
    new RegExp(`^\\[hooks\\.state\\."${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:[^"]*:${event}:\\d+:\\d+"\\]\\s*\\n\\s*trusted_hash\\s*=`, 'm').test(text),
  );
  if (trusted.length < CODEX_HOOK_EVENTS.length) {
    return {
      name: 'codex',
      status: 'degraded',
      detail: `${id} is enabled, but only ${trusted.length} of ${CODEX_HOOK_EVENTS.length} of its hooks are trusted; Codex skips untrusted hooks without a word`,
      fix: 'start codex, open /hooks and trust the Engram hooks',
    };
  }
  return { name: 'codex', status: 'ok', detail: `${id} enabled, ${trusted.length} hooks trusted` };
}
