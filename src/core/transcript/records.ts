/**
 * Reading the agents' raw JSONL records: the small pieces both transcript readers share — the learning reader
 * (`parse.ts`) and the tape adapters (services/tape/adapters), which need more detail from the same records.
 */

export type Json = Record<string, unknown>;
export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
export const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** A Codex tool call's arguments as an object: JSON-string arguments parsed, a freeform tool's text as `{ input }`. */
export function parseArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return { input: raw };
  }
}

/**
 * Codex user items that the CLI injects (instructions, environment, a `!command` the person ran in the shell, a turn
 * they aborted), not what the person typed.
 */
export const CODEX_INJECTED =
  /^\s*(<environment_context>|<user_instructions>|<permissions instructions>|# AGENTS\.md instructions|<INSTRUCTIONS>|<user_shell_command>|<turn_aborted>)/;
