import type { TapeEvent } from '../events.js';
import {
  EventSink,
  PENDING_SOURCE,
  editEvent,
  hunkRegion,
  int,
  isObject,
  lineCount,
  parseLine,
  replayEdits,
  splitLines,
  str,
  tapePath,
  wholeFileRange,
  type AdapterOptions,
  type AdapterResult,
  type Json,
  type VersionMatrix,
} from './common.js';

/**
 * Claude Code project JSONL → tape events (../shared/reference/agent-contracts.md §3).
 *
 * Rules worth knowing:
 * - `msg.in` is what arrived as user text, including `isMeta` lines (slash-command expansions are the task the person
 *   asked for) but never tool results; `msg.out` is assistant text, and non-empty `thinking` as its own event.
 *   Consecutive lines of one API message (same `message.id`) merge their text in order.
 * - `code.read` / `code.edit` follow a tool's *successful* result: an edit that failed (`is_error`) changed nothing,
 *   so only its `tool.call` (with the proposed text) is kept.
 * - Edit: one event per `structuredPatch` hunk (exact ranges, whole changed lines); without hunks the original file
 *   is replayed, and without that the input's old/new strings are kept with null ranges. MultiEdit: one event per edit
 *   (replayed on `originalFileContents`; hunks merge neighbouring edits, so they cannot say which edit did what).
 *   Write: one `create` or `overwrite` event with the whole content.
 * - Sidechain lines (1.0.x inline subagents, `subagents/agent-*.jsonl` files) carry `agent`: the `agentId`, or
 *   `sidechain` when the line has none.
 * - `compact_boundary` and `isCompactSummary` become one `meta` event labelled `compaction` with the summary.
 * - Types that only describe the UI or the harness (attachments, progress, snapshots, titles…) are read and dropped;
 *   any other type is skipped and counted in coverage.
 */

export const CLAUDE_ADAPTER_VERSION = 1;
/** Versions seen in real transcripts and fixtures: 1.0.98 … 2.1.240. */
export const CLAUDE_VERSIONS: VersionMatrix = { min: [1, 0, 0], maxTested: [2, 1, 240], knownBad: [] };

/** Record types that carry no conversation or code (agent-contracts §3.2): read, dropped, not counted. */
const CLAUDE_NOISE = new Set([
  'summary',
  'file-history-snapshot',
  'progress',
  'attachment',
  'queue-operation',
  'ai-title',
  'custom-title',
  'last-prompt',
  'agent-name',
  'permission-mode',
  'mode',
  'pr-link',
  'worktree-state',
  'bridge-session',
]);

/** `     12→text` (1.x) or `12\ttext` (2.1.x): the Read tool's line-number prefix. */
const NUMBERED_LINE = /^\s*(\d+)(?:→|\t)(.*)$/;

/** Strips Read's line-number prefixes from the leading numbered lines; null when the text is not numbered. */
export function stripLineNumbers(text: string): { range: [number, number]; text: string } | null {
  const out: string[] = [];
  let first = 0;
  let last = 0;
  for (const line of text.split('\n')) {
    const match = NUMBERED_LINE.exec(line);
    if (!match) break;
    const number = Number(match[1]);
    if (out.length === 0) first = number;
    else if (number !== last + 1) break;
    last = number;
    out.push(match[2] as string);
  }
  return out.length === 0 ? null : { range: [first, last], text: out.join('\n') };
}

/** Text of a message or tool-result content: a string, or text blocks joined by newlines. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isObject)
    .map((block) => (block.type === 'text' ? (str(block.text) ?? '') : ''))
    .filter((text) => text !== '')
    .join('\n');
}

interface PendingCall {
  name: string;
  input: Json;
}

export function adaptClaude(text: string, options: AdapterOptions = {}): AdapterResult {
  const lines = splitLines(text);
  const sink = new EventSink('claude', options.fromLine ?? 0);
  const calls = new Map<string, PendingCall>();
  let sessionId: string | null = null;
  let cwd: string | null = null;
  let model: string | null = null;
  let firstTime: string | null = null;
  /** The API message id whose text the last msg.out holds, to merge split blocks. */
  let openMessageId: string | null = null;
  /** Set by the first record that says whether it is a sidechain: a subagent file's agent id, else null. */
  let fileAgent: string | null | undefined;

  for (let index = 0; index < lines.length; index++) {
    sink.line = index;
    const record = parseLine(lines[index] as string);
    if (record === 'blank') continue;
    if (record === null) {
      sink.badLine();
      continue;
    }
    const version = str(record.version);
    if (version) sink.sawVersion(version);
    sessionId ??= str(record.sessionId);
    cwd ??= str(record.cwd);
    const t = str(record.timestamp);
    if (sink.emitting && firstTime === null) firstTime = t;
    const agent = record.isSidechain === true ? (str(record.agentId) ?? 'sidechain') : undefined;
    if (fileAgent === undefined && typeof record.isSidechain === 'boolean') fileAgent = agent ?? null;
    const withAgent = agent !== undefined ? { agent } : {};
    const message = isObject(record.message) ? record.message : null;
    const type = str(record.type) ?? '(none)';

    if (type === 'assistant' && message) {
      const id = str(message.id);
      const messageModel = str(message.model);
      if (model === null && messageModel && messageModel !== '<synthetic>') model = messageModel;
      for (const block of Array.isArray(message.content) ? message.content : []) {
        if (!isObject(block)) continue;
        if (block.type === 'text' || block.type === 'thinking') {
          const blockText = str(block.type === 'text' ? block.text : block.thinking) ?? '';
          if (blockText.trim() === '') continue;
          const last = sink.last();
          if (block.type === 'text' && id !== null && id === openMessageId && last?.k === 'msg.out') {
            last.text += `\n${blockText}`;
          } else {
            sink.push({ t, source: PENDING_SOURCE, ...withAgent, k: 'msg.out', text: blockText });
          }
          openMessageId = block.type === 'text' ? id : null;
        } else if (block.type === 'tool_use') {
          const callId = str(block.id) ?? '';
          const name = str(block.name) ?? '';
          const input = isObject(block.input) ? block.input : {};
          calls.set(callId, { name, input });
          sink.push({ t, source: PENDING_SOURCE, ...withAgent, k: 'tool.call', tool: name, call_id: callId, args: block.input ?? {} });
          openMessageId = null;
        } else if (block.type !== 'redacted_thinking') {
          sink.skip(`assistant.${str(block.type) ?? 'unknown'}`);
        }
      }
      continue;
    }

    if (type === 'user' && message) {
      openMessageId = null;
      if (record.isCompactSummary === true) {
        const summary = contentText(message.content);
        const last = sink.last();
        // The summary line follows its compact_boundary: one compaction event, not two.
        if (last?.k === 'meta' && last.label === 'compaction' && (last.summary ?? null) === null) last.summary = summary;
        else sink.push({ t, source: PENDING_SOURCE, ...withAgent, k: 'meta', label: 'compaction', summary });
        continue;
      }
      if (typeof message.content === 'string') {
        if (message.content.trim() !== '') sink.push({ t, source: PENDING_SOURCE, ...withAgent, k: 'msg.in', text: message.content });
        continue;
      }
      const texts: string[] = [];
      for (const block of Array.isArray(message.content) ? message.content : []) {
        if (!isObject(block)) continue;
        if (block.type === 'tool_result') {
          toolResult(block, record.toolUseResult, t, agent);
        } else if (block.type === 'text') {
          const blockText = str(block.text) ?? '';
          if (blockText.trim() !== '') texts.push(blockText);
        }
      }
      if (texts.length > 0) sink.push({ t, source: PENDING_SOURCE, ...withAgent, k: 'msg.in', text: texts.join('\n') });
      continue;
    }

    if (type === 'system') {
      if (record.subtype === 'compact_boundary') {
        sink.push({ t, source: PENDING_SOURCE, ...withAgent, k: 'meta', label: 'compaction', summary: null });
      }
      // Other system lines (hook summaries, durations, API errors) describe the harness, not the work.
      continue;
    }
    if (CLAUDE_NOISE.has(type)) continue;
    sink.skip(type);
  }

  function toolResult(block: Json, toolUseResult: unknown, t: string | null, agent: string | undefined): void {
    const withAgent = agent !== undefined ? { agent } : {};
    const callId = str(block.tool_use_id) ?? '';
    const call = calls.get(callId);
    const name = call?.name ?? 'unknown';
    const isError = block.is_error === true;
    const text = contentText(block.content);
    const result = isObject(toolUseResult) ? toolUseResult : null;
    const shell = name === 'Bash' || name === 'bash';
    const stdout = result && typeof result.stdout === 'string' ? result.stdout : text;
    const stderr = result && typeof result.stderr === 'string' && result.stderr !== '' ? result.stderr : undefined;
    const exitMatch = /^(?:Error: )?Exit code (\d+)/.exec(text);
    const event: TapeEvent = {
      t,
      source: PENDING_SOURCE,
      ...withAgent,
      k: 'tool.result',
      tool: name,
      call_id: callId,
      stdout,
      ...(stderr !== undefined ? { stderr } : {}),
      ...(shell ? { exit: exitMatch ? Number(exitMatch[1]) : isError ? null : 0 } : {}),
      is_error: isError,
    };
    sink.push(event);
    if (isError) return;
    const input = call?.input ?? {};
    const rawFile = str(result?.filePath) ?? str(input.file_path) ?? str(input.notebook_path);

    if (name === 'Read') {
      const file = isObject(result?.file) ? result.file : null;
      const path = str(file?.filePath) ?? rawFile;
      if (path === null) return;
      const content = str(file?.content);
      const start = int(file?.startLine);
      const count = int(file?.numLines);
      let range: [number, number] | null = null;
      let readText: string | null = null;
      if (content !== null) {
        readText = content;
        // numLines counts the empty "line" after a final newline; the range covers the lines the text really has.
        const first = Math.max(start ?? 1, 1);
        if (start !== null || count !== null) range = [first, first + lineCount(content) - 1];
      } else if (result === null || result.type === 'text') {
        const numbered = stripLineNumbers(text);
        if (numbered) {
          range = numbered.range;
          readText = numbered.text;
        }
      }
      sink.push({ t, source: PENDING_SOURCE, ...withAgent, k: 'code.read', file: tapePath(path, cwd), range, text: readText });
      return;
    }
    if (rawFile === null) return;
    const file = tapePath(rawFile, cwd);

    if (name === 'Edit') {
      const patch = Array.isArray(result?.structuredPatch) ? result.structuredPatch.filter(isObject) : [];
      const regions = patch
        .map((hunk) => hunkRegion(int(hunk.oldStart) ?? 1, int(hunk.newStart) ?? 1, Array.isArray(hunk.lines) ? hunk.lines.filter((l): l is string => typeof l === 'string') : []))
        .filter((region) => region !== null);
      if (regions.length > 0) {
        for (const region of regions) sink.push(editEvent({ t, file, op: 'edit', region, call_id: callId, agent }));
        return;
      }
      const oldString = str(input.old_string) ?? str(result?.oldString) ?? '';
      const newString = str(input.new_string) ?? str(result?.newString) ?? '';
      const original = str(result?.originalFile);
      const replayed = original !== null ? replayEdits(original, [{ old_string: oldString, new_string: newString, replace_all: input.replace_all === true }])[0] : null;
      if (replayed && replayed.length > 0) {
        for (const region of replayed) sink.push(editEvent({ t, file, op: 'edit', region, call_id: callId, agent }));
      } else {
        sink.push(editEvent({ t, file, op: 'edit', before_text: oldString, after_text: newString, call_id: callId, agent }));
      }
      return;
    }

    if (name === 'MultiEdit') {
      const edits = (Array.isArray(input.edits) ? input.edits : Array.isArray(result?.edits) ? result.edits : [])
        .filter(isObject)
        .map((edit) => ({ old_string: str(edit.old_string) ?? '', new_string: str(edit.new_string) ?? '', replace_all: edit.replace_all === true }));
      const original = str(result?.originalFileContents) ?? str(result?.originalFile);
      const replayed = original !== null ? replayEdits(original, edits) : edits.map(() => null);
      edits.forEach((edit, i) => {
        const regions = replayed[i];
        if (regions && regions.length > 0) {
          for (const region of regions) sink.push(editEvent({ t, file, op: 'edit', region, call_id: callId, agent }));
        } else {
          sink.push(editEvent({ t, file, op: 'edit', before_text: edit.old_string, after_text: edit.new_string, call_id: callId, agent }));
        }
      });
      return;
    }

    if (name === 'Write') {
      const content = str(input.content) ?? str(result?.content);
      if (content === null) return;
      const original = result && 'originalFile' in result ? str(result.originalFile) : null;
      const created = result?.type === 'create' || (result !== null && result.originalFile === null && result.type !== 'update');
      sink.push(
        editEvent({
          t,
          file,
          op: created ? 'create' : 'overwrite',
          region: {
            before_range: original !== null ? wholeFileRange(original) : null,
            after_range: wholeFileRange(content),
            before_text: original,
            after_text: content,
          },
          call_id: callId,
          agent,
        }),
      );
      return;
    }

    if (name === 'NotebookEdit') {
      const mode = str(input.edit_mode);
      sink.push(
        editEvent({
          t,
          file,
          op: mode === 'delete' ? 'delete' : 'edit',
          before_text: null,
          after_text: mode === 'delete' ? null : (str(input.new_source) ?? null),
          call_id: callId,
          agent,
        }),
      );
    }
  }

  return sink.finish({
    matrix: CLAUDE_VERSIONS,
    adapterVersion: CLAUDE_ADAPTER_VERSION,
    sessionId,
    cwd,
    model,
    repoHead: null,
    firstTime,
    lines: lines.length,
    ...(fileAgent ? { fileAgent } : {}),
    options,
  });
}
