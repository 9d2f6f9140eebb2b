/**
 * Hook entry names (the `<entry>` of `node hooks/run.cjs <entry>`, registered in plugin.json) and the event each
 * handles. Written once, in the launcher (hooks/run.cjs HOOK_ENTRIES, with how long each hook waits for the server).
 */
import { HOOK_ENTRIES } from '../../hooks/run.cjs';

export type HookEntry = keyof typeof HOOK_ENTRIES;

export const HOOK_ENTRY_EVENTS = Object.fromEntries(Object.entries(HOOK_ENTRIES).map(([entry, { event }]) => [entry, event])) as {
  readonly [E in HookEntry]: (typeof HOOK_ENTRIES)[E]['event'];
};
