export { initRepo } from './init.js';
export type { InitResult } from './init.js';
export { installGitHooks, uninstallGitHooks, gitHooksStatus } from './git-hooks.js';
export type { GitHookName, GitHookReport, GitHooksResult } from './git-hooks.js';
