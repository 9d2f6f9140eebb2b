/**
 * The transcript readers against the real transcripts in ../shared/fixtures/transcripts (read in place) and small
 * synthetic lines of our own for shapes the fixtures lack.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTranscript, readTranscript, type TranscriptToolCall, type TranscriptToolResult } from '../../../src/core/index.js';
import { SHARED, tempDir } from '../../_helpers.js';

const DIR = join(SHARED, 'fixtures', 'transcripts');
const fixtures = (() => {
  try {
    return readdirSync(DIR).filter((file) => file.endsWith('.jsonl'));
  } catch {
    return [];
  }
})();

const calls = (events: ReturnType<typeof parseTranscript>['events']) =>
  events.filter((event): event is TranscriptToolCall => event.kind === 'tool_call');
const results = (events: ReturnType<typeof parseTranscript>['events']) =>
  events.filter((event): event is TranscriptToolResult => event.kind === 'tool_result');

describe.skipIf(fixtures.length === 0)('real transcripts', () => {
  it.each(fixtures)('%s: parses without throwing, detects its agent, every tool call has its result or none', (file) => {
    const transcript = readTranscript(join(DIR, file));
    expect(transcript.format).toBe(file.includes('codex') ? 'codex' : 'claude');
    expect(transcript.malformed).toBe(0);
    expect(transcript.events.length).toBeGreaterThan(0);
    const ids = new Set(calls(transcript.events).map((call) => call.id));
    for (const result of results(transcript.events)) {
      if (result.id) expect(ids.has(result.id) || result.sidechain, `${file}: result ${result.id}`).toBe(true);
    }
    transcript.events.forEach((event, index) => expect(event.index).toBe(index));
  });

  it('Claude Code 2.1.197: every tool, the failing Bash, the person’s prompt, one message per API message', () => {
    const transcript = readTranscript(join(DIR, 'claude-code-2.1.197__scripted-session.jsonl'));
    const names = calls(transcript.events).map((call) => call.name);
    expect(names.filter((name) => name === 'Bash')).toHaveLength(5);
    expect([...new Set(names)].sort()).toEqual(['Agent', 'Bash', 'Edit', 'Read', 'TaskCreate', 'TaskUpdate', 'Write']);
    const failed = results(transcript.events).filter((result) => !result.ok);
    expect(failed.length).toBeGreaterThanOrEqual(1);
    const typed = transcript.events.filter((event) => event.kind === 'message' && event.role === 'user' && !event.meta);
    expect(typed[0]).toMatchObject({ text: expect.stringContaining('Add a small retry helper in src/retry.py') });
    expect(transcript.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(transcript.cwd).toBe('/home/user/proj');
    expect(transcript.skipped).toBeGreaterThan(70); // attachments, queue operations, last-prompt…
  });

  it('Codex 0.169.0: patches and shell calls with their outcomes; developer context is meta', () => {
    const transcript = readTranscript(join(DIR, 'codex-0.169.0__scripted-session.jsonl'));
    const names = calls(transcript.events).map((call) => call.name);
    expect(names.filter((name) => name === 'apply_patch')).toHaveLength(4);
    expect(names.filter((name) => name === 'exec_command')).toHaveLength(5);
    const patch = calls(transcript.events).find((call) => call.name === 'apply_patch');
    expect((patch?.input as { input: string }).input).toContain('*** Begin Patch');
    const byId = new Map(results(transcript.events).map((result) => [result.id, result]));
    const outcomes = calls(transcript.events).map((call) => byId.get(call.id)?.ok);
    expect(outcomes.filter((ok) => ok === false)).toHaveLength(2); // `ls` exit 2, the patch of a missing file
    const typed = transcript.events.filter((event) => event.kind === 'message' && event.role === 'user' && !event.meta);
    expect(typed).toHaveLength(1);
    expect(typed[0]).toMatchObject({ text: expect.stringContaining('Add a small retry helper') });
    expect(transcript.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('Claude Code 1.0.x: inline subagent lines are marked sidechain', () => {
    const transcript = readTranscript(join(DIR, 'd-kimuson__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl'));
    expect(transcript.events.some((event) => event.sidechain)).toBe(true);
    expect(calls(transcript.events).map((call) => call.name)).toEqual(expect.arrayContaining(['MultiEdit', 'Task']));
  });
});

describe('synthetic lines', () => {
  it('merges one API message written as several lines, and reads compaction markers', () => {
    const lines = [
      { type: 'user', uuid: 'u1', sessionId: 's', message: { role: 'user', content: 'fix it' } },
      { type: 'assistant', uuid: 'a1', message: { id: 'm1', content: [{ type: 'text', text: 'Looking.' }] } },
      { type: 'assistant', uuid: 'a2', message: { id: 'm1', content: [{ type: 'thinking', thinking: 'hmm' }] } },
      { type: 'assistant', uuid: 'a3', message: { id: 'm1', content: [{ type: 'text', text: 'Found it.' }] } },
      { type: 'system', subtype: 'compact_boundary', uuid: 'c1' },
      { type: 'user', uuid: 'u2', isCompactSummary: true, message: { role: 'user', content: 'This session is being continued…' } },
      { type: 'brand-new-record', uuid: 'x' },
    ];
    const transcript = parseTranscript(`${lines.map((line) => JSON.stringify(line)).join('\n')}\nnot json\n`);
    expect(transcript.events.map((event) => event.kind)).toEqual(['message', 'message', 'compaction', 'compaction']);
    expect(transcript.events[1]).toMatchObject({ role: 'assistant', text: 'Looking.\nFound it.' });
    expect(transcript.events[3]).toMatchObject({ summary: 'This session is being continued…' });
    expect(transcript).toMatchObject({ skipped: 1, malformed: 1, sessionId: 's' });
  });

  it('reads a file up to a byte limit and says it was cut', () => {
    const file = join(tempDir(), 't.jsonl');
    const line = JSON.stringify({ type: 'user', uuid: 'u', message: { role: 'user', content: 'x'.repeat(100) } });
    writeFileSync(file, `${line}\n`.repeat(50));
    const transcript = readTranscript(file, { maxBytes: 1_000 });
    expect(transcript.truncated).toBe(true);
    expect(transcript.malformed).toBe(0);
    expect(transcript.events.length).toBeGreaterThan(0);
    expect(transcript.events.length).toBeLessThan(50);
  });
});
