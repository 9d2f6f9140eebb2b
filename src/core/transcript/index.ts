export { parseTranscript, readTranscript, detectFormat, TOOL_OUTPUT_CHARS, MAX_TRANSCRIPT_BYTES } from './parse.js';
export { CODEX_INJECTED, isObject, parseArguments, str } from './records.js';
export type { Json } from './records.js';
export type {
  Transcript,
  TranscriptEvent,
  TranscriptFormat,
  TranscriptMessage,
  TranscriptToolCall,
  TranscriptToolResult,
  TranscriptCompaction,
} from './types.js';
