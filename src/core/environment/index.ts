/**
 * Where the agent works: OS, repository, remotes, the agent's MCP servers and environment tags, detected without
 * spawning processes and cached per folder so hooks can ask on every call. See docs/ENVIRONMENT.md.
 * @module
 */
export { detectEnvironment, clearEnvironmentMemory, osName } from './detect.js';
export type { DetectedEnvironment, EnvironmentAgent, EnvironmentOptions } from './types.js';
export { parseRemoteUrls, stripCredentials } from './git.js';
export { claudeStatePath } from './mcp.js';
export { BUILTIN_DEPENDENCY_TAGS, BUILTIN_DIR_PATTERNS, BUILTIN_FILE_MARKERS, BUILTIN_REMOTE_PATTERNS } from './tags.js';
export type { TagRules } from './tags.js';
