/** Which agent wrote a transcript. */
export type TranscriptFormat = 'claude' | 'codex';

interface EventBase {
  /** Position in the transcript (0-based, in file order after merging). */
  index: number;
  /** ISO-8601 time of the line, when it has one. */
  at: string | null;
  /** Written by a subagent inline in the main file (Claude Code 1.0.x `isSidechain`). */
  sidechain: boolean;
}

/**
 * A message. `meta` marks text the person did not type or the model did not say to them: injected instructions,
 * environment context, slash-command expansions, hook context (Claude `isMeta`, Codex developer messages and
 * `<environment_context>` / AGENTS.md user items).
 */
export interface TranscriptMessage extends EventBase {
  kind: 'message';
  role: 'user' | 'assistant';
  text: string;
  meta: boolean;
}

/** A tool the model called: Claude `tool_use`, Codex `function_call` / `custom_tool_call` / `local_shell_call`. */
export interface TranscriptToolCall extends EventBase {
  kind: 'tool_call';
  id: string;
  name: string;
  /** The arguments as an object (Codex's JSON-string arguments parsed; a freeform tool's text as `{ input }`). */
  input: unknown;
}

/** What a tool returned. `ok` is false for Claude `is_error` and for Codex outputs reporting a non-zero exit. */
export interface TranscriptToolResult extends EventBase {
  kind: 'tool_result';
  id: string;
  ok: boolean;
  /** The result as text, capped. */
  output: string;
}

/** The context was compacted here (Claude `compact_boundary` / compact summary, Codex `compacted`). */
export interface TranscriptCompaction extends EventBase {
  kind: 'compaction';
  summary: string | null;
}

export type TranscriptEvent = TranscriptMessage | TranscriptToolCall | TranscriptToolResult | TranscriptCompaction;

/** A parsed transcript. Unknown record types are counted, never fatal. */
export interface Transcript {
  format: TranscriptFormat;
  /** Claude `sessionId` / Codex thread id, when the file says. */
  sessionId: string | null;
  cwd: string | null;
  events: TranscriptEvent[];
  /** Lines of a type this parser does not read (attachments, progress, token counts…). */
  skipped: number;
  /** Lines that are not JSON objects. */
  malformed: number;
  /** True when the file was larger than the read limit and only its start was parsed. */
  truncated: boolean;
}
