export interface PluginHook {
  event: string;
  entry: string;
  timeout: number;
  matcher?: string | Record<string, string>;
  agents?: string[];
}
export interface HookHandler {
  type: 'command';
  command: string;
  timeout: number;
}
export interface HookGroup {
  matcher?: string;
  hooks: HookHandler[];
}
export declare const HOOK_AGENTS: readonly ['claude', 'codex'];
export declare const HOOK_NODE_OPTIONS: readonly string[];
export declare function hookCommand(root: string, entry: string, agent: 'claude' | 'codex'): string;
/** The Node launcher's command for one entry (what the shell front runs when it does not hand the call over itself). */
export declare function nodeHookCommand(root: string, entry: string, agent: 'claude' | 'codex'): string;
export declare function isEngramHookCommand(command: unknown): boolean;
export declare function hookGroups(plugin: { hooks: PluginHook[] }, agent: 'claude' | 'codex', root: string): Record<string, HookGroup[]>;
