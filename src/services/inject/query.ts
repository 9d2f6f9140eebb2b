import { isAbsolute, relative, sep } from 'node:path';

/**
 * What hooks search with. A prompt carries IDE and agent noise that says where the user is, not what they want; a
 * tool call says what the agent is about to touch. Both are cut to what a search can use.
 */

/** Agent and IDE markup that is not the user's words. Removed with its content. */
const NOISE = [
  /<ide_opened_file>[\s\S]*?<\/ide_opened_file>/gi,
  /<ide_selection>[\s\S]*?<\/ide_selection>/gi,
  /<ide_diagnostics>[\s\S]*?<\/ide_diagnostics>/gi,
  /<system-reminder>[\s\S]*?<\/system-reminder>/gi,
  /<task-notification>[\s\S]*?<\/task-notification>/gi,
  /<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|bash-input|bash-stdout|bash-stderr)>[\s\S]*?<\/\1>/gi,
  /<private>[\s\S]*?<\/private>/gi,
  /\[ENGRAM\][\s\S]*?\[\/ENGRAM\]/g,
  /\[Request interrupted by user[^\]]*\]/gi,
];

/** A search query longer than this is a paste; its start says what it is about. */
export const QUERY_CHARS = 600;
/** Prompts shorter than this ("ok", "y", "go") have no topic. */
const MIN_PROMPT_CHARS = 5;

/** The user's words in a prompt, without IDE/agent markup, cut to {@link QUERY_CHARS}; '' when nothing is left. */
export function promptQuery(prompt: string): string {
  let text = prompt.length > 100_000 ? prompt.slice(0, 100_000) : prompt;
  for (const pattern of NOISE) text = text.replace(pattern, ' ');
  text = text.replace(/\s+/g, ' ').trim();
  if (text.length < MIN_PROMPT_CHARS || text.startsWith('/')) return '';
  return text.slice(0, QUERY_CHARS);
}

/** A path as people name it: relative to the project, so `/home/me/proj/src/pay.ts` searches for `src/pay.ts`. */
function projectPath(path: string, cwd: string): string {
  if (!isAbsolute(path)) return path;
  const inside = relative(cwd, path);
  if (inside && !inside.startsWith('..') && !isAbsolute(inside)) return inside;
  return path.split(sep).slice(-3).join('/');
}

const text = (value: unknown, max = 300): string => (typeof value === 'string' ? value.slice(0, max) : '');

/** File paths a Codex `apply_patch` touches, read from the patch headers. */
export function patchFiles(patch: string): string[] {
  const files: string[] = [];
  for (const match of patch.slice(0, 200_000).matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$/gm)) {
    const file = (match[1] ?? match[2] ?? '').trim();
    if (file && !files.includes(file)) files.push(file);
  }
  return files;
}

/**
 * The query for a tool call: the tool's name and what it works on — file_path/path/notebook_path (relative to the
 * project), pattern, command, a subagent's description — never file contents. Old and new tool names both work
 * (`Task` / `Agent`, `MultiEdit`); Codex patches give their file headers.
 */
export function toolQuery(toolName: string, input: unknown, cwd: string): string {
  const fields = input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  const parts: string[] = [toolName];
  for (const key of ['file_path', 'notebook_path', 'path']) {
    const value = text(fields[key], 1_000);
    if (value) parts.push(projectPath(value, cwd));
  }
  if (toolName === 'apply_patch') {
    parts.push(...patchFiles(text(fields.command, 200_000)).map((file) => projectPath(file, cwd)));
  } else {
    parts.push(text(fields.command), text(fields.pattern, 200), text(fields.glob, 200), text(fields.query, 200));
  }
  if (toolName === 'Task' || toolName === 'Agent') parts.push(text(fields.description, 200), text(fields.prompt, 300));
  return parts.filter(Boolean).join(' ').replace(/\s+/g, ' ').trim().slice(0, QUERY_CHARS);
}

/** The query after a tool failed: the call plus the first lines of the error, where the telling words are. */
export function failureQuery(toolName: string, input: unknown, error: string, cwd: string): string {
  const firstLines = error.slice(0, 2_000).split('\n').filter((line) => line.trim() !== '').slice(0, 3).join(' ');
  return `${toolQuery(toolName, input, cwd)} ${firstLines}`.trim().slice(0, QUERY_CHARS);
}
