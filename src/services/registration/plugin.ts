import { hookGroups, isEngramHookCommand } from '../../../scripts/hook-registry.mjs';
import type { HookGroup } from '../../../scripts/hook-registry.d.mts';
import pluginManifest from '../../../plugin.json' with { type: 'json' };

/** The agents Engram registers hooks with. */
export const AGENTS = ['claude', 'codex'] as const;
export type Agent = (typeof AGENTS)[number];

/** plugin.json as bundled with this build: the one list of Engram's hooks. */
const PLUGIN = pluginManifest as { name: string; hooks: Parameters<typeof hookGroups>[0]['hooks'] };

/** Engram's hook groups for one agent, with commands that run `<root>/hooks/run.sh` (an absolute install folder). */
export function engramHookGroups(agent: Agent, root: string): Record<string, HookGroup[]> {
  return hookGroups(PLUGIN, agent, root);
}

/** The events Engram registers for one agent, in plugin.json order (hooks limited to other agents left out). */
export function engramEvents(agent: Agent): string[] {
  return PLUGIN.hooks.filter((hook) => !hook.agents || hook.agents.includes(agent)).map((hook) => hook.event);
}

/** `SessionStart` → `session_start`: how Codex names events in trust keys. */
export function snakeEvent(event: string): string {
  return event.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** True for a hook command that runs Engram's launcher, from any install folder. */
export function isEngramCommand(command: unknown): command is string {
  return isEngramHookCommand(command);
}

/**
 * The install folder an Engram command runs from (`sh "<root>/hooks/run.sh" …`, or before the shell front
 * `node [--option …] "<root>/hooks/run.cjs" …`; the options are
 * scripts/hook-registry.mjs HOOK_NODE_OPTIONS, or none in commands registered before them), or undefined when the
 * command is not in that form (a plugin placeholder, a hand-written variant).
 */
export function commandRoot(command: string): string | undefined {
  const quoted = /^(?:node (?:--[a-z0-9-]+(?:=[^\s"]+)? )*"([^"]+)\/hooks\/run\.[cm]js"|sh "([^"]+)\/hooks\/run\.sh")/.exec(command);
  const folder = quoted?.[1] ?? quoted?.[2];
  if (folder) return folder.includes('${') ? undefined : folder;
  const bare = /^node (?:--[a-z0-9-]+(?:=[^\s"]+)? )*(\/\S+)\/hooks\/run\.[cm]js /.exec(command);
  return bare?.[1];
}

/** Plugin ids Engram is installed under are `engram@<marketplace>`. */
export const isEngramPluginId = (id: string): boolean => id.startsWith(`${PLUGIN.name}@`);
