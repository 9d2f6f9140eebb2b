/**
 * Hook entry names (the `<entry>` of `node hooks/run.cjs <entry>`, registered in plugin.json) and the event each
 * handles. No imports: the fast path reads it before anything else.
 */
export const HOOK_ENTRY_EVENTS = {
  'session-start': 'SessionStart',
  'user-prompt-submit': 'UserPromptSubmit',
  'pre-tool-use': 'PreToolUse',
  'post-tool-use': 'PostToolUse',
  'post-tool-use-failure': 'PostToolUseFailure',
  stop: 'Stop',
  'session-end': 'SessionEnd',
} as const;

export type HookEntry = keyof typeof HOOK_ENTRY_EVENTS;
