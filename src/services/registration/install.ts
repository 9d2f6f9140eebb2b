import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { EngramError, type EngramEnv } from '../../core/index.js';
import { claudePluginState } from './claude.js';
import { codexHooksEnabled, codexPluginState, codexProjectTrusted, readCodexConfig } from './codex.js';
import { requireCodexBinary, trustCodexHooks, type TrustReport, type Vars } from './codex-trust.js';
import { engramMcpEntry, registerCodexMcp, unregisterCodexMcp, type McpRegistration } from './mcp.js';
import { engramHookGroups, type Agent } from './plugin.js';
import { engramEntries, mergeEngramHooks, readSettingsFile, writeSettingsFile, type HookEntry } from './settings-file.js';
import { codexTrustKeys, pathVariants, projectRoot, scopesFor, settingsFileFor, type Scope } from './targets.js';

/** Which agent's settings to change, where, and from which install folder the hooks run. */
export interface RegistrationOptions {
  agent: Agent;
  /** @default 'user' */
  scope?: Scope;
  env: EngramEnv;
  /** Project scopes resolve to the repository this folder belongs to. */
  cwd: string;
  /** The running Engram's install folder; hook commands run `<installRoot>/hooks/run.sh`. */
  installRoot: string;
  /** Report what would change; write nothing. */
  dryRun?: boolean;
}

/** {@link installHooks} options: `trust` is set only when the user asked for it (`--trust`), which is their consent. */
export interface InstallOptions extends RegistrationOptions {
  trust?: { codexBin?: string | undefined; vars: Vars; timeoutMs?: number };
}

/** What install or uninstall did to one settings file, and what the user should do next. */
export interface RegistrationResult {
  agent: Agent;
  scope: Scope;
  file: string;
  dry_run: boolean;
  changed: boolean;
  added: HookEntry[];
  removed: HookEntry[];
  warnings: string[];
  trust?: TrustReport;
  /** Codex: Engram's MCP server in the config.toml of the same scope. */
  mcp?: McpRegistration;
  next_steps: string[];
}

/** The config.toml beside a Codex hooks file: where its MCP servers are registered. */
const codexConfigFor = (hooksFile: string): string => join(dirname(hooksFile), 'config.toml');

const TRUST_STEP =
  "Codex skips hooks it has not trusted, without a word. Trust Engram's: run `engram hooks trust --agent codex` " +
  "(it records Codex's own hash of each Engram hook in config.toml; running it is your consent), " +
  'or start codex, type /hooks and trust them.';

/**
 * Hook commands are `sh "<root>/hooks/run.sh" …` (which runs `<root>/hooks/run.cjs`) run by a shell: the folder must
 * exist, hold both, and quote safely.
 */
function checkInstallRoot(root: string): void {
  if (!isAbsolute(root)) throw new EngramError('INTERNAL', `install folder ${root} is not absolute`);
  if (/["$`\\]/.test(root)) {
    throw new EngramError('INVALID_INPUT', `Engram's install folder ${root} holds a character (" $ \` \\) a hook command cannot quote safely; move Engram elsewhere`);
  }
  for (const launcher of ['run.sh', 'run.cjs']) {
    if (!existsSync(join(root, 'hooks', launcher))) {
      throw new EngramError('NOT_FOUND', `${join(root, 'hooks', launcher)} does not exist: run engram hooks install from a complete Engram install`);
    }
  }
}

/** Engram registered twice (plugin and settings, or two settings files) runs every hook twice. */
function doubleRegistrationWarnings(options: RegistrationOptions, scope: Scope, commands: string[]): string[] {
  const warnings: string[] = [];
  const { agent, env, cwd } = options;
  const plugins = agent === 'claude' ? claudePluginState(env).enabled : codexPluginState(readCodexConfig(env).config).enabled;
  for (const id of plugins) {
    const removePlugin = agent === 'claude' ? `claude plugin uninstall ${id}` : `codex plugin remove ${id}`;
    warnings.push(
      `Engram is also enabled as the ${agent === 'claude' ? 'Claude Code' : 'Codex'} plugin ${id}: every event would run Engram's hooks twice. ` +
        `Keep one: ${removePlugin}, or engram hooks uninstall --agent ${agent} --scope ${scope}`,
    );
  }
  const target = pathVariants(settingsFileFor(agent, scope, env, cwd)).at(-1);
  for (const other of scopesFor(agent).filter((candidate) => candidate !== scope)) {
    const file = settingsFileFor(agent, other, env, cwd);
    // Run from the home folder, the project file is the user file itself.
    if (pathVariants(file).at(-1) === target) continue;
    let theirs: string[];
    try {
      theirs = engramEntries(readSettingsFile(file).data).map((entry) => entry.command);
    } catch {
      continue;
    }
    if (theirs.length === 0) continue;
    // Claude Code runs an identical handler from several settings files once; Codex runs each copy.
    const identical = theirs.length === commands.length && theirs.every((command) => commands.includes(command));
    if (agent === 'claude' && identical) continue;
    warnings.push(
      `${file} (scope ${other}) also registers Engram's hooks: each event would run them twice. Remove one: engram hooks uninstall --agent ${agent} --scope ${other}`,
    );
  }
  return warnings;
}

/** What Codex itself will do with the file: hooks off, or a project it does not load yet. */
function codexWarnings(options: RegistrationOptions, scope: Scope): string[] {
  const { config, error } = readCodexConfig(options.env);
  const warnings: string[] = [];
  if (error) warnings.push(error);
  if (!codexHooksEnabled(config)) warnings.push('Codex hooks are turned off in config.toml ([features] hooks = false): remove that line or no hook runs');
  if (scope === 'project') {
    const root = projectRoot(options.cwd);
    if (!codexProjectTrusted(config, root) && !codexProjectTrusted(config, options.cwd)) {
      warnings.push(`Codex loads ${join(root, '.codex')} only for a trusted project: start codex in ${root} once and trust the folder`);
    }
  }
  return warnings;
}

/** Codex keys trust by `<file>:<event>:<group>:<handler>`: someone else's hook that moved must be trusted again. */
const shiftedWarning = (events: string[], file: string): string =>
  `Codex keys trust by position: other hooks under ${events.join(', ')} in ${file} moved and need trusting again (codex → /hooks)`;

function resolveTarget(options: RegistrationOptions): { scope: Scope; file: string } {
  const scope = options.scope ?? 'user';
  return { scope, file: settingsFileFor(options.agent, scope, options.env, options.cwd) };
}

/**
 * Registers Engram's hooks in an agent's settings file (for users who do not install plugins): replaces any earlier
 * Engram entries (from any install folder) with this install's groups for every event, leaves everything else as it
 * is, and writes atomically — unless nothing changed or this is a dry run. With `trust` (Codex only), then trusts the
 * hooks through Codex's app-server.
 */
export async function installHooks(options: InstallOptions): Promise<RegistrationResult> {
  const { agent, installRoot } = options;
  const { scope, file } = resolveTarget(options);
  if (options.trust && agent !== 'codex') {
    throw new EngramError('USAGE', 'only Codex asks to trust hooks: drop --trust (Claude Code asks once to trust the folder in an interactive session)');
  }
  checkInstallRoot(installRoot);
  const settings = readSettingsFile(file);
  const wanted = engramHookGroups(agent, installRoot);
  const merge = mergeEngramHooks(settings.data, wanted);
  const dryRun = options.dryRun ?? false;
  if (merge.changed && !dryRun) writeSettingsFile(file, merge.data, settings.text);

  const commands = Object.values(wanted).flatMap((groups) => groups.flatMap((group) => group.hooks.map((handler) => handler.command)));
  const warnings = doubleRegistrationWarnings(options, scope, commands);
  if (agent === 'codex') warnings.push(...codexWarnings(options, scope));
  if (agent === 'codex' && merge.shifted.length) {
    warnings.push(shiftedWarning(merge.shifted, file));
  }
  if (settings.data.disableAllHooks === true) warnings.push(`${file} sets disableAllHooks: true, so Claude Code runs none of these hooks`);
  if (scope === 'project') {
    warnings.push(`${file} is usually committed, and it names this machine's install folder (${installRoot}); for a setup of your own prefer ${agent === 'claude' ? '--scope local' : '--scope user'}`);
  }

  const result: RegistrationResult = {
    agent,
    scope,
    file,
    dry_run: dryRun,
    changed: merge.changed,
    added: merge.added,
    removed: merge.removed,
    warnings,
    next_steps: [],
  };
  const steps = result.next_steps;
  if (dryRun) steps.push(`Dry run: nothing was written${options.trust ? ' and nothing trusted' : ''}. Run without --dry-run to apply.`);
  else if (!merge.changed) steps.push(`Engram's hooks were already registered in ${file}; nothing changed.`);

  if (agent === 'claude') {
    steps.push("New Claude Code sessions run Engram's hooks (type /hooks in a session to review them).");
    // Claude Code's plugin brings the MCP server itself; a settings install registers it with Claude's own CLI.
    const mcp = engramMcpEntry(installRoot);
    steps.push(
      `For Engram's MCP tools (search, save, feedback, explain), run: claude mcp add --scope ${scope === 'project' ? 'project' : scope === 'local' ? 'local' : 'user'} engram -- ${[mcp.command, ...mcp.args].map((part) => (/[\s"']/.test(part) ? JSON.stringify(part) : part)).join(' ')}`,
    );
    if (scope !== 'user') steps.push('In interactive sessions Claude Code runs hooks from project settings only once you trust the folder.');
    return result;
  }
  result.mcp = registerCodexMcp(codexConfigFor(file), installRoot, { dryRun });
  if (result.mcp.changed && !dryRun) steps.push(`Engram's MCP server is registered in ${result.mcp.file} ([mcp_servers.engram]); new Codex sessions have its tools.`);
  if (options.trust && !dryRun) {
    result.trust = await trustHooks({ agent, env: options.env, cwd: options.cwd, ...options.trust });
    steps.push(
      result.trust.failed.length
        ? `${result.trust.failed.length} Engram hook(s) are still not trusted: start codex, type /hooks and trust them.`
        : "Engram's hooks are trusted; new Codex sessions run them.",
    );
  } else {
    steps.push(TRUST_STEP);
  }
  return result;
}

/** Options for {@link trustHooks}. */
export interface TrustOptions {
  agent: Agent;
  env: EngramEnv;
  cwd: string;
  /** `--codex-bin`; else `$CODEX_BIN`, else `codex` on `$PATH` (from `vars`). */
  codexBin?: string | undefined;
  vars: Vars;
  timeoutMs?: number | undefined;
}

/**
 * Trusts Engram's Codex hooks (plugin, user and project hooks.json) through Codex's app-server. Only on the user's
 * explicit request (`engram hooks trust`, `install --trust`): running the command is their consent.
 */
export async function trustHooks(options: TrustOptions): Promise<TrustReport> {
  if (options.agent !== 'codex') {
    throw new EngramError('USAGE', 'only Codex asks to trust hooks (Claude Code asks once to trust the folder in an interactive session)');
  }
  const codexBin = requireCodexBinary({ explicit: options.codexBin, vars: options.vars, cwd: options.cwd });
  // Engram's hooks.json entries by position, for a listing that leaves commands out.
  const knownKeys = new Set<string>();
  for (const scope of scopesFor('codex')) {
    const file = settingsFileFor('codex', scope, options.env, options.cwd);
    try {
      for (const key of codexTrustKeys(file, readSettingsFile(file).data)) knownKeys.add(key);
    } catch {
      // An unreadable hooks.json holds nothing we wrote; Codex will report it in its own warnings.
    }
  }
  return trustCodexHooks({
    codexBin,
    env: options.env,
    vars: options.vars,
    cwd: options.cwd,
    knownKeys,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
}

/** Removes Engram's handlers (from any install folder) from an agent's settings file, and nothing else. */
export function uninstallHooks(options: RegistrationOptions): RegistrationResult {
  const { agent } = options;
  const { scope, file } = resolveTarget(options);
  const settings = readSettingsFile(file);
  const merge = mergeEngramHooks(settings.data, {});
  const dryRun = options.dryRun ?? false;
  if (merge.changed && !dryRun) writeSettingsFile(file, merge.data, settings.text);

  const warnings: string[] = [];
  if (agent === 'codex' && merge.shifted.length) {
    warnings.push(shiftedWarning(merge.shifted, file));
  }
  const mcp = agent === 'codex' ? unregisterCodexMcp(codexConfigFor(file), { dryRun }) : undefined;
  const result: RegistrationResult = {
    agent,
    scope,
    file,
    dry_run: dryRun,
    changed: merge.changed || mcp?.changed === true,
    added: [],
    removed: merge.removed,
    warnings,
    ...(mcp ? { mcp } : {}),
    next_steps: [],
  };
  if (mcp?.changed && !dryRun) result.next_steps.push(`Removed Engram's MCP server ([mcp_servers.engram]) from ${mcp.file}.`);
  if (dryRun) result.next_steps.push('Dry run: nothing was written. Run without --dry-run to apply.');
  if (merge.removed.length === 0) result.next_steps.push(`No Engram hooks in ${file}; nothing to remove.`);
  else if (!dryRun) result.next_steps.push(`New ${agent === 'claude' ? 'Claude Code' : 'Codex'} sessions no longer run Engram's hooks from ${file}.`);
  const plugins = agent === 'claude' ? claudePluginState(options.env).enabled : codexPluginState(readCodexConfig(options.env).config).enabled;
  if (plugins.length) result.next_steps.push(`Engram still runs as the plugin ${plugins.join(', ')}.`);
  return result;
}
