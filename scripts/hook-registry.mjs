// How Engram's hooks are registered with each agent, derived from plugin.json's `hooks` list. One rule for the
// plugin manifests (scripts/manifests.mjs writes hooks/hooks.json and hooks/codex-hooks.json) and for
// `engram hooks install`, which writes the same groups into an agent's settings for users without a marketplace.
// Plain JavaScript with no dependencies: the manifest script runs before the build.

/** The agents Engram registers hooks with. */
export const HOOK_AGENTS = ['claude', 'codex'];

/**
 * Node options on every hook's command line, before the launcher. `--v8-pool-size=1`: V8's worker pool is 4 threads
 * by default, and a Node process waits at start-up until each has started and joins each at exit — work a hook that
 * runs for a few milliseconds on one thread never uses (docs/PERFORMANCE.md section 6, wave 8). Options on the
 * command line, not in NODE_OPTIONS: both agents run the command through a shell, on both launch paths.
 */
export const HOOK_NODE_OPTIONS = ['--v8-pool-size=1'];

/**
 * The hook command for one entry: the shell front (hooks/run.sh), which hands the event to the warm server without
 * starting Node, and runs the Node launcher (`node ${HOOK_NODE_OPTIONS} hooks/run.cjs`, {@link nodeHookCommand})
 * for everything else. Both agents run a hook command through `sh -c`. `root` is the install folder as the agent
 * should see it: a placeholder such as `${CLAUDE_PLUGIN_ROOT}` in plugin manifests, an absolute path in settings files.
 */
export function hookCommand(root, entry, agent) {
  return `sh "${root}/hooks/run.sh" ${entry} --agent ${agent}`;
}

/**
 * The Node launcher's command for one entry, as hooks were registered before the shell front (hooks/run.sh, which
 * runs exactly this whenever it does not hand the call to the warm server itself).
 */
export function nodeHookCommand(root, entry, agent) {
  return `node ${HOOK_NODE_OPTIONS.join(' ')} "${root}/hooks/run.cjs" ${entry} --agent ${agent}`;
}

/** True when a settings command is one of Engram's, whatever folder it was installed from (`run.mjs` was the launcher's name
 * before the hook fast path became CommonJS, `run.cjs` before the shell front). */
export function isEngramHookCommand(command) {
  return typeof command === 'string' && /\/hooks\/run\.(?:[cm]js|sh)"? [a-z-]+ --agent (claude|codex)\b/.test(command);
}

/**
 * The `hooks` object for one agent: `{ <Event>: [{ matcher?, hooks: [{ type, command, timeout, async? }] }] }`.
 * A hook entry may name the agents it is for (`agents`) and a matcher per agent. Handlers are never `async`: Codex
 * skips async handlers, and Claude Code -p skips SessionEnd while one is still running.
 * @param {{ hooks: Array<{ event: string, entry: string, timeout: number, matcher?: string | Record<string, string>,
 *   agents?: string[] }> }} plugin plugin.json
 * @param {'claude' | 'codex'} agent
 * @param {string} root see {@link hookCommand}
 */
export function hookGroups(plugin, agent, root) {
  const hooks = {};
  for (const hook of plugin.hooks) {
    if (hook.agents && !hook.agents.includes(agent)) continue;
    const matcher = typeof hook.matcher === 'string' ? hook.matcher : hook.matcher?.[agent];
    const handler = { type: 'command', command: hookCommand(root, hook.entry, agent), timeout: hook.timeout };
    hooks[hook.event] = [{ ...(matcher ? { matcher } : {}), hooks: [handler] }];
  }
  return hooks;
}
