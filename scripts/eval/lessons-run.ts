// The coding-lesson evaluation set (fixtures/eval-lessons): each query is what a hook searches with, computed from a
// hook input by the hooks' own query functions (services/inject), so the set measures exactly what hooks ask.
// Bundled and run by scripts/eval/lessons.mjs. Deterministic.
//
//   --import SRC   turn authored lines (see docs/SEARCH.md) into queries-dev/test.jsonl
//   --check        recompute every query from its stored hook input; fail if one differs (the hook query rules or
//                  a payload in ../shared changed: rebuild with --rebuild and review)
//   --rebuild      rewrite queries-*.jsonl from their stored inputs
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { failureQuery, promptQuery, toolQuery, withoutGenericWords } from '../../src/services/inject/index.js';
// @ts-expect-error plain JavaScript module without types
import { checkSet, root, writeSplits } from './split.mjs';

interface HookInput {
  event: 'UserPromptSubmit' | 'PreToolUse' | 'PostToolUseFailure';
  prompt?: string;
  tool_name?: string;
  tool_input?: unknown;
  cwd?: string;
  error?: string;
}
interface Authored {
  input: HookInput;
  relevant: string[];
  source: string;
}

const set = 'eval-lessons';
const payloads = join(root, '..', 'shared', 'fixtures', 'hook-payloads');

/** The hook's query for an input: what it passes to chooseHits (`hook_query`) and what it searches (`q`). */
function hookQueries(input: HookInput): { q: string; hook_query: string } {
  if (input.event === 'UserPromptSubmit') {
    const query = promptQuery(input.prompt ?? '');
    return { q: query, hook_query: query };
  }
  const cwd = input.cwd ?? '/';
  const query =
    input.event === 'PreToolUse'
      ? toolQuery(input.tool_name ?? '', input.tool_input, cwd)
      : failureQuery(input.tool_name ?? '', input.tool_input, input.error ?? '', cwd);
  return { q: withoutGenericWords(query), hook_query: query };
}

/** A real payload file as a hook input. */
function payloadInput(file: string): HookInput {
  const payload = JSON.parse(readFileSync(join(payloads, file), 'utf8')) as Record<string, unknown>;
  const event = payload.hook_event_name as HookInput['event'];
  if (event === 'UserPromptSubmit') return { event, prompt: payload.prompt as string };
  return {
    event,
    tool_name: payload.tool_name as string,
    tool_input: payload.tool_input,
    cwd: payload.cwd as string,
    ...(event === 'PostToolUseFailure' ? { error: payload.error as string } : {}),
  };
}

/** Authored lines: `R | ids | payload file`, `P | ids | prompt`, `T | ids | cwd | tool | json input`,
 * `F | ids | cwd | tool | json input | error`; `## source` lines name the source of what follows. */
function parseAuthored(text: string): Authored[] {
  let source = 'written';
  const out: Authored[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    if (line.startsWith('## ')) {
      source = line.slice(3).trim();
      continue;
    }
    const [kind, ids, ...rest] = line.split(' | ');
    const relevant = (ids ?? '').trim() === '-' ? [] : (ids ?? '').trim().split(/\s+/);
    if (kind === 'R') out.push({ input: payloadInput(rest[0]!.trim()), relevant, source: `payload:${rest[0]!.trim()}` });
    else if (kind === 'P') out.push({ input: { event: 'UserPromptSubmit', prompt: rest.join(' | ').trim() }, relevant, source });
    else if (kind === 'T' || kind === 'F') {
      // The JSON input may itself hold ' | ' (a shell pipe); the error, when present, is the last field.
      const [cwd, tool] = rest.map((part) => part.trim());
      const json = (kind === 'T' ? rest.slice(2) : rest.slice(2, -1)).join(' | ').trim();
      const error = kind === 'F' ? rest.at(-1)?.trim() : undefined;
      out.push({
        input: {
          event: kind === 'T' ? 'PreToolUse' : 'PostToolUseFailure',
          tool_name: tool,
          tool_input: JSON.parse(json),
          cwd,
          ...(kind === 'F' ? { error: error!.replace(/\\n/g, '\n') } : {}),
        },
        relevant,
        source,
      });
    } else throw new Error(`cannot read authored line: ${line}`);
  }
  return out;
}

function build(authored: readonly Authored[]): { dev: number; test: number; skipped: number } {
  const seen = new Set<string>();
  const queries: Array<{ q: string; relevant: string[]; extra: Record<string, unknown> }> = [];
  let skipped = 0;
  for (const entry of authored) {
    const { q, hook_query } = hookQueries(entry.input);
    // A hook that would not search (a slash command, a prompt with no words) is not a retrieval query; a second
    // input that gives the same query (Claude Code and Codex send the same prompt) adds nothing.
    if (q.trim() === '' || seen.has(q)) {
      skipped++;
      continue;
    }
    seen.add(q);
    queries.push({ q, relevant: entry.relevant, extra: { event: entry.input.event, hook_query, source: entry.source, input: entry.input } });
  }
  return { ...(writeSplits(set, queries) as { dev: number; test: number }), skipped };
}

const stored = (): Authored[] =>
  ['dev', 'test'].flatMap((split) =>
    readFileSync(join(root, 'fixtures', set, `queries-${split}.jsonl`), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const query = JSON.parse(line) as { relevant: string[]; source: string; input: HookInput };
        return { input: query.input, relevant: query.relevant, source: query.source };
      }),
  );

const args = process.argv.slice(2);
if (args[0] === '--import') {
  console.log(build(parseAuthored(readFileSync(args[1]!, 'utf8'))));
} else if (args[0] === '--rebuild') {
  console.log(build(stored()));
} else if (args[0] === '--check') {
  const problems: string[] = checkSet(set);
  for (const split of ['dev', 'test']) {
    for (const line of readFileSync(join(root, 'fixtures', set, `queries-${split}.jsonl`), 'utf8').split('\n').filter(Boolean)) {
      const query = JSON.parse(line) as { q: string; hook_query: string; source: string; input: HookInput };
      const now = hookQueries(query.source.startsWith('payload:') ? payloadInput(query.source.slice(8)) : query.input);
      if (now.q !== query.q || now.hook_query !== query.hook_query) problems.push(`'${query.q}' is now searched as '${now.q}'`);
    }
  }
  if (problems.length > 0) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
  console.log('ok');
} else {
  console.error('usage: lessons.mjs --import SRC | --rebuild | --check');
  process.exit(2);
}
