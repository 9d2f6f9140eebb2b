export { AGENTS, engramEvents, engramHookGroups, snakeEvent } from './plugin.js';
export type { Agent } from './plugin.js';
export { SCOPES, scopesFor, settingsFileFor } from './targets.js';
export type { Scope } from './targets.js';
export { readSettingsFile, mergeEngramHooks, engramEntries } from './settings-file.js';
export type { HookEntry, LocatedHookEntry, MergeResult, SettingsFile } from './settings-file.js';
export { installHooks, uninstallHooks, trustHooks } from './install.js';
export type { InstallOptions, RegistrationOptions, RegistrationResult, TrustOptions } from './install.js';
export {
  DOCTOR_TIMEOUT_MS,
  TRUST_TIMEOUT_MS,
  findCodexBinary,
  requireCodexBinary,
  listCodexHooks,
  listCodexHooksSync,
  trustCodexHooks,
} from './codex-trust.js';
export type { AppServerOptions, CodexHook, CodexHookListing, TrustReport, TrustedHook, Vars } from './codex-trust.js';
export { hooksStatus, inspectClaude, inspectCodex } from './status.js';
export type { AgentRegistration, CodexTrust, HookTrust, HooksStatus, InspectOptions, Problem, SettingsRegistration } from './status.js';
export { claudePluginState } from './claude.js';
export { projectRoot } from './targets.js';
export { engramMcpEntry, entryRoot, registerCodexMcp, unregisterCodexMcp, codexMcpEntry, MCP_ENV_VARS } from './mcp.js';
export type { McpServerEntry, McpRegistration } from './mcp.js';
export { codexPluginState, readCodexConfig } from './codex.js';
