#!/usr/bin/env node
// Builds fixtures/eval-conversations/memories.jsonl from the real transcripts in ../shared/fixtures/transcripts:
// one memory per turn (a user or assistant message, a tool call, a tool result), long turns cut into chunks at line
// boundaries. Deterministic: the same transcripts give the same file, byte for byte. The queries that point at these
// memories were written by hand (docs/SEARCH.md, "Evaluation sets").
//
//   node scripts/eval/conversation-turns.mjs [--check]
//
// --check rebuilds in memory and fails if the committed file differs (the transcripts or this script changed).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const transcripts = join(root, '..', 'shared', 'fixtures', 'transcripts');
const out = join(root, 'fixtures', 'eval-conversations', 'memories.jsonl');

/** The sessions with real content (the two `jazzyalex` files are a schema corpus whose values were trimmed). */
const SESSIONS = [
  ['kimuson-init', 'd-kimuson__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl'],
  ['kimuson-update', 'd-kimuson__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl'],
  ['ghq-colors', 'git-ai-project__example-claude-code.jsonl'],
  ['hello-world', 'git-ai-project__claude-code-with-thinking.jsonl'],
  ['claude-retry', 'claude-code-2.1.197__scripted-session.jsonl'],
  ['claude-retry-subagent', 'claude-code-2.1.197__scripted-session__subagent.jsonl'],
  ['codex-retry', 'codex-0.169.0__scripted-session.jsonl'],
  ['codex-vscode', 'lparlett__codex_file_updates.jsonl'],
];

/** Turn text longer than this is cut into chunks (at line ends where possible); at most MAX_CHUNKS per turn. */
const CHUNK = 700;
const MAX_CHUNKS = 8;

/** Boilerplate that a memory store would not keep: it carries no fact about the session. */
const BOILERPLATE = [
  /^Todos have been modified successfully/,
  /^<environment_context>/,
  /^# AGENTS\.md instructions/,
  /^<permissions instructions>/,
  /^<skills_instructions>/,
  /^<user_instructions>/,
  /^\[trimmed for fixture\]$/,
];

function chunks(text) {
  const pieces = [];
  let rest = text.trim();
  while (rest.length > 0 && pieces.length < MAX_CHUNKS) {
    if (rest.length <= CHUNK) {
      pieces.push(rest);
      break;
    }
    let cut = rest.lastIndexOf('\n', CHUNK);
    if (cut < CHUNK / 2) cut = rest.lastIndexOf(' ', CHUNK);
    if (cut < CHUNK / 2) cut = CHUNK;
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  return pieces.filter(Boolean);
}

const textOf = (content) =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((block) => (typeof block === 'string' ? block : (block?.text ?? ''))).filter(Boolean).join('\n')
      : '';

/** A tool call as a person would note it: the tool and its telling inputs, never a whole file body. */
function describeCall(name, input) {
  if (typeof input === 'string') return `${name}: ${input}`;
  const fields = input ?? {};
  if (name === 'TodoWrite') return `TodoWrite: ${(fields.todos ?? []).map((todo) => `${todo.content} (${todo.status})`).join('; ')}`;
  if (name === 'Edit') return `Edit ${fields.file_path}: replace ${JSON.stringify(fields.old_string)} with ${JSON.stringify(fields.new_string)}`;
  if (name === 'MultiEdit') {
    return `MultiEdit ${fields.file_path}: ${(fields.edits ?? []).map((e) => `replace ${JSON.stringify(e.old_string)} with ${JSON.stringify(e.new_string)}`).join('; ')}`;
  }
  if (name === 'Write') return `Write ${fields.file_path}:\n${fields.content ?? ''}`;
  const parts = Object.entries(fields).map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  return `${name} ${parts.join(' ')}`;
}

function turnsOfClaude(records) {
  const turns = [];
  for (const record of records) {
    if (record.type === 'summary' && record.summary) turns.push({ who: 'summary', text: record.summary });
    const message = record.message;
    if (!message?.content) continue;
    const role = message.role ?? record.type;
    if (typeof message.content === 'string') {
      turns.push({ who: role, text: message.content });
      continue;
    }
    for (const block of message.content) {
      if (block.type === 'text') turns.push({ who: role, text: block.text });
      else if (block.type === 'thinking') turns.push({ who: `${role} (thinking)`, text: block.thinking });
      else if (block.type === 'tool_use') turns.push({ who: 'tool call', text: describeCall(block.name, block.input) });
      else if (block.type === 'tool_result') turns.push({ who: 'tool result', text: textOf(block.content) });
    }
  }
  return turns;
}

function turnsOfCodex(records) {
  const turns = [];
  for (const record of records) {
    const p = record.payload;
    if (!p) continue;
    if (record.type === 'response_item') {
      if (p.type === 'message' && (p.role === 'user' || p.role === 'assistant')) turns.push({ who: p.role, text: textOf(p.content) });
      else if (p.type === 'function_call' || p.type === 'custom_tool_call') {
        let input = p.arguments ?? p.input;
        try {
          input = typeof input === 'string' && input.startsWith('{') ? JSON.parse(input) : input;
        } catch {}
        turns.push({ who: 'tool call', text: describeCall(p.name, input) });
      } else if (p.type === 'function_call_output' || p.type === 'custom_tool_call_output') {
        turns.push({ who: 'tool result', text: typeof p.output === 'string' ? p.output : textOf(p.output) });
      }
    } else if (record.type === 'event_msg' && p.type === 'user_message' && !records.some((r) => r.type === 'response_item' && r.payload?.role === 'user')) {
      turns.push({ who: 'user', text: p.message });
    }
  }
  return turns;
}

const lines = [];
for (const [session, file] of SESSIONS) {
  const records = readFileSync(join(transcripts, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.parse(line);
      } catch {
        return null;
      }
    })
    .filter(Boolean);
  const codex = records.some((record) => 'payload' in record);
  const turns = codex ? turnsOfCodex(records) : turnsOfClaude(records);
  let n = 0;
  for (const turn of turns) {
    const text = (turn.text ?? '').replace(/\r\n/g, '\n').trim();
    if (!text || BOILERPLATE.some((pattern) => pattern.test(text))) continue;
    n++;
    const pieces = chunks(text);
    pieces.forEach((piece, index) => {
      const id = `${session}:${String(n).padStart(3, '0')}${pieces.length > 1 ? `.${index + 1}` : ''}`;
      lines.push(JSON.stringify({ id, text: `${turn.who}: ${piece}`, session }));
    });
  }
}
const body = `${lines.join('\n')}\n`;
if (process.argv.includes('--check')) {
  const committed = readFileSync(out, 'utf8');
  if (committed !== body) {
    console.error(`${out} is not what scripts/eval/conversation-turns.mjs builds; run it and review the change`);
    process.exit(1);
  }
  console.log(`ok: ${lines.length} memories`);
} else {
  writeFileSync(out, body);
  console.log(`wrote ${lines.length} memories to ${out}`);
}
