import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  adaptTranscript,
  decompressBytes,
  findPatchText,
  hunkRegion,
  parseCodexOutput,
  replayEdits,
  serializeTape,
  stripLineNumbers,
  tapePath,
  TapeEventSchema,
  unifiedDiffHunks,
  writeTape,
  type CodeEditEvent,
  type TapeEvent,
} from '../../../src/services/tape/index.js';
import { SHARED, tempDir, thrown } from '../../_helpers.js';

const FIXTURES = join(SHARED, 'fixtures', 'transcripts');
const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
const ALL = readdirSync(FIXTURES).filter((name) => name.endsWith('.jsonl')).sort();

const edits = (events: TapeEvent[]): CodeEditEvent[] => events.filter((event): event is CodeEditEvent => event.k === 'code.edit');

describe('adapters on every fixture transcript', () => {
  it('covers both agents, old and new', () => {
    expect(ALL.length).toBeGreaterThanOrEqual(10);
  });

  for (const name of ALL) {
    it(`${name}: permissive, deterministic, schema-valid`, () => {
      const text = fixture(name);
      const first = adaptTranscript(text);
      const second = adaptTranscript(text);
      expect(first.events.length).toBeGreaterThan(1);
      const a = serializeTape(first.events);
      const b = serializeTape(second.events);
      expect(a.tape_id).toBe(b.tape_id);
      expect(a.jsonl).toBe(b.jsonl);
      for (const event of a.events) expect(TapeEventSchema.safeParse(event).success).toBe(true);
      // Every line parses back to the same event.
      const lines = a.jsonl.trimEnd().split('\n');
      expect(lines).toHaveLength(a.events.length);
      const meta = a.events[0];
      expect(meta?.k).toBe('meta');
      if (meta?.k === 'meta') {
        expect(meta.label).toBe('session');
        expect(meta.adapter?.name).toBe(first.harness);
        expect(meta.coverage).toEqual(first.coverage);
      }
      for (const event of a.events) expect(event.source).toEqual({ harness: first.harness, session_id: first.session_id });
    });
  }
});

describe('claude adapter', () => {
  it('2.1.197 scripted session: Write create, Edit with structuredPatch ranges, Read without prefixes, Bash exit codes', () => {
    const result = adaptTranscript(fixture('claude-code-2.1.197__scripted-session.jsonl'));
    expect(result.harness).toBe('claude');
    expect(result.session_id).toBe('f62cb199-5524-4dac-8011-3b74b972172a');
    expect(result.harness_version).toBe('2.1.197');
    expect(result.model).toBe('claude-opus-4-8');
    expect(result.coverage.grade).toBe('full');
    const meta = result.events[0];
    expect(meta).toMatchObject({ k: 'meta', cwd: '/home/user/proj', harness_version: '2.1.197', model: 'claude-opus-4-8' });

    const changes = edits(result.events);
    expect(changes.map((edit) => [edit.file, edit.op])).toEqual([
      ['src/retry.py', 'create'],
      ['src/retry.py', 'edit'],
      ['notes.md', 'create'],
    ]);
    expect(changes[0]?.after_text).toContain('ATTEMPTS = 3');
    expect(changes[0]?.after_range).toEqual([1, 14]);
    expect(changes[1]).toMatchObject({ before_range: [4, 4], after_range: [4, 4], before_text: 'ATTEMPTS = 3', after_text: 'ATTEMPTS = 5', call_id: 'toolu_000003' });
    expect(changes[1]?.after_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(changes[2]?.after_text).toBe('# Notes\n\n- retry helper added (5 attempts)\n');

    const reads = result.events.filter((event) => event.k === 'code.read');
    expect(reads[0]).toMatchObject({ file: 'src/retry.py', range: [1, 14] });
    expect(reads[0]?.k === 'code.read' && reads[0].text?.startsWith('"""Retry helper."""\nimport time')).toBe(true);
    expect(reads[1]).toMatchObject({ file: 'src/config.yaml', range: [1, 1], text: 'retries: 3\n' });

    const results = result.events.filter((event) => event.k === 'tool.result');
    expect(results.find((event) => event.call_id === 'toolu_000009')).toMatchObject({ tool: 'Bash', exit: 2, is_error: true });
    expect(results.find((event) => event.call_id === 'toolu_000007')).toMatchObject({ tool: 'Bash', exit: 0, is_error: false, stdout: 'config.yaml\nretry.py' });
    // Hook context attachments are not conversation.
    expect(JSON.stringify(result.events)).not.toContain('HOOKCTX');
    // Split assistant lines of one message keep their order: text, then the tool call.
    const firstOut = result.events.findIndex((event) => event.k === 'msg.out');
    expect(result.events[firstOut + 1]).toMatchObject({ k: 'tool.call', tool: 'Write', call_id: 'toolu_000001' });
  });

  it('subagent transcript: every event carries the agent id, Read becomes code.read', () => {
    const result = adaptTranscript(fixture('claude-code-2.1.197__scripted-session__subagent.jsonl'));
    const content = result.events.slice(1);
    expect(content.every((event) => event.agent === 'ad2377d0aed9ab3de')).toBe(true);
    const read = content.find((event) => event.k === 'code.read');
    expect(read).toMatchObject({ file: 'src/retry.py', range: [1, 15] });
    // No toolUseResult on this line: the text comes from the numbered result, prefixes stripped.
    expect(read?.k === 'code.read' && read.text?.split('\n')[3]).toBe('ATTEMPTS = 5');
    expect(content.find((event) => event.k === 'msg.out')).toMatchObject({ text: 'ATTEMPTS is 5 in src/retry.py.' });
  });

  it('1.0.108: failed Edit yields no code.edit; MultiEdit yields one event per edit, replayed to exact ranges', () => {
    const result = adaptTranscript(fixture('d-kimuson__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl'));
    const changes = edits(result.events);
    expect(changes).toHaveLength(6);
    expect(changes.every((edit) => edit.file === 'CLAUDE.md' && edit.call_id === 'toolu_018awfyyafbNVMNu6kfSRuKi')).toBe(true);
    expect(changes[0]).toMatchObject({ before_range: [4, 4], after_range: [4, 4] });
    expect(changes[0]?.after_text).toBe(
      'A fully functional TODO application built with Next.js 15.5.2, React 19.1.0, TypeScript, and Tailwind CSS v4. Features modern React patterns, comprehensive state management, and persistent storage.',
    );
    expect(result.events.find((event) => event.k === 'tool.result' && event.call_id === 'toolu_019ctBEHhLKehUi4xPDkYwvc')).toMatchObject({ is_error: true });
    // Inline 1.0.x sidechain lines are marked.
    expect(result.events.filter((event) => event.agent === 'sidechain').length).toBeGreaterThan(10);
    expect(result.events.find((event) => event.k === 'code.read' && event.agent === 'sidechain')).toMatchObject({ file: 'todo-app/package.json', range: [1, 28] });
  });

  it('1.0.98: a Write the user did not permit is a tool.call with its content, not a code.edit', () => {
    const result = adaptTranscript(fixture('d-kimuson__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl'));
    expect(edits(result.events)).toHaveLength(0);
    const call = result.events.find((event) => event.k === 'tool.call' && event.tool === 'Write');
    expect(call?.k === 'tool.call' && (call.args as { content: string }).content.startsWith('# CLAUDE.md')).toBe(true);
    expect(result.events.find((event) => event.k === 'tool.result' && event.tool === 'Write')).toMatchObject({ is_error: true });
  });

  it('1.0.111: Edit hunks and MultiEdit, paths relative to the session cwd', () => {
    const result = adaptTranscript(fixture('git-ai-project__example-claude-code.jsonl'));
    const changes = edits(result.events);
    expect(changes[0]).toMatchObject({
      file: 'src/app/globals.css',
      op: 'edit',
      before_range: [8, 7],
      after_range: [8, 9],
      before_text: '',
      after_text: '  --green: #7cff7c;\n  --yellow: #ffff7c;',
    });
    expect(changes.at(-1)).toMatchObject({ file: 'src/game/HistoryLog.tsx', before_range: [383, 384], after_range: [383, 384] });
    expect(changes.at(-1)?.after_text).toContain('var(--green)');
    expect(result.events.find((event) => event.k === 'code.read')).toMatchObject({ file: 'src/app/globals.css', range: [1, 174] });
  });

  it('2.0.69: thinking is kept as msg.out; the Edit inserts one line at 21', () => {
    const result = adaptTranscript(fixture('git-ai-project__claude-code-with-thinking.jsonl'));
    expect(edits(result.events)).toEqual([
      expect.objectContaining({ file: 'index.ts', op: 'edit', before_range: [21, 20], after_range: [21, 21], after_text: "console.log('hello world');" }),
    ]);
    expect(result.events.filter((event) => event.k === 'msg.out').length).toBe(4);
  });

  it('schema corpus: compaction boundary + summary merge, unknown types counted, unknown version degraded', () => {
    const result = adaptTranscript(fixture('jazzyalex__claude-small.jsonl'));
    expect(result.coverage.grade).toBe('degraded');
    expect(result.coverage.unknown_versions).toEqual(['[trimmed for fixture]']);
    expect(result.coverage.skipped).toMatchObject({ 'frame-link': 1, 'atis-latch': 1, relocated: 1 });
    const compactions = result.events.filter((event) => event.k === 'meta' && event.label === 'compaction');
    expect(compactions).toHaveLength(2);
    expect(compactions[0]).toMatchObject({ summary: 'Summary of prior context.' });
  });

  it('strips both Read prefix styles', () => {
    expect(stripLineNumbers('     7→a\n     8→b\n\n<system-reminder>x</system-reminder>')).toEqual({ range: [7, 8], text: 'a\nb' });
    expect(stripLineNumbers('12\tx\n13\t')).toEqual({ range: [12, 13], text: 'x\n' });
    expect(stripLineNumbers('no numbers')).toBeNull();
  });
});

describe('codex adapter', () => {
  it('0.169 scripted session: apply_patch custom tool calls with ranges from patch_apply results, exit codes, failed patch skipped', () => {
    const result = adaptTranscript(fixture('codex-0.169.0__scripted-session.jsonl'));
    expect(result).toMatchObject({ harness: 'codex', session_id: '01a200c5-e3f5-7893-a481-82c60fff87ef', harness_version: '0.169.0', model: 'gpt-5.5' });
    expect(result.events[0]).toMatchObject({ cwd: '/home/user/proj', repo_head: '9dd189cad24792f7d83987b2c35087ba516ecba2' });
    const changes = edits(result.events);
    // Four patches, one failed verification: three edits, each once although item_completed repeats them.
    expect(changes.map((edit) => [edit.file, edit.op, edit.call_id])).toEqual([
      ['src/retry.py', 'create', 'call_000003'],
      ['src/retry.py', 'edit', 'call_000006'],
      ['notes.md', 'create', 'call_000027'],
    ]);
    expect(changes[1]).toMatchObject({ before_range: [4, 4], after_range: [4, 4], before_text: 'ATTEMPTS = 3', after_text: 'ATTEMPTS = 5' });
    expect(changes[2]?.after_text).toBe('# Notes\n\n- retry helper added (5 attempts)\n');
    const results = result.events.filter((event) => event.k === 'tool.result');
    expect(results.find((event) => event.call_id === 'call_000015')).toMatchObject({ tool: 'exec_command', exit: 2, is_error: true });
    expect(results.find((event) => event.call_id === 'call_000018')).toMatchObject({ tool: 'apply_patch', is_error: true });
    expect(results.find((event) => event.call_id === 'call_000012')).toMatchObject({ stdout: 'config.yaml\nretry.py\n', exit: 0 });
    // Developer messages (hook context, skills) and the environment context are not user input.
    const inputs = result.events.filter((event) => event.k === 'msg.in');
    expect(inputs).toEqual([expect.objectContaining({ text: 'Add a small retry helper in src/retry.py with 5 attempts, check it, and note it in notes.md.' })]);
    expect(JSON.stringify(result.events)).not.toContain('HOOKCTX');
  });

  it('0.146 schema corpus: a patch_apply_end without its call still gives the edit; compactions; unknown items counted', () => {
    const result = adaptTranscript(fixture('jazzyalex__codex-small.jsonl'));
    expect(edits(result.events)).toEqual([expect.objectContaining({ file: 'a.txt', op: 'edit', call_id: 'call-6' })]);
    expect(result.events.filter((event) => event.k === 'meta' && event.label === 'compaction').length).toBe(6);
    expect(result.coverage.skipped['response_item.tool_search_call']).toBe(2);
    expect(result.events.find((event) => event.k === 'tool.result' && event.call_id === 'call-2')).toMatchObject({ tool: 'shell', stdout: 'a.txt\n' });
  });

  it('0.61 VS Code rollout: event_msg messages stand in when there are no response_item messages', () => {
    const result = adaptTranscript(fixture('lparlett__codex_file_updates.jsonl'));
    expect(result.events.filter((event) => event.k === 'msg.in')).toEqual([expect.objectContaining({ text: 'Please ensure the agent and copilot instructions match.' })]);
    expect(result.events.find((event) => event.k === 'tool.call')).toMatchObject({ tool: 'shell_command' });
    expect(result.events.find((event) => event.k === 'msg.out')).toMatchObject({ text: 'Updated both instruction files to match; only headings differ.' });
  });

  const line = (type: string, payload: unknown): string => JSON.stringify({ timestamp: '2026-01-01T00:00:00Z', type, payload });
  const session = (version = '0.58.0'): string => line('session_meta', { id: 'thread-1', cwd: '/repo', cli_version: version });
  const PATCH = '*** Begin Patch\n*** Update File: src/a.ts\n@@ function a\n-  return 1;\n+  return 2;\n*** Add File: src/b.ts\n+export const b = 1;\n*** End Patch';

  it('apply_patch through shell argv and heredoc, and patch_apply_end with a unified diff wins over the patch text', () => {
    const text = [
      session(),
      line('response_item', { type: 'function_call', name: 'shell', call_id: 'c1', arguments: JSON.stringify({ command: ['apply_patch', PATCH], workdir: '/repo' }) }),
      line('response_item', { type: 'function_call_output', call_id: 'c1', output: JSON.stringify({ output: 'Success', metadata: { exit_code: 0 } }) }),
      line('response_item', { type: 'function_call', name: 'shell', call_id: 'c2', arguments: JSON.stringify({ command: ['bash', '-lc', `apply_patch <<'PATCH'\n${PATCH}\nPATCH`] }) }),
      line('event_msg', {
        type: 'patch_apply_end',
        call_id: 'c2',
        success: true,
        changes: { '/repo/src/a.ts': { update: { unified_diff: '@@ -9,3 +9,3 @@\n function a() {\n-  return 1;\n+  return 2;\n }\n', move_path: null } } },
      }),
      line('response_item', { type: 'function_call_output', call_id: 'c2', output: 'Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess\n' }),
      line('response_item', { type: 'function_call', name: 'apply_patch', call_id: 'c3', arguments: JSON.stringify({ input: PATCH }) }),
      line('response_item', { type: 'function_call_output', call_id: 'c3', output: 'Process exited with code 1\nOutput:\nerror\n' }),
    ].join('\n');
    const result = adaptTranscript(`${text}\n`);
    const changes = edits(result.events);
    expect(changes.map((edit) => [edit.call_id, edit.file, edit.op, edit.before_range, edit.after_text])).toEqual([
      ['c1', 'src/a.ts', 'edit', null, '  return 2;'],
      ['c1', 'src/b.ts', 'create', null, 'export const b = 1;\n'],
      // Structured result: one change only (the diff), with ranges; the patch text is not emitted again.
      ['c2', 'src/a.ts', 'edit', [10, 10], '  return 2;'],
    ]);
    expect(result.events.find((event) => event.k === 'tool.result' && event.call_id === 'c1')).toMatchObject({ exit: 0, stdout: 'Success' });
    expect(result.events.find((event) => event.k === 'tool.result' && event.call_id === 'c3')).toMatchObject({ exit: 1, is_error: true });
  });

  it('parses the tool output formats and finds patches only where apply_patch runs', () => {
    expect(parseCodexOutput('{"output":"hi","metadata":{"exit_code":3}}')).toEqual({ stdout: 'hi', exit: 3 });
    expect(parseCodexOutput('Chunk ID: x\nWall time: 0 s\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nok\n')).toEqual({ stdout: 'ok\n', exit: 0 });
    expect(parseCodexOutput('plain')).toEqual({ stdout: 'plain', exit: null });
    expect(findPatchText({ cmd: 'cat notes.txt' }, 'exec_command')).toBeNull();
    expect(findPatchText({ cmd: `apply_patch <<'EOF'\n${PATCH}\nEOF` }, 'exec_command')).toBe(PATCH);
  });
});

describe('versions, unknown records, helpers', () => {
  const claudeLine = (version: string, extra: Record<string, unknown> = {}): string =>
    JSON.stringify({ type: 'user', sessionId: 's1', cwd: '/repo', version, uuid: 'u1', timestamp: '2026-01-01T00:00:00Z', message: { role: 'user', content: 'hello' }, ...extra });

  it('strict mode rejects an unknown version with a machine-readable code; permissive records it degraded', () => {
    const text = `${claudeLine('9.9.9')}\n`;
    const error = thrown(() => adaptTranscript(text, { strict: true }));
    expect(error?.code).toBe('UNSUPPORTED_VERSION');
    expect(error?.details).toMatchObject({ harness: 'claude', versions: ['9.9.9'] });
    const permissive = adaptTranscript(text);
    expect(permissive.coverage).toMatchObject({ grade: 'degraded', unknown_versions: ['9.9.9'] });
    expect(adaptTranscript(`${claudeLine('2.1.199')}\n`, { strict: true }).coverage.grade).toBe('full');
    const codex = `${JSON.stringify({ type: 'session_meta', payload: { id: 't', cwd: '/r', cli_version: '0.170.0' } })}\n`;
    expect(thrown(() => adaptTranscript(codex, { strict: true }))?.code).toBe('UNSUPPORTED_VERSION');
    expect(adaptTranscript(codex).coverage.unknown_versions).toEqual(['0.170.0']);
  });

  it('counts unknown record types and malformed lines as partial coverage', () => {
    const text = [claudeLine('2.1.100'), JSON.stringify({ type: 'brand-new-thing', sessionId: 's1' }), JSON.stringify({ type: 'brand-new-thing' }), '{not json', JSON.stringify({ type: 'attachment', sessionId: 's1' })].join('\n');
    const result = adaptTranscript(text);
    expect(result.coverage).toEqual({ grade: 'partial', skipped: { 'brand-new-thing': 2 }, malformed: 1, unknown_versions: [] });
  });

  it('rejects text that is neither format', () => {
    expect(thrown(() => adaptTranscript('hello\nworld\n'))?.code).toBe('INVALID_INPUT');
  });

  it('fromLine keeps context but emits only later lines', () => {
    const text = fixture('claude-code-2.1.197__scripted-session.jsonl');
    const whole = adaptTranscript(text);
    const tail = adaptTranscript(text, { fromLine: 20, previousTape: 'a'.repeat(64) });
    expect(tail.events[0]).toMatchObject({ k: 'meta', previous_tape: 'a'.repeat(64), model: 'claude-opus-4-8', cwd: '/home/user/proj' });
    // Line 21 (index 20) is the Edit's result: its call (line 18) is known, so the code.edit is complete.
    expect(edits(tail.events)).toEqual(edits(whole.events).slice(1));
    expect(tail.events.find((event) => event.k === 'tool.result')).toMatchObject({ tool: 'Edit', call_id: 'toolu_000003' });
  });

  it('paths: relative inside the session cwd, absolute outside, Windows separators', () => {
    expect(tapePath('/repo/src/a.ts', '/repo')).toBe('src/a.ts');
    expect(tapePath('/repo-other/a.ts', '/repo')).toBe('/repo-other/a.ts');
    expect(tapePath('./src/../lib/a.ts', '/repo')).toBe('lib/a.ts');
    expect(tapePath('C:\\work\\proj\\src\\a.ts', 'C:\\work\\proj')).toBe('src/a.ts');
  });

  it('NotebookEdit: a replaced cell is an edit with the new source, a deleted cell a delete', () => {
    const line = (record: Record<string, unknown>) => JSON.stringify({ sessionId: 'nb1', cwd: '/repo', version: '2.1.197', timestamp: '2026-11-23T10:00:00.000Z', ...record });
    const call = (id: string, input: Record<string, unknown>) =>
      line({ type: 'assistant', uuid: `a-${id}`, message: { id: `m-${id}`, role: 'assistant', content: [{ type: 'tool_use', id, name: 'NotebookEdit', input }] } });
    const result = (id: string) => line({ type: 'user', uuid: `u-${id}`, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'Updated cell' }] } });
    const text = [
      call('t1', { notebook_path: '/repo/analysis.ipynb', cell_id: 'c1', new_source: 'df = load()\ndf.describe()', edit_mode: 'replace' }),
      result('t1'),
      call('t2', { notebook_path: '/repo/analysis.ipynb', cell_id: 'c2', new_source: '', edit_mode: 'delete' }),
      result('t2'),
    ].join('\n');
    expect(edits(adaptTranscript(text).events).map(({ file, op, after_text }) => ({ file, op, after_text }))).toEqual([
      { file: 'analysis.ipynb', op: 'edit', after_text: 'df = load()\ndf.describe()' },
      { file: 'analysis.ipynb', op: 'delete', after_text: null },
    ]);
  });

  it('hunk and replay arithmetic', () => {
    expect(hunkRegion(1, 1, [' a', '-b', '+B', ' c'])).toEqual({ before_range: [2, 2], after_range: [2, 2], before_text: 'b', after_text: 'B' });
    expect(unifiedDiffHunks('@@ -0,0 +1,2 @@\n+x\n+y\n')).toEqual([{ oldStart: 0, newStart: 1, lines: ['+x', '+y'] }]);
    // A removed line that starts with "--" is content, not a file header; headers outside hunks are skipped.
    expect(unifiedDiffHunks('--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n--- sql comment\n keep\n')).toEqual([{ oldStart: 1, newStart: 1, lines: ['--- sql comment', ' keep'] }]);
    expect(hunkRegion(1, 1, ['--- sql comment', ' keep'])).toEqual({ before_range: [1, 1], after_range: [1, 0], before_text: '-- sql comment', after_text: '' });
    expect(replayEdits('a\nb\nc\n', [{ old_string: 'b', new_string: 'B1\nB2' }, { old_string: 'c', new_string: 'C' }])).toEqual([
      [{ before_range: [2, 2], after_range: [2, 3], before_text: 'b', after_text: 'B1\nB2' }],
      [{ before_range: [4, 4], after_range: [4, 4], before_text: 'c', after_text: 'C' }],
    ]);
    expect(replayEdits('a', [{ old_string: 'zzz', new_string: 'y' }])).toEqual([null]);
  });
});

describe('redaction before write', () => {
  it('a secret and a <private> span in a transcript never reach the tape bytes; hashes describe the redacted text', async () => {
    const secret = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
    const lines = [
      { type: 'user', sessionId: 's1', cwd: '/repo', version: '2.1.100', uuid: 'u1', timestamp: 't1', message: { role: 'user', content: `deploy with ${secret} <private>my home address</private> please` } },
      {
        type: 'assistant',
        sessionId: 's1',
        cwd: '/repo',
        version: '2.1.100',
        uuid: 'u2',
        timestamp: 't2',
        message: { id: 'm1', model: 'claude-x', role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'Write', input: { file_path: '/repo/.env', content: `GITHUB_TOKEN=${secret}\n` } }] },
      },
      {
        type: 'user',
        sessionId: 's1',
        cwd: '/repo',
        version: '2.1.100',
        uuid: 'u3',
        timestamp: 't3',
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'File created' }] },
        toolUseResult: { type: 'create', filePath: '/repo/.env', content: `GITHUB_TOKEN=${secret}\n`, structuredPatch: [], originalFile: null },
      },
    ];
    const adapted = adaptTranscript(lines.map((line) => JSON.stringify(line)).join('\n'));
    const dir = tempDir();
    const written = await writeTape(dir, adapted.events);
    const bytes = decompressBytes(readFileSync(written.path));
    expect(bytes).not.toContain(secret);
    expect(bytes).not.toContain('my home address');
    expect(bytes).toContain('[REDACTED:github-token]');
    expect(bytes).toContain('[REDACTED]');
    const edit = serializeTape(adapted.events).events.find((event) => event.k === 'code.edit');
    expect(edit).toMatchObject({ file: '.env', op: 'create' });
    if (edit?.k === 'code.edit') {
      expect(edit.after_text).not.toContain(secret);
      const { createHash } = await import('node:crypto');
      expect(edit.after_hash).toBe(createHash('sha256').update(edit.after_text ?? '').digest('hex'));
    }
  });
});
