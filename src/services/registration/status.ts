import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { EngramEnv } from '../../core/index.js';
import { claudePluginState } from './claude.js';
import { codexHooksEnabled, codexPluginState, codexProjectTrusted, codexTrustedKeys, readCodexConfig } from './codex.js';
import {
  findCodexBinary,
  isEngramCodexHook,
  listCodexHooks,
  requireCodexBinary,
  TRUST_TIMEOUT_MS,
  type CodexHookListing,
  type Vars,
} from './codex-trust.js';
import { commandRoot, engramEvents, snakeEvent, type Agent } from './plugin.js';
import { engramEntries, readSettingsFile, type LocatedHookEntry } from './settings-file.js';
import { codexTrustKeys, pathVariants, projectRoot, scopesFor, settingsFileFor, type Scope } from './targets.js';

/** Engram's hooks in one settings file. */
export interface SettingsRegistration {
  scope: Scope;
  file: string;
  /** How many Engram handlers the file holds. */
  hooks: number;
  /** Engram's events for this agent that the file has no handler for (an older or partial install). */
  missing_events: string[];
  /**
   * The install folders the commands run from: `current` (this install), `elsewhere` (another, existing install),
   * `missing` (the folder is gone), `unknown` (a command in neither the `sh "<root>/hooks/run.sh"` nor the
   * `node "<root>/hooks/run.cjs"` form).
   */
  roots: Array<{ root: string; state: 'current' | 'elsewhere' | 'missing' | 'unknown' }>;
  /** Codex project scope: false when Codex does not load the file because the project is not trusted. */
  loaded?: boolean;
}

/** Codex's trust in one of Engram's hooks. */
export interface HookTrust {
  key: string;
  event: string;
  origin: string;
  /** `trusted`, `untrusted`, `modified` (changed since trusted: Codex will not run it), `managed` or `disabled`. */
  status: string;
}

/** Codex's trust in Engram's hooks, from app-server (exact) or config.toml (can not tell `modified`). */
export interface CodexTrust {
  source: 'app-server' | 'config.toml';
  hooks: HookTrust[];
  trusted: number;
  untrusted: number;
  modified: number;
  note?: string;
}

/** Something wrong with the registration, and how to fix it. */
export interface Problem {
  detail: string;
  fix?: string;
}

/** Where Engram's hooks are registered for one agent, and what is wrong with that. */
export interface AgentRegistration {
  agent: Agent;
  /** ok: Engram's hooks run; degraded: see `problems`; skipped: the agent is not set up on this machine. */
  status: 'ok' | 'degraded' | 'skipped';
  /** One line for people (doctor's detail). */
  summary: string;
  config: string;
  plugin: { installed: string[]; enabled: string[]; version?: string; install_path?: string };
  settings: SettingsRegistration[];
  trust?: CodexTrust;
  problems: Problem[];
}

/** Options for {@link inspectClaude} and {@link inspectCodex}. */
export interface InspectOptions {
  /** Project and local settings are inspected for the repository of this folder; without it, only user settings. */
  cwd?: string | undefined;
  /** This install: settings hooks that run Engram from elsewhere are reported. Without it, only missing folders are. */
  installRoot?: string | undefined;
  /**
   * Codex only: asks Codex for its hooks and their trust (app-server). Called only when Engram has Codex hooks; when
   * absent or failing, trust is read from config.toml.
   */
  listHooks?: (() => CodexHookListing) | undefined;
}

const canonical = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/** A settings file's Engram entries with positions, or a problem when it cannot be read. */
interface ReadRegistration {
  registration: SettingsRegistration;
  entries: LocatedHookEntry[];
  commands: string[];
}

function readRegistrations(agent: Agent, env: EngramEnv, options: InspectOptions, problems: Problem[]): ReadRegistration[] {
  const found: ReadRegistration[] = [];
  const scopes = options.cwd ? scopesFor(agent) : (['user'] as Scope[]);
  const seen = new Set<string>();
  for (const scope of scopes) {
    const file = settingsFileFor(agent, scope, env, options.cwd ?? env.userHome);
    // Run from the home folder, project settings are the user's own: count them once.
    if (seen.has(canonical(file))) continue;
    seen.add(canonical(file));
    let entries: LocatedHookEntry[];
    try {
      entries = engramEntries(readSettingsFile(file).data);
    } catch (error) {
      problems.push({ detail: (error as Error).message.replace(/; nothing was changed$/, '') });
      continue;
    }
    if (entries.length === 0) continue;
    const events = new Set(entries.map((entry) => entry.event));
    const roots = [...new Set(entries.map((entry) => commandRoot(entry.command) ?? ''))].map((root) => ({
      root,
      state: !root
        ? ('unknown' as const)
        : !existsSync(join(root, 'hooks', 'run.cjs'))
          ? ('missing' as const)
          : options.installRoot && canonical(root) !== canonical(options.installRoot)
            ? ('elsewhere' as const)
            : ('current' as const),
    }));
    found.push({
      registration: { scope, file, hooks: entries.length, missing_events: engramEvents(agent).filter((event) => !events.has(event)), roots },
      entries,
      commands: entries.map((entry) => entry.command).sort(),
    });
  }
  return found;
}

/** Problems every agent shares: stale or partial settings hooks, and Engram registered twice. */
function registrationProblems(agent: Agent, read: ReadRegistration[], enabledPlugins: string[], installRoot: string | undefined): Problem[] {
  const problems: Problem[] = [];
  for (const { registration } of read) {
    const reinstall = `engram hooks install --agent ${agent} --scope ${registration.scope}`;
    for (const { root, state } of registration.roots) {
      if (state === 'missing') problems.push({ detail: `${registration.file} runs Engram from ${root}, which no longer exists`, fix: reinstall });
      if (state === 'elsewhere') {
        problems.push({ detail: `${registration.file} runs Engram from ${root}, not from this install (${installRoot})`, fix: reinstall });
      }
    }
    if (registration.missing_events.length) {
      problems.push({ detail: `${registration.file} has no Engram hook for ${registration.missing_events.join(', ')}`, fix: reinstall });
    }
  }
  const removeSettings = read.map(({ registration }) => `engram hooks uninstall --agent ${agent} --scope ${registration.scope}`);
  if (enabledPlugins.length && read.length) {
    const removePlugin = agent === 'claude' ? `claude plugin uninstall ${enabledPlugins[0]}` : `codex plugin remove ${enabledPlugins[0]}`;
    problems.push({
      detail: `Engram is registered twice, as the plugin ${enabledPlugins.join(', ')} and in ${read.map(({ registration }) => registration.file).join(', ')}: every event runs its hooks twice`,
      fix: `${removeSettings.join(' && ')}   (or: ${removePlugin})`,
    });
  } else if (read.length > 1) {
    // Claude Code runs an identical handler from several settings files once; Codex runs every copy.
    const identical = read.every(({ commands }) => JSON.stringify(commands) === JSON.stringify(read[0]?.commands));
    if (agent === 'codex' || !identical) {
      problems.push({
        detail: `Engram's hooks are registered in ${read.map(({ registration }) => registration.file).join(' and ')}: every event runs them twice`,
        fix: removeSettings.slice(1).join(' && '),
      });
    }
  }
  return problems;
}

function finish(
  agent: Agent,
  base: Omit<AgentRegistration, 'agent' | 'status' | 'summary'>,
  skippedBecause: string | undefined,
  ok: string,
): AgentRegistration {
  if (skippedBecause !== undefined) return { agent, status: 'skipped', summary: skippedBecause, ...base };
  if (base.problems.length) return { agent, status: 'degraded', summary: base.problems.map((problem) => problem.detail).join('; '), ...base };
  return { agent, status: 'ok', summary: ok, ...base };
}

const registeredAs = (read: ReadRegistration[]): string[] => read.map(({ registration }) => `${registration.hooks} hooks in ${registration.file}`);

/** Where Engram's Claude Code hooks are registered (plugin and settings files) and what is wrong with that. */
export function inspectClaude(env: EngramEnv, options: InspectOptions = {}): AgentRegistration {
  const root = env.claudeConfigDir;
  const problems: Problem[] = [];
  const plugin = claudePluginState(env);
  const read = readRegistrations('claude', env, options, problems);
  problems.push(...registrationProblems('claude', read, plugin.enabled, options.installRoot));
  const settingsFile = join(root, 'settings.json');
  if (plugin.enabled.length === 0 && read.length === 0) {
    if (plugin.installed.length) {
      problems.push({ detail: `${plugin.installed.join(', ')} is installed but not enabled in ${settingsFile}`, fix: `claude plugin enable ${plugin.installed[0]}` });
    } else if (existsSync(root)) {
      problems.push({
        detail: `Engram's hooks are not registered with Claude Code (no engram@… plugin in ${join(root, 'plugins', 'installed_plugins.json')}, no Engram hooks in settings files)`,
        fix: 'claude plugin marketplace add <engram folder> && claude plugin install engram@engram   (or: engram hooks install --agent claude)',
      });
    }
  }
  const skipped = !existsSync(root) && read.length === 0 && problems.length === 0 ? `no Claude Code configuration at ${root}` : undefined;
  const asPlugin = plugin.enabled.length
    ? [`${plugin.enabled.join(', ')} enabled (version ${plugin.version ?? '?'}, ${plugin.install_path ?? 'unknown path'})`]
    : [];
  return finish(
    'claude',
    {
      config: root,
      plugin: {
        installed: plugin.installed,
        enabled: plugin.enabled,
        ...(plugin.version ? { version: plugin.version } : {}),
        ...(plugin.install_path ? { install_path: plugin.install_path } : {}),
      },
      settings: read.map(({ registration }) => registration),
      problems,
    },
    skipped,
    [...asPlugin, ...registeredAs(read)].join('; '),
  );
}

/** Codex's trust in Engram's hooks from config.toml alone: a recorded hash counts as trusted (it may be stale). */
function trustFromConfig(trustedKeys: Set<string>, read: ReadRegistration[], enabledPlugins: string[]): HookTrust[] {
  const hooks: HookTrust[] = [];
  for (const { registration, entries } of read) {
    if (registration.loaded === false) continue;
    for (const entry of entries) {
      const keys = pathVariants(registration.file).map((path) => `${path}:${snakeEvent(entry.event)}:${entry.group}:${entry.handler}`);
      const key = keys.find((candidate) => trustedKeys.has(candidate));
      hooks.push({ key: key ?? (keys[0] as string), event: entry.event, origin: registration.scope, status: key ? 'trusted' : 'untrusted' });
    }
  }
  for (const id of enabledPlugins) {
    for (const event of engramEvents('codex')) {
      const snake = snakeEvent(event);
      const key = [...trustedKeys].find((candidate) => candidate.startsWith(`${id}:`) && candidate.includes(`:${snake}:`));
      hooks.push({ key: key ?? `${id}:hooks/codex-hooks.json:${snake}:0:0`, event, origin: 'plugin', status: key ? 'trusted' : 'untrusted' });
    }
  }
  return hooks;
}

const summarize = (source: CodexTrust['source'], hooks: HookTrust[], note?: string): CodexTrust => ({
  source,
  hooks,
  trusted: hooks.filter((hook) => hook.status === 'trusted' || hook.status === 'managed').length,
  untrusted: hooks.filter((hook) => hook.status === 'untrusted').length,
  modified: hooks.filter((hook) => hook.status === 'modified').length,
  ...(note ? { note } : {}),
});

/**
 * Where Engram's Codex hooks are registered (plugin, user and project hooks.json), whether Codex trusts them, and what
 * is wrong with that. Untrusted and modified hooks are problems: Codex skips them silently.
 */
export function inspectCodex(env: EngramEnv, options: InspectOptions = {}): AgentRegistration {
  const problems: Problem[] = [];
  const configFile = readCodexConfig(env);
  const { config } = configFile;
  if (configFile.error) problems.push({ detail: configFile.error });
  const plugin = codexPluginState(config);
  const read = readRegistrations('codex', env, options, problems);
  for (const { registration } of read) {
    if (registration.scope !== 'project' || !options.cwd) continue;
    const root = projectRoot(options.cwd);
    registration.loaded = codexProjectTrusted(config, root) || codexProjectTrusted(config, options.cwd);
    if (!registration.loaded) {
      problems.push({
        detail: `Codex does not load ${registration.file}: the project ${root} is not trusted in ${configFile.file}`,
        fix: `start codex in ${root} and trust the folder`,
      });
    }
  }
  problems.push(...registrationProblems('codex', read, plugin.enabled, options.installRoot));
  if (plugin.enabled.length === 0 && read.length === 0 && configFile.exists && !configFile.error) {
    problems.push(
      plugin.installed.length
        ? { detail: `${plugin.installed.join(', ')} is installed but disabled in ${configFile.file}`, fix: `set enabled = true under [plugins."${plugin.installed[0]}"] in ${configFile.file}` }
        : {
            detail: `Engram's hooks are not registered with Codex (no [plugins."engram@…"] in ${configFile.file}, no Engram hooks in hooks.json)`,
            fix: 'codex plugin marketplace add <engram folder> && codex plugin add engram@engram   (or: engram hooks install --agent codex)',
          },
    );
  }
  const registered = plugin.enabled.length > 0 || read.length > 0;
  if (registered && !codexHooksEnabled(config)) {
    problems.push({ detail: `Codex hooks are turned off in ${configFile.file} ([features] hooks = false)`, fix: `remove hooks = false from [features] in ${configFile.file}` });
  }

  let trust: CodexTrust | undefined;
  if (registered) {
    let note: string | undefined;
    if (options.listHooks) {
      try {
        const knownKeys = new Set(read.flatMap(({ registration }) => codexTrustKeys(registration.file, readSettingsFile(registration.file).data)));
        const listed = options.listHooks().hooks.filter((hook) => isEngramCodexHook(hook, knownKeys));
        trust = summarize(
          'app-server',
          listed.map((hook) => ({
            key: hook.key,
            event: hook.event,
            origin: hook.origin,
            status: !hook.enabled ? 'disabled' : hook.managed ? 'managed' : hook.trust,
          })),
        );
      } catch (error) {
        note = `could not ask codex app-server (${(error as Error).message}); trust read from config.toml`;
      }
    }
    trust ??= summarize('config.toml', trustFromConfig(codexTrustedKeys(config), read, plugin.enabled), note);
    const fix = "engram hooks trust --agent codex   (or start codex, type /hooks and trust Engram's hooks)";
    const total = trust.hooks.filter((hook) => hook.status !== 'disabled').length;
    const hooks = trust.hooks;
    const eventsWith = (status: string): string => [...new Set(hooks.filter((hook) => hook.status === status).map((hook) => hook.event))].join(', ');
    if (trust.untrusted) {
      problems.push({ detail: `only ${trust.trusted} of ${total} Engram hooks are trusted; Codex skips the others without a word (${eventsWith('untrusted')})`, fix });
    }
    if (trust.modified) {
      problems.push({
        detail: `${trust.modified} Engram hook(s) changed since they were trusted (${eventsWith('modified')}; e.g. reinstalled from another folder, upgraded or edited), so Codex no longer runs them`,
        fix,
      });
    }
  }

  const skipped = !configFile.exists && read.length === 0 ? `no Codex configuration at ${configFile.file}` : undefined;
  const parts = [...plugin.enabled.map((id) => `${id} enabled`), ...registeredAs(read)];
  const ok = `${parts.join('; ')}, ${trust?.trusted ?? 0} hooks trusted${trust?.source === 'app-server' ? ' (checked with codex app-server)' : ''}`;
  const registration = finish(
    'codex',
    {
      config: configFile.file,
      plugin: { installed: plugin.installed, enabled: plugin.enabled },
      settings: read.map(({ registration }) => registration),
      ...(trust ? { trust } : {}),
      problems,
    },
    skipped,
    ok,
  );
  if (trust?.note) registration.summary += ` (${trust.note})`;
  return registration;
}

/** `engram hooks status`: every agent's registrations, with Codex trust from app-server when a codex binary is found. */
export interface HooksStatus {
  agents: AgentRegistration[];
  /** The Codex CLI asked about trust, or null when none was found (trust then comes from config.toml). */
  codex_bin: string | null;
}

export async function hooksStatus(options: {
  env: EngramEnv;
  cwd: string;
  installRoot: string;
  agents?: Agent[];
  codexBin?: string | undefined;
  vars: Vars;
}): Promise<HooksStatus> {
  const agents = options.agents ?? ['claude', 'codex'];
  const inspect = { cwd: options.cwd, installRoot: options.installRoot };
  const result: HooksStatus = { agents: [], codex_bin: null };
  for (const agent of agents) {
    if (agent === 'claude') {
      result.agents.push(inspectClaude(options.env, inspect));
      continue;
    }
    const codexBin = options.codexBin
      ? requireCodexBinary({ explicit: options.codexBin, vars: options.vars, cwd: options.cwd })
      : findCodexBinary({ vars: options.vars, cwd: options.cwd });
    const first = inspectCodex(options.env, inspect);
    if (!codexBin || !first.trust) {
      result.agents.push(first);
      continue;
    }
    result.codex_bin = codexBin;
    let listing: CodexHookListing | Error;
    try {
      listing = await listCodexHooks({ codexBin, env: options.env, vars: options.vars, cwd: options.cwd, timeoutMs: TRUST_TIMEOUT_MS });
    } catch (error) {
      listing = error as Error;
    }
    result.agents.push(
      inspectCodex(options.env, {
        ...inspect,
        listHooks: () => {
          if (listing instanceof Error) throw listing;
          return listing;
        },
      }),
    );
  }
  return result;
}
