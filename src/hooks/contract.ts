import * as z from 'zod';
import { redact } from '../core/index.js';

/**
 * Hook stdin as Claude Code (2.1.x) and Codex (0.169) send it; see ../shared/reference/agent-contracts.md §1.6–1.7
 * and §4.4. Both agents add fields release by release, so every schema accepts unknown keys; only the fields Engram
 * reads are checked.
 */
/**
 * Lowercase hex digits and dashes — both agents' UUID session ids. No secret pattern of core/redact can match such a
 * string (each needs a letter past `f`, an uppercase letter, `_`, `=`, `:`, a quote, `/` or `<`), so the scan (~0.05 ms
 * of every hook call on the warm server) is skipped for them; test/hooks/contract.test.ts checks the claim.
 */
export const PLAIN_HEX_ID = /^[0-9a-f-]+$/;

/** Session ids are UUID-like in both agents and are stored verbatim, so anything else (or a secret) is refused. */
const SessionId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,255}$/, 'session_id has unexpected characters')
  .refine((id) => PLAIN_HEX_ID.test(id) || redact(id).kinds.length === 0, 'session_id looks like a secret');
const PathText = z.string().max(8192);

/** Fields every event carries (Codex adds `model` and `turn_id` to most). */
export const HookCommonSchema = z.looseObject({
  session_id: SessionId,
  transcript_path: PathText.nullish(),
  cwd: PathText.min(1),
  hook_event_name: z.string().max(64),
  model: z.string().max(256).nullish(),
  turn_id: z.string().max(256).nullish(),
});
export type HookCommon = z.infer<typeof HookCommonSchema>;

/** SessionStart: `source` is startup | resume | clear | compact (| fork on newer Claude Code). */
export const SessionStartInputSchema = HookCommonSchema.extend({
  source: z.string().max(64).nullish(),
});
export type SessionStartInput = z.infer<typeof SessionStartInputSchema>;

/** UserPromptSubmit: the prompt text; Claude Code ≥ 2.1.196 adds `prompt_id`, Codex has `turn_id`. */
export const UserPromptSubmitInputSchema = HookCommonSchema.extend({
  prompt: z.string(),
  prompt_id: z.string().max(256).nullish(),
});
export type UserPromptSubmitInput = z.infer<typeof UserPromptSubmitInputSchema>;

/** Stop: fired at the end of every turn. */
export const StopInputSchema = HookCommonSchema.extend({
  /** Claude Code's id of the prompt this turn answers (Codex sends `turn_id`): one turn, however often its Stop is handled. */
  prompt_id: z.string().max(256).nullish(),
  stop_hook_active: z.boolean().nullish(),
  last_assistant_message: z.string().nullish(),
});
export type StopInput = z.infer<typeof StopInputSchema>;

/** SessionEnd: `reason` is clear | resume | logout | prompt_input_exit | other. */
export const SessionEndInputSchema = HookCommonSchema.extend({
  reason: z.string().max(64).nullish(),
});
export type SessionEndInput = z.infer<typeof SessionEndInputSchema>;

/** Tool events: the tool's name and input (any shape: Bash, Edit, apply_patch, MCP tools…). */
const ToolCallSchema = HookCommonSchema.extend({
  tool_name: z.string().min(1).max(256),
  tool_input: z.unknown().optional(),
  tool_use_id: z.string().max(256).nullish(),
});

/** PreToolUse (both agents). Codex's shell arrives as `Bash` with `{command}`, a patch as `apply_patch`. */
export const PreToolUseInputSchema = ToolCallSchema;
export type PreToolUseInput = z.infer<typeof PreToolUseInputSchema>;

/** PostToolUse: adds the result (an object on Claude Code, a string on Codex) and, on Claude, the duration. */
export const PostToolUseInputSchema = ToolCallSchema.extend({
  tool_response: z.unknown().optional(),
  duration_ms: z.number().nullish(),
});
export type PostToolUseInput = z.infer<typeof PostToolUseInputSchema>;

/** PostToolUseFailure (Claude Code): the error text instead of a result. */
export const PostToolUseFailureInputSchema = ToolCallSchema.extend({
  error: z.string().nullish(),
  is_interrupt: z.boolean().nullish(),
  duration_ms: z.number().nullish(),
});
export type PostToolUseFailureInput = z.infer<typeof PostToolUseFailureInputSchema>;

/** The events Engram registers, by the name agents put in `hook_event_name`. */
export const HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'Stop',
  'SessionEnd',
] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];

/** Events whose `additionalContext` reaches the model in both agents (PostToolUseFailure: Claude Code only). */
const CONTEXT_EVENTS: ReadonlySet<HookEventName> = new Set(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUseFailure']);

/**
 * What a hook prints. Context goes in `hookSpecificOutput.{hookEventName, additionalContext}` — the intersection
 * Claude Code and Codex both accept (Codex rejects unknown fields, and a bare `{"continue":true}`); nothing else is
 * ever set, so no decision is made for the agent. Every other event, and "nothing to say", prints nothing: a Stop
 * hook's output would keep Claude going, and Codex accepts only JSON there.
 */
export function hookOutput(event: HookEventName, additionalContext: string | null): string {
  if (!additionalContext || !CONTEXT_EVENTS.has(event)) return '';
  return `${JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext } })}\n`;
}
