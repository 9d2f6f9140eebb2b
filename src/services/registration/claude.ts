import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import type { EngramEnv } from '../../core/index.js';
import { isEngramPluginId } from './plugin.js';

/** What `claude plugin install` writes to `<config>/plugins/installed_plugins.json` (observed with 2.1.197). */
const InstalledPluginsSchema = z.looseObject({
  plugins: z.record(z.string(), z.array(z.looseObject({ installPath: z.string().optional(), version: z.string().optional() }))).optional(),
});
const EnabledPluginsSchema = z.looseObject({ enabledPlugins: z.record(z.string(), z.unknown()).optional() });

/** Engram as a Claude Code plugin: the ids it is installed under and which of them are enabled. */
export interface ClaudePluginState {
  installed: string[];
  enabled: string[];
  version: string | undefined;
  install_path: string | undefined;
}

const readJson = <T>(file: string, schema: z.ZodType<T>): T | undefined => {
  try {
    const parsed = schema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Is Engram installed and enabled as a Claude Code plugin? Reads `plugins/installed_plugins.json` (where) and the user
 * settings' `enabledPlugins` (on or off).
 */
export function claudePluginState(env: EngramEnv): ClaudePluginState {
  const installed = readJson(join(env.claudeConfigDir, 'plugins', 'installed_plugins.json'), InstalledPluginsSchema);
  const ids = Object.keys(installed?.plugins ?? {}).filter(isEngramPluginId);
  const settings = readJson(join(env.claudeConfigDir, 'settings.json'), EnabledPluginsSchema);
  const first = ids[0] ? installed?.plugins?.[ids[0]]?.[0] : undefined;
  return {
    installed: ids,
    enabled: ids.filter((id) => settings?.enabledPlugins?.[id] === true),
    version: first?.version,
    install_path: first?.installPath,
  };
}
