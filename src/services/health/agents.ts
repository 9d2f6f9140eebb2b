import { existsSync } from 'node:fs';
import type { EngramEnv } from '../../core/index.js';
import {
  DOCTOR_TIMEOUT_MS,
  engramEvents,
  findCodexBinary,
  inspectClaude,
  inspectCodex,
  listCodexHooksSync,
  snakeEvent,
  type AgentRegistration,
  type Vars,
} from '../registration/index.js';
import type { Check } from './report.js';

/** The hook events Engram registers for Codex, as Codex names them in trust keys (derived from plugin.json). */
export const CODEX_HOOK_EVENTS: readonly string[] = engramEvents('codex').map(snakeEvent);

/** What the agent checks may look at beyond the environment. */
export interface AgentCheckOptions {
  /** This install: settings-file hooks that run Engram from another folder are stale. */
  installRoot?: string | undefined;
  /** Project settings (`.claude/`, `.codex/`) are checked for the repository of this folder. */
  cwd?: string | undefined;
  /**
   * The process environment, to find a Codex CLI (`$CODEX_BIN`, `$PATH`). With one, Codex trust comes from
   * `codex app-server` (which can tell a hook changed since it was trusted); without, from config.toml.
   */
  vars?: Vars | undefined;
}

/** A doctor line from an agent's registration: problems first, each with its fix. */
function toCheck(registration: AgentRegistration): Check {
  const check: Check = { name: registration.agent, status: registration.status, detail: registration.summary };
  const fixes = [...new Set(registration.problems.map((problem) => problem.fix).filter((fix): fix is string => Boolean(fix)))];
  if (registration.status === 'degraded' && fixes.length) check.fix = fixes.join('; then ');
  return check;
}

/**
 * Are Engram's Claude Code hooks registered exactly once (the plugin, enabled, or settings-file hooks) and do they run
 * this install? Reads `plugins/installed_plugins.json`, `settings.json` and, with a cwd, the project's settings.
 */
export function checkClaude(env: EngramEnv, options: AgentCheckOptions = {}): Check {
  return toCheck(inspectClaude(env, options));
}

/**
 * Are Engram's Codex hooks registered once, running this install, and trusted? Codex skips a hook whose exact
 * definition is not trusted, silently, so untrusted and modified (stale trust) hooks are degraded. Asks
 * `codex app-server` only when a codex binary is found, with a short deadline; otherwise reads config.toml.
 */
export function checkCodex(env: EngramEnv, options: AgentCheckOptions = {}): Check {
  const vars = options.vars;
  const codexBin = vars ? findCodexBinary({ vars, cwd: options.cwd ?? env.userHome }) : undefined;
  const cwd = options.cwd ?? env.codexHome;
  const listHooks =
    codexBin && vars && existsSync(cwd) ? () => listCodexHooksSync({ codexBin, env, vars, cwd, timeoutMs: DOCTOR_TIMEOUT_MS }) : undefined;
  return toCheck(inspectCodex(env, { installRoot: options.installRoot, cwd: options.cwd, listHooks }));
}
