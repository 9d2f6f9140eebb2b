import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import * as z from 'zod';
import { formatIssues, type EngramEnv } from '../../core/index.js';
import { isEngramPluginId } from './plugin.js';

/** The parts of Codex's config.toml Engram reads; everything else is ignored. */
const CodexConfigSchema = z.looseObject({
  plugins: z.record(z.string(), z.looseObject({ enabled: z.boolean().optional() })).optional(),
  hooks: z
    .looseObject({ state: z.record(z.string(), z.looseObject({ trusted_hash: z.string().optional() })).optional() })
    .optional(),
  features: z.looseObject({ hooks: z.boolean().optional(), codex_hooks: z.boolean().optional() }).optional(),
  projects: z.record(z.string(), z.looseObject({ trust_level: z.string().optional() })).optional(),
});
export type CodexConfig = z.infer<typeof CodexConfigSchema>;

/** `$CODEX_HOME/config.toml` as read: absent, unreadable (`error`), or its relevant content. */
export interface CodexConfigFile {
  file: string;
  exists: boolean;
  config: CodexConfig;
  error?: string;
}

/** Reads Codex's config.toml with a real TOML parser (tables may be written in any of TOML's equivalent forms). */
export function readCodexConfig(env: EngramEnv): CodexConfigFile {
  const file = join(env.codexHome, 'config.toml');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { file, exists: !missing, config: {}, ...(missing ? {} : { error: `cannot read ${file}: ${(error as Error).message}` }) };
  }
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (error) {
    return { file, exists: true, config: {}, error: `${file} is not valid TOML: ${(error as Error).message.split('\n')[0]}` };
  }
  const parsed = CodexConfigSchema.safeParse(raw);
  if (!parsed.success) return { file, exists: true, config: {}, error: `${file}: ${formatIssues(parsed.error)}` };
  return { file, exists: true, config: parsed.data };
}

/** Engram as a Codex plugin: the `[plugins."engram@…"]` tables and which are enabled. */
export interface CodexPluginState {
  installed: string[];
  enabled: string[];
}

export function codexPluginState(config: CodexConfig): CodexPluginState {
  const ids = Object.keys(config.plugins ?? {}).filter(isEngramPluginId);
  // Codex writes `enabled = true` when it adds a plugin; a table without the key counts as on.
  return { installed: ids, enabled: ids.filter((id) => config.plugins?.[id]?.enabled !== false) };
}

/** Keys with a recorded `trusted_hash` in `[hooks.state]`. Whether the hash still matches only Codex can tell. */
export function codexTrustedKeys(config: CodexConfig): Set<string> {
  return new Set(Object.entries(config.hooks?.state ?? {}).filter(([, state]) => typeof state.trusted_hash === 'string').map(([key]) => key));
}

/** False when config.toml turns hooks off (`[features] hooks = false`, or the older `codex_hooks`). */
export function codexHooksEnabled(config: CodexConfig): boolean {
  return config.features?.hooks !== false && config.features?.codex_hooks !== false;
}

/** Codex loads `<project>/.codex/` only for a project marked trusted in config.toml. */
export function codexProjectTrusted(config: CodexConfig, root: string): boolean {
  return config.projects?.[root]?.trust_level === 'trusted';
}
