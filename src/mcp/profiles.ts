/**
 * Which tools a server registers: `--tools=<list>` as the Go engram reads it (../shared/seeds/001 §2), plus our own
 * profile `engram`. Profiles: `agent` (the Go engram's 11 tools agents use), `admin` (its 4 curation tools), `engram`
 * (Engram's tools). Empty or `all` means every tool; any other token is a tool name; stray commas and spaces are
 * ignored; `all` anywhere in the list wins.
 * @module
 */

export const PROFILES = {
  agent: [
    'mem_save',
    'mem_search',
    'mem_context',
    'mem_session_summary',
    'mem_session_start',
    'mem_session_end',
    'mem_get_observation',
    'mem_suggest_topic_key',
    'mem_capture_passive',
    'mem_save_prompt',
    'mem_update',
  ],
  admin: ['mem_delete', 'mem_stats', 'mem_timeline', 'mem_merge_projects'],
  engram: [
    'engram_search',
    'engram_add',
    'engram_update',
    'engram_deprecate',
    'engram_feedback',
    'engram_pin',
    'engram_unpin',
    'engram_list',
    'engram_status',
    'engram_explain',
    'engram_doc',
  ],
} as const;

export type ProfileName = keyof typeof PROFILES;

/** The tools plugins register: Engram's own and the Go engram's agent profile (its admin tools stay opt-in). */
export const PLUGIN_TOOLS = 'engram,agent';

/** The tool names a `--tools` value selects, or null for every tool. Names not known are kept (and ignored). */
export function resolveTools(input: string | undefined): Set<string> | null {
  const value = (input ?? '').trim();
  if (value === '' || value === 'all') return null;
  const selected = new Set<string>();
  for (const raw of value.split(',')) {
    const token = raw.trim();
    if (token === '') continue;
    if (token === 'all') return null;
    if (Object.hasOwn(PROFILES, token)) PROFILES[token as ProfileName].forEach((name) => selected.add(name));
    else selected.add(token);
  }
  return selected.size === 0 ? null : selected;
}
