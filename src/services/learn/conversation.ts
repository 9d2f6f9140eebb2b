import type { Transcript, TranscriptEvent } from '../../core/index.js';
import { redactText } from '../../core/index.js';

/**
 * What evaluation and extraction send to a model: the conversation of a transcript, cleaned and cut. Only what the
 * person typed and what the assistant said (plus, for excerpts, one line per tool call) — never injected context,
 * our own `[ENGRAM]` blocks (so injected memories are not learned again), secrets or whole tool outputs.
 */

/** Sizes, with the reason for each (engrammar measured extraction quality by chunk size: 8K chunks kept 85–100 % of
 * the good lessons, 30K chunks 41–52 %; ../shared/reference/peers.md §1.11). */
export const CONVERSATION = {
  /** One message is cut to this many characters: the point of a message is in its first lines. */
  messageChars: 500,
  /** A chunk sent to the model for extraction. */
  chunkChars: 8_000,
  /** Messages repeated at the start of the next chunk, so a correction split across a boundary is still seen whole. */
  overlapMessages: 2,
  /** An excerpt around a shown engram: messages and tool calls before and after it. */
  excerpt: { before: 6, after: 12, chars: 6_000 },
} as const;

/** Markup that is not conversation: our blocks, agent reminders, IDE and command wrappers. */
const NOISE = [
  /\[ENGRAM\][\s\S]*?\[\/ENGRAM\]/g,
  /\[ENGRAMMAR_V1\][\s\S]*?\[\/ENGRAMMAR_V1\]/g,
  /<system-reminder>[\s\S]*?<\/system-reminder>/gi,
  /<(ide_opened_file|ide_selection|ide_diagnostics|task-notification|local-command-stdout|local-command-stderr)>[\s\S]*?<\/\1>/gi,
  /<private>[\s\S]*?<\/private>/gi,
];

/** One cleaned line of conversation. */
export interface ConversationLine {
  role: 'user' | 'assistant' | 'tool';
  text: string;
  at: string | null;
  index: number;
}

function clean(text: string, max: number): string {
  let out = text.length > 200_000 ? text.slice(0, 200_000) : text;
  for (const pattern of NOISE) out = out.replace(pattern, ' ');
  out = redactText(out.replace(/\s+/g, ' ').trim());
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}

/** A tool call as one short line: the tool and what it worked on, and whether it failed. */
function toolLine(event: Extract<TranscriptEvent, { kind: 'tool_call' }>, failed: boolean): string {
  const input = (event.input ?? {}) as Record<string, unknown>;
  const target = [input.file_path, input.path, input.command, input.cmd, input.pattern, input.description]
    .find((value) => typeof value === 'string' && value.trim() !== '') as string | undefined;
  const patch = typeof input.input === 'string' ? /\*\*\* (?:Add|Update|Delete) File: (.+)/.exec(input.input)?.[1] : undefined;
  return `${event.name} ${target ?? patch ?? ''}`.trim() + (failed ? ' (failed)' : '');
}

/**
 * The conversation of a transcript: non-injected user messages and assistant messages (subagent sidechains left
 * out), cleaned and each cut to `messageChars`; with `tools`, one line per tool call too.
 */
export function conversationLines(transcript: Transcript, options: { messageChars?: number; tools?: boolean } = {}): ConversationLine[] {
  const max = options.messageChars ?? CONVERSATION.messageChars;
  const failed = new Set(transcript.events.filter((event) => event.kind === 'tool_result' && !event.ok).map((event) => (event as { id: string }).id));
  const lines: ConversationLine[] = [];
  for (const event of transcript.events) {
    if (event.sidechain) continue;
    if (event.kind === 'message' && !event.meta) {
      const text = clean(event.text, max);
      if (text) lines.push({ role: event.role, text, at: event.at, index: event.index });
    } else if (event.kind === 'tool_call' && options.tools) {
      lines.push({ role: 'tool', text: clean(toolLine(event, failed.has(event.id)), max), at: event.at, index: event.index });
    }
  }
  return lines;
}

const render = (line: ConversationLine): string => `${line.role}: ${line.text}`;

/** One chunk of conversation: lines `[start, end)` rendered as `role: text`. */
export interface ConversationChunk {
  start: number;
  end: number;
  text: string;
}

/**
 * Chunks of at most `chunkChars` for extraction, consecutive chunks sharing `overlapMessages` messages. A single line
 * longer than a chunk cannot happen: lines are cut to `messageChars` first.
 */
export function conversationChunks(
  lines: readonly ConversationLine[],
  options: { chunkChars?: number; overlapMessages?: number } = {},
): ConversationChunk[] {
  const size = options.chunkChars ?? CONVERSATION.chunkChars;
  const overlap = options.overlapMessages ?? CONVERSATION.overlapMessages;
  const chunks: ConversationChunk[] = [];
  let start = 0;
  while (start < lines.length) {
    let end = start;
    let length = 0;
    while (end < lines.length && (end === start || length + render(lines[end] as ConversationLine).length + 1 <= size)) {
      length += render(lines[end] as ConversationLine).length + 1;
      end++;
    }
    chunks.push({ start, end, text: lines.slice(start, end).map(render).join('\n') });
    if (end >= lines.length) break;
    start = Math.max(start + 1, end - overlap);
  }
  return chunks;
}

/**
 * The part of a session around a moment (when an engram was shown): the conversation and tool calls from `before`
 * lines ahead of it to `after` lines past it, within `chars`. Evaluation sends this, not the whole transcript.
 */
export function excerptAround(
  transcript: Transcript,
  at: string,
  options: { before?: number; after?: number; chars?: number } = {},
): string {
  const { before, after, chars } = { ...CONVERSATION.excerpt, ...options };
  const lines = conversationLines(transcript, { tools: true });
  const moment = Date.parse(at);
  let pivot = lines.findIndex((line) => line.at !== null && Date.parse(line.at) >= moment);
  if (pivot < 0) pivot = lines.length;
  const picked = lines.slice(Math.max(0, pivot - before), pivot + after).map(render);
  let text = picked.join('\n');
  if (text.length > chars) text = `${text.slice(0, chars - 1)}…`;
  return text;
}
