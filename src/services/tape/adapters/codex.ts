import { posix } from 'node:path';
import { CODEX_INJECTED, parseToolArguments as parseArguments } from '../../../core/index.js';
import {
  EventSink,
  PENDING_SOURCE,
  editEvent,
  hunkRegion,
  isObject,
  parseLine,
  splitLines,
  str,
  tapePath,
  unifiedDiffHunks,
  wholeFileRange,
  type AdapterOptions,
  type AdapterResult,
  type Json,
  type VersionMatrix,
} from './common.js';

/**
 * Codex rollout JSONL → tape events (../shared/reference/agent-contracts.md §4.1–4.2).
 *
 * Rules worth knowing:
 * - `msg.in` is what the person typed: developer messages and injected user items (AGENTS.md, environment context,
 *   instructions) are harness boilerplate repeated in every session, so they are left out. `event_msg`
 *   `user_message` / `agent_message` repeat the `response_item` messages in modern rollouts; they are used only when
 *   the rollout has no `response_item` message of that role (older VS Code rollouts).
 * - `function_call`, `custom_tool_call`, `local_shell_call` (and `web_search_call`) → `tool.call`; their outputs →
 *   `tool.result` with the exit code parsed from both output formats (0.5x JSON, newer "Process exited with code N").
 * - `apply_patch` in every encoding (custom tool, function tool, through `shell`/`exec_command` as argv or heredoc)
 *   → `code.edit` after a successful output. One edit is never emitted twice: when a structured result for the same
 *   call id exists (`patch_apply_end` or `item_completed` FileChange `changes`), the edit events come from it (absolute
 *   paths, `@@ -a,b +c,d @@` hunks → exact ranges) at the call's output; otherwise from the patch text (no line
 *   numbers → null ranges). A structured result whose call is not in the rollout is emitted where it appears.
 * - `compacted` → `meta` labelled `compaction` with its message.
 */

export const CODEX_ADAPTER_VERSION = 1;
/** Versions seen in real rollouts and fixtures: 0.5x … 0.169.0. */
export const CODEX_VERSIONS: VersionMatrix = { min: [0, 1, 0], maxTested: [0, 169, 0], knownBad: [] };

/** Top-level record types with no conversation or code. */
const NOISE_RECORDS = new Set(['turn_context', 'world_state', 'inter_agent_communication_metadata', 'token_usage_record']);
/** `event_msg` types that repeat response items or only describe the harness. */
const NOISE_EVENTS = new Set([
  'token_count',
  'task_started',
  'task_complete',
  'turn_aborted',
  'agent_reasoning',
  'agent_reasoning_raw_content',
  'agent_reasoning_section_break',
  'exec_command_begin',
  'exec_command_end',
  'exec_command_output_delta',
  'patch_apply_begin',
  'context_compacted',
  'thread_settings_applied',
  'item_started',
  'thread_name_updated',
  'thread_goal_updated',
  'entered_review_mode',
  'exited_review_mode',
  'mcp_tool_call_begin',
  'mcp_tool_call_end',
  'web_search_begin',
  'web_search_end',
  'turn_diff',
  'background_event',
  'session_configured',
]);
/** `response_item` types with nothing readable (encrypted or internal). */
const NOISE_ITEMS = new Set(['ghost_snapshot', 'compaction', 'context_compaction']);

const SHELL_TOOLS = new Set(['shell', 'shell_command', 'exec_command', 'local_shell', 'container.exec', 'unified_exec']);

/** Text of message content items (`input_text`, `output_text`, `text`); images left out. */
function itemsText(content: unknown): string {
  if (typeof content === 'string') return content;
  const items = Array.isArray(content) ? content : isObject(content) ? [content] : [];
  return items
    .filter(isObject)
    .map((item) => (typeof item.text === 'string' ? item.text : ''))
    .filter((text) => text !== '')
    .join('\n');
}

/** A tool output's stdout and exit code, from the formats 0.5x–0.169 write. */
export function parseCodexOutput(output: string): { stdout: string; exit: number | null } {
  if (output.startsWith('{')) {
    try {
      const parsed = JSON.parse(output) as { output?: unknown; metadata?: { exit_code?: unknown } };
      if (typeof parsed.output === 'string') {
        return { stdout: parsed.output, exit: typeof parsed.metadata?.exit_code === 'number' ? parsed.metadata.exit_code : null };
      }
    } catch {
      // Not the JSON envelope: plain output that starts with a brace.
    }
  }
  const header = /^(?:[^\n]*\n){0,6}?(?:Process exited with code|Exit code:)\s*(-?\d+)\n(?:[^\n]*\n){0,6}?Output:\n/.exec(output);
  if (header) return { stdout: output.slice(header[0].length), exit: Number(header[1]) };
  return { stdout: output, exit: null };
}

/** The `*** Begin Patch … *** End Patch` text inside any string of a tool's arguments, when it runs apply_patch. */
export function findPatchText(args: unknown, toolName: string): string | null {
  const strings: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === 'string') strings.push(value);
    else if (Array.isArray(value)) value.forEach(collect);
    else if (isObject(value)) Object.values(value).forEach(collect);
  };
  collect(args);
  const invokesApplyPatch = toolName === 'apply_patch' || strings.some((s) => /\bapply_?patch\b/.test(s));
  if (!invokesApplyPatch) return null;
  for (const value of strings) {
    const match = /\*\*\* Begin Patch[\s\S]*?(?:\*\*\* End Patch|$)/.exec(value);
    if (match) return match[0];
  }
  return null;
}

interface PatchFile {
  op: 'add' | 'delete' | 'update';
  path: string;
  movePath: string | null;
  /** `+` lines of an added file, or the hunks of an update (each a list of ` `/`-`/`+` lines). */
  added: string[];
  hunks: string[][];
}

/** Parses apply_patch text (agent-contracts §4.2 grammar). */
export function parsePatch(text: string): PatchFile[] {
  const files: PatchFile[] = [];
  let current: PatchFile | undefined;
  let hunk: string[] | undefined;
  for (const line of text.split('\n')) {
    const header = /^\*\*\* (Add|Delete|Update) File: (.+)$/.exec(line);
    if (header) {
      current = { op: (header[1] as string).toLowerCase() as PatchFile['op'], path: (header[2] as string).trim(), movePath: null, added: [], hunks: [] };
      files.push(current);
      hunk = undefined;
      continue;
    }
    if (!current || line.startsWith('*** Begin Patch') || line.startsWith('*** End Patch') || line === '*** End of File') continue;
    const move = /^\*\*\* Move to: (.+)$/.exec(line);
    if (move) {
      current.movePath = (move[1] as string).trim();
      continue;
    }
    if (current.op === 'add') {
      if (line.startsWith('+')) current.added.push(line.slice(1));
      continue;
    }
    if (current.op === 'update') {
      if (line.startsWith('@@')) {
        hunk = [];
        current.hunks.push(hunk);
      } else if (line.startsWith(' ') || line.startsWith('-') || line.startsWith('+')) {
        if (!hunk) {
          hunk = [];
          current.hunks.push(hunk);
        }
        hunk.push(line);
      } else if (line === '' && hunk) {
        hunk.push(' ');
      }
    }
  }
  return files;
}

interface StructuredChanges {
  changes: Json;
  success: boolean;
}

export function adaptCodex(text: string, options: AdapterOptions = {}): AdapterResult {
  const lines = splitLines(text);
  const sink = new EventSink('codex', options.fromLine ?? 0);
  const records: Array<Json | null | 'blank'> = lines.map(parseLine);

  // First pass: facts that decide how later lines are read, whatever their order.
  const structured = new Map<string, StructuredChanges>();
  /** Call ids of apply_patch calls: their edits are emitted at the call's output, not at the structured result. */
  const patchCalls = new Set<string>();
  let hasUserItems = false;
  let hasAssistantItems = false;
  for (const record of records) {
    if (record === null || record === 'blank') continue;
    const payload = isObject(record.payload) ? record.payload : null;
    if (!payload) continue;
    const patchCall = patchCallId(record);
    if (patchCall !== null) patchCalls.add(patchCall);
    if (record.type === 'response_item' && payload.type === 'message') {
      if (payload.role === 'assistant') hasAssistantItems = true;
      if (payload.role === 'user' && !CODEX_INJECTED.test(itemsText(payload.content))) hasUserItems = true;
    }
    if (record.type !== 'event_msg') continue;
    const found =
      payload.type === 'patch_apply_end'
        ? { id: str(payload.call_id), changes: payload.changes, success: payload.success !== false && payload.status !== 'failed' }
        : payload.type === 'item_completed' && isObject(payload.item) && payload.item.type === 'FileChange'
          ? { id: str(payload.item.id), changes: payload.item.changes, success: payload.item.status !== 'failed' }
          : null;
    if (found?.id && isObject(found.changes) && !structured.has(found.id)) {
      structured.set(found.id, { changes: found.changes, success: found.success });
    }
  }

  let sessionId: string | null = null;
  let cwd: string | null = null;
  let model: string | null = null;
  let repoHead: string | null = null;
  let firstTime: string | null = null;
  const calls = new Map<string, { name: string; patch: string | null; workdir: string | null }>();
  const edited = new Set<string>();

  /** A path from a patch or a change map, as tapes store it (relative patch paths are relative to the workdir). */
  const filePath = (path: string, workdir: string | null): string =>
    tapePath(workdir && !posix.isAbsolute(path) && !/^[A-Za-z]:/.test(path) ? posix.join(workdir, path) : path, cwd);

  function editsFromChanges(changes: Json, t: string | null, callId: string | null): void {
    for (const [path, raw] of Object.entries(changes)) {
      if (!isObject(raw)) continue;
      // Newer builds tag the change (`{type:"update", …}`); older ones nest it (`{update:{…}}`).
      const kind = str(raw.type) ?? (['add', 'delete', 'update'].find((key) => isObject(raw[key])) as string | undefined) ?? null;
      const body = str(raw.type) ? raw : isObject(raw[kind ?? '']) ? (raw[kind ?? ''] as Json) : raw;
      const file = filePath(path, null);
      if (kind === 'add') {
        const content = str(body.content) ?? '';
        sink.push(editEvent({ t, file, op: 'create', region: { after_range: wholeFileRange(content), after_text: content }, call_id: callId }));
      } else if (kind === 'delete') {
        const content = str(body.content);
        sink.push(
          editEvent({ t, file, op: 'delete', region: { before_range: content !== null ? wholeFileRange(content) : null, before_text: content }, call_id: callId }),
        );
      } else if (kind === 'update') {
        const target = str(body.move_path) ? filePath(str(body.move_path) as string, null) : file;
        const regions = unifiedDiffHunks(str(body.unified_diff) ?? '')
          .map((h) => hunkRegion(h.oldStart, h.newStart, h.lines))
          .filter((region) => region !== null);
        if (regions.length === 0) sink.push(editEvent({ t, file: target, op: 'edit', call_id: callId }));
        for (const region of regions) sink.push(editEvent({ t, file: target, op: 'edit', region, call_id: callId }));
      }
    }
  }

  function editsFromPatch(patch: string, workdir: string | null, t: string | null, callId: string): void {
    for (const change of parsePatch(patch)) {
      const file = filePath(change.movePath ?? change.path, workdir);
      if (change.op === 'add') {
        const content = change.added.length > 0 ? `${change.added.join('\n')}\n` : '';
        sink.push(editEvent({ t, file, op: 'create', region: { after_range: wholeFileRange(content), after_text: content }, call_id: callId }));
      } else if (change.op === 'delete') {
        sink.push(editEvent({ t, file, op: 'delete', call_id: callId }));
      } else {
        const regions = change.hunks.map((lines) => hunkRegion(1, 1, lines)).filter((region) => region !== null);
        if (regions.length === 0) sink.push(editEvent({ t, file, op: 'edit', call_id: callId }));
        // The patch format has no line numbers: texts are exact, ranges unknown.
        for (const region of regions) {
          sink.push(editEvent({ t, file, op: 'edit', region: { before_text: region.before_text, after_text: region.after_text }, call_id: callId }));
        }
      }
    }
  }

  const pushCall = (t: string | null, name: string, callId: string, args: unknown): void => {
    const patch = findPatchText(args, name);
    const workdir = isObject(args) ? (str(args.workdir) ?? str(args.working_directory)) : null;
    calls.set(callId, { name, patch, workdir });
    sink.push({ t, source: PENDING_SOURCE, k: 'tool.call', tool: name, call_id: callId, args });
  };

  for (let index = 0; index < records.length; index++) {
    sink.line = index;
    const record = records[index];
    if (record === 'blank' || record === undefined) continue;
    if (record === null) {
      sink.badLine();
      continue;
    }
    const t = str(record.timestamp);
    if (sink.emitting && firstTime === null) firstTime = t;
    const type = str(record.type) ?? '(none)';
    const payload = isObject(record.payload) ? record.payload : null;
    if (!payload) {
      sink.skip(type);
      continue;
    }

    if (type === 'session_meta') {
      const version = str(payload.cli_version);
      if (version) sink.sawVersion(version);
      if (sessionId === null) {
        sessionId = str(payload.id) ?? str(payload.session_id);
        cwd = str(payload.cwd);
        repoHead = isObject(payload.git) ? str(payload.git.commit_hash) : null;
      }
      continue;
    }
    if (type === 'turn_context') {
      model ??= str(payload.model);
      continue;
    }
    if (type === 'compacted') {
      const summary = str(payload.message);
      sink.push({ t, source: PENDING_SOURCE, k: 'meta', label: 'compaction', summary: summary === '' ? null : summary });
      continue;
    }
    if (NOISE_RECORDS.has(type)) continue;

    if (type === 'event_msg') {
      const eventType = str(payload.type) ?? '(none)';
      if (eventType === 'user_message') {
        const message = str(payload.message) ?? '';
        if (!hasUserItems && message.trim() !== '' && !CODEX_INJECTED.test(message)) sink.push({ t, source: PENDING_SOURCE, k: 'msg.in', text: message });
      } else if (eventType === 'agent_message') {
        const message = str(payload.message) ?? '';
        if (!hasAssistantItems && message.trim() !== '') sink.push({ t, source: PENDING_SOURCE, k: 'msg.out', text: message });
      } else if (eventType === 'patch_apply_end' || (eventType === 'item_completed' && isObject(payload.item) && payload.item.type === 'FileChange')) {
        const callId = str(payload.call_id) ?? (isObject(payload.item) ? str(payload.item.id) : null);
        const found = callId ? structured.get(callId) : undefined;
        // Emitted here only when no apply_patch call of this id exists to carry it.
        if (callId && found?.success && !edited.has(callId) && !patchCalls.has(callId)) {
          edited.add(callId);
          editsFromChanges(found.changes, t, callId);
        }
      } else if (!NOISE_EVENTS.has(eventType) && eventType !== 'item_completed') {
        sink.skip(`event_msg.${eventType}`);
      }
      continue;
    }

    if (type !== 'response_item') {
      sink.skip(type);
      continue;
    }
    const itemType = str(payload.type) ?? '(none)';
    switch (itemType) {
      case 'message': {
        const textOut = itemsText(payload.content);
        if (textOut.trim() === '') break;
        if (payload.role === 'assistant') sink.push({ t, source: PENDING_SOURCE, k: 'msg.out', text: textOut });
        else if (payload.role === 'user' && !CODEX_INJECTED.test(textOut)) sink.push({ t, source: PENDING_SOURCE, k: 'msg.in', text: textOut });
        // Developer messages and injected user items: instructions and hook context, never the person's words.
        break;
      }
      case 'reasoning': {
        const summary = (Array.isArray(payload.summary) ? payload.summary : []).filter(isObject).map((item) => str(item.text) ?? '').filter(Boolean).join('\n');
        if (summary.trim() !== '') sink.push({ t, source: PENDING_SOURCE, k: 'msg.out', text: summary });
        break;
      }
      case 'function_call': {
        const name = str(payload.name) ?? '';
        const namespace = str(payload.namespace);
        pushCall(t, namespace ? `${namespace}.${name}` : name, str(payload.call_id) ?? '', parseArguments(payload.arguments));
        break;
      }
      case 'custom_tool_call': {
        const name = str(payload.name) ?? '';
        const input = str(payload.input) ?? '';
        // Freeform input: apply_patch's patch text; some tools still send JSON through it.
        const parsed = name === 'apply_patch' ? { input } : parseArguments(input);
        pushCall(t, name, str(payload.call_id) ?? '', isObject(parsed) ? parsed : { input });
        break;
      }
      case 'local_shell_call':
        pushCall(t, 'local_shell', str(payload.call_id) ?? str(payload.id) ?? '', payload.action ?? {});
        break;
      case 'web_search_call':
        pushCall(t, 'web_search', str(payload.call_id) ?? str(payload.id) ?? '', payload.action ?? {});
        break;
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const callId = str(payload.call_id) ?? '';
        const call = calls.get(callId);
        const output = itemsText(payload.output);
        const parsed = parseCodexOutput(output);
        const failed = (parsed.exit !== null && parsed.exit !== 0) || /apply_patch verification failed/i.test(output.slice(0, 500));
        const shell = call !== undefined && (SHELL_TOOLS.has(call.name) || call.patch !== null);
        sink.push({
          t,
          source: PENDING_SOURCE,
          k: 'tool.result',
          tool: call?.name ?? 'unknown',
          call_id: callId,
          stdout: parsed.stdout,
          ...(shell || parsed.exit !== null ? { exit: parsed.exit } : {}),
          is_error: failed,
        });
        if (call?.patch && !failed && !edited.has(callId)) {
          edited.add(callId);
          const found = structured.get(callId);
          if (found?.success) editsFromChanges(found.changes, t, callId);
          else editsFromPatch(call.patch, call.workdir, t, callId);
        }
        break;
      }
      default:
        if (!NOISE_ITEMS.has(itemType)) sink.skip(`response_item.${itemType}`);
    }
  }

  return sink.finish({
    matrix: CODEX_VERSIONS,
    adapterVersion: CODEX_ADAPTER_VERSION,
    sessionId,
    cwd,
    model,
    repoHead,
    firstTime,
    lines: lines.length,
    options,
  });
}

/** The call id of an apply_patch call (any encoding), or null for any other record. */
function patchCallId(record: Json | null | 'blank'): string | null {
  if (!record || record === 'blank' || record.type !== 'response_item' || !isObject(record.payload)) return null;
  const payload = record.payload;
  const callId = str(payload.call_id);
  return callId !== null && isPatchPayload(payload) ? callId : null;
}

function isPatchPayload(payload: Json): boolean {
  if (payload.type === 'custom_tool_call') return payload.name === 'apply_patch';
  if (payload.type === 'function_call') return findPatchText(parseArguments(payload.arguments), str(payload.name) ?? '') !== null;
  if (payload.type === 'local_shell_call') return findPatchText(payload.action, 'local_shell') !== null;
  return false;
}
