import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { CODEX_INJECTED, isObject, parseArguments, str, type Json } from './records.js';
import type { Transcript, TranscriptEvent, TranscriptFormat } from './types.js';

/**
 * Readers for the agents' on-disk transcripts (../shared/reference/agent-contracts.md §3 and §4.1): Claude Code's
 * project JSONL and Codex's rollout JSONL become one list of messages, tool calls, tool results and compactions.
 * Neither format is documented, and both gain record types every release, so anything not understood is skipped and
 * counted. Used by extraction (learning) and, later, by tapes.
 */

/** A tool result longer than this is cut: evaluation and extraction read excerpts, never whole outputs. */
export const TOOL_OUTPUT_CHARS = 4_000;
/** Transcripts are read up to this size; a longer file is parsed from its start and marked truncated. */
export const MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024;

const cap = (text: string, max = TOOL_OUTPUT_CHARS): string => (text.length > max ? `${text.slice(0, max)}…[${text.length} chars]` : text);

/** Text of a content array: text-like blocks joined; images and other blocks left out. */
function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => (isObject(block) ? (str(block.text) ?? '') : typeof block === 'string' ? block : ''))
    .filter(Boolean)
    .join('\n');
}

/** Which agent wrote these lines: Codex lines are `{type, payload}` envelopes; Claude lines carry `message`/`uuid`. */
export function detectFormat(lines: readonly string[]): TranscriptFormat | null {
  for (const line of lines.slice(0, 50)) {
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isObject(record)) continue;
    if ('payload' in record && typeof record.type === 'string') return 'codex';
    if ('uuid' in record || 'message' in record || 'sessionId' in record || 'leafUuid' in record) return 'claude';
  }
  return null;
}


/** A Codex tool output's exit status, from the formats 0.5x–0.169 write; null when it does not say. */
function codexExitCode(output: string): number | null {
  const match = /(?:Process exited with code|Exit code:)\s*(-?\d+)/.exec(output.slice(0, 2_000));
  if (match) return Number(match[1]);
  try {
    const parsed = JSON.parse(output) as { metadata?: { exit_code?: unknown } };
    return typeof parsed?.metadata?.exit_code === 'number' ? parsed.metadata.exit_code : null;
  } catch {
    return null;
  }
}

/** An event before it gets its position (distributes over the union, so each kind keeps its own fields). */
type Unplaced<T> = T extends unknown ? Omit<T, 'index'> : never;

interface Builder {
  transcript: Transcript;
  push(event: Unplaced<TranscriptEvent>): void;
}

function builder(format: TranscriptFormat): Builder {
  const transcript: Transcript = { format, sessionId: null, cwd: null, events: [], skipped: 0, malformed: 0, truncated: false };
  return {
    transcript,
    push(event) {
      transcript.events.push({ ...event, index: transcript.events.length } as TranscriptEvent);
    },
  };
}

function parseClaude(records: Json[], out: Builder): void {
  const t = out.transcript;
  // Claude Code writes one content block per line; consecutive lines of one API message share message.id.
  let lastAssistantId: string | null = null;
  for (const record of records) {
    const at = str(record.timestamp);
    const sidechain = record.isSidechain === true;
    t.sessionId ??= str(record.sessionId);
    t.cwd ??= str(record.cwd);
    const message = isObject(record.message) ? record.message : null;
    if (record.type === 'system' && record.subtype === 'compact_boundary') {
      out.push({ kind: 'compaction', at, sidechain, summary: null });
      lastAssistantId = null;
      continue;
    }
    if (record.type === 'user' && message) {
      lastAssistantId = null;
      if (record.isCompactSummary === true) {
        out.push({ kind: 'compaction', at, sidechain, summary: blockText(message.content) });
        continue;
      }
      if (typeof message.content === 'string') {
        out.push({ kind: 'message', role: 'user', text: message.content, meta: record.isMeta === true, at, sidechain });
        continue;
      }
      const texts: string[] = [];
      for (const block of Array.isArray(message.content) ? message.content : []) {
        if (!isObject(block)) continue;
        if (block.type === 'tool_result') {
          out.push({
            kind: 'tool_result',
            id: str(block.tool_use_id) ?? '',
            ok: block.is_error !== true,
            output: cap(blockText(block.content)),
            at,
            sidechain,
          });
        } else if (block.type === 'text' && typeof block.text === 'string') {
          texts.push(block.text);
        }
      }
      if (texts.length) out.push({ kind: 'message', role: 'user', text: texts.join('\n'), meta: record.isMeta === true, at, sidechain });
      continue;
    }
    if (record.type === 'assistant' && message) {
      const id = str(message.id);
      for (const block of Array.isArray(message.content) ? message.content : []) {
        if (!isObject(block)) continue;
        if (block.type === 'text' && typeof block.text === 'string') {
          const previous = t.events.at(-1);
          if (id !== null && id === lastAssistantId && previous?.kind === 'message' && previous.role === 'assistant') {
            previous.text += `\n${block.text}`;
          } else {
            out.push({ kind: 'message', role: 'assistant', text: block.text, meta: false, at, sidechain });
          }
        } else if (block.type === 'tool_use') {
          out.push({ kind: 'tool_call', id: str(block.id) ?? '', name: str(block.name) ?? '', input: block.input ?? {}, at, sidechain });
        }
      }
      lastAssistantId = id;
      continue;
    }
    t.skipped++;
  }
}

function parseCodex(records: Json[], out: Builder): void {
  const t = out.transcript;
  for (const record of records) {
    const at = str(record.timestamp);
    const payload = isObject(record.payload) ? record.payload : null;
    if (!payload) {
      t.skipped++;
      continue;
    }
    if (record.type === 'session_meta') {
      t.sessionId ??= str(payload.id);
      t.cwd ??= str(payload.cwd);
      continue;
    }
    if (record.type === 'compacted') {
      out.push({ kind: 'compaction', at, sidechain: false, summary: str(payload.message) });
      continue;
    }
    if (record.type !== 'response_item') {
      t.skipped++;
      continue;
    }
    switch (payload.type) {
      case 'message': {
        const role = payload.role;
        const text = blockText(payload.content);
        if (role === 'assistant') out.push({ kind: 'message', role: 'assistant', text, meta: false, at, sidechain: false });
        else if (role === 'user') out.push({ kind: 'message', role: 'user', text, meta: CODEX_INJECTED.test(text), at, sidechain: false });
        // Developer messages are instructions and hook context: never the person's words.
        else if (role === 'developer') out.push({ kind: 'message', role: 'user', text, meta: true, at, sidechain: false });
        break;
      }
      case 'function_call':
      case 'custom_tool_call':
        out.push({
          kind: 'tool_call',
          id: str(payload.call_id) ?? '',
          name: str(payload.name) ?? '',
          input: payload.type === 'custom_tool_call' ? { input: str(payload.input) ?? '' } : parseArguments(payload.arguments),
          at,
          sidechain: false,
        });
        break;
      case 'local_shell_call':
        out.push({ kind: 'tool_call', id: str(payload.call_id) ?? '', name: 'shell', input: payload.action ?? {}, at, sidechain: false });
        break;
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const output = typeof payload.output === 'string' ? payload.output : blockText(payload.output);
        const code = codexExitCode(output);
        const failed = (code !== null && code !== 0) || /verification failed/i.test(output.slice(0, 500));
        out.push({ kind: 'tool_result', id: str(payload.call_id) ?? '', ok: !failed, output: cap(output), at, sidechain: false });
        break;
      }
      default:
        t.skipped++;
    }
  }
}

/** Parses transcript text. `format` is detected when not given; an empty or unrecognisable text gives no events. */
export function parseTranscript(text: string, format?: TranscriptFormat): Transcript {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const detected = format ?? detectFormat(lines) ?? 'claude';
  const out = builder(detected);
  const records: Json[] = [];
  for (const line of lines) {
    try {
      const record: unknown = JSON.parse(line);
      if (isObject(record)) records.push(record);
      else out.transcript.malformed++;
    } catch {
      out.transcript.malformed++;
    }
  }
  if (detected === 'codex') parseCodex(records, out);
  else parseClaude(records, out);
  return out.transcript;
}

/** Reads and parses a transcript file, up to `maxBytes` (a cut last line is dropped). Throws on a missing file. */
export function readTranscript(path: string, options: { format?: TranscriptFormat; maxBytes?: number } = {}): Transcript {
  const maxBytes = options.maxBytes ?? MAX_TRANSCRIPT_BYTES;
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const n = readSync(fd, buffer, read, length - read, read);
      if (n === 0) break;
      read += n;
    }
    let text = buffer.subarray(0, read).toString('utf8');
    const truncated = size > maxBytes;
    if (truncated) text = text.slice(0, text.lastIndexOf('\n') + 1);
    const transcript = parseTranscript(text, options.format);
    transcript.truncated = truncated;
    return transcript;
  } finally {
    closeSync(fd);
  }
}
