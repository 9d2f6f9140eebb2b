import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTranscript, readTranscript } from '../../../src/core/index.js';
import { conversationChunks, conversationLines, excerptAround } from '../../../src/services/learn/conversation.js';
import { SHARED } from '../../_helpers.js';

const line = (record: unknown) => JSON.stringify(record);
const at = (second: number) => `2026-11-22T10:00:${String(second).padStart(2, '0')}.000Z`;

const TRANSCRIPT = parseTranscript(
  [
    line({ type: 'user', uuid: 'u0', timestamp: at(0), isMeta: true, message: { role: 'user', content: '<command-name>/init</command-name>' } }),
    line({ type: 'user', uuid: 'u1', timestamp: at(1), message: { role: 'user', content: 'Run the tests. [ENGRAM] x\n- EG#3 [t] old memory\n[/ENGRAM] key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH' } }),
    line({ type: 'assistant', uuid: 'a1', timestamp: at(2), message: { id: 'm1', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'npm test' } }] } }),
    line({ type: 'user', uuid: 'u2', timestamp: at(3), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', is_error: true, content: 'ECONNREFUSED' }] } }),
    line({ type: 'assistant', uuid: 'a2', timestamp: at(4), message: { id: 'm2', content: [{ type: 'text', text: 'Postgres is not running.' }] } }),
    line({ type: 'user', uuid: 'u3', timestamp: at(5), message: { role: 'user', content: 'No — start it with docker compose up -d db, never brew services.' } }),
    line({ type: 'assistant', uuid: 'a3', timestamp: at(6), isSidechain: true, message: { id: 'm3', content: [{ type: 'text', text: 'subagent chatter' }] } }),
  ].join('\n'),
);

describe('conversation text for the model', () => {
  it('keeps typed and said words, drops injected text, our blocks, sidechains and secrets; tools only on request', () => {
    expect(conversationLines(TRANSCRIPT).map((l) => `${l.role}: ${l.text}`)).toEqual([
      'user: Run the tests. key [REDACTED:anthropic-key]',
      'assistant: Postgres is not running.',
      'user: No — start it with docker compose up -d db, never brew services.',
    ]);
    expect(conversationLines(TRANSCRIPT, { tools: true }).map((l) => l.text)).toContain('Bash npm test (failed)');
  });

  it('cuts long messages, and chunks with overlap so nothing at a boundary is lost', () => {
    const long = parseTranscript(
      Array.from({ length: 30 }, (_, i) => line({ type: 'user', uuid: `u${i}`, message: { role: 'user', content: `message ${i} ${'word '.repeat(200)}` } })).join('\n'),
    );
    const lines = conversationLines(long, { messageChars: 100 });
    expect(lines.every((l) => l.text.length <= 100)).toBe(true);
    const chunks = conversationChunks(lines, { chunkChars: 1_000, overlapMessages: 2 }).map((chunk) => chunk.text);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.every((chunk) => chunk.length <= 1_000)).toBe(true);
    const firstOfSecond = chunks[1]?.split('\n')[0];
    expect(chunks[0]?.split('\n').slice(-2)).toContain(firstOfSecond);
    expect(chunks.join('\n')).toContain('message 29');
  });

  it('excerpts the moments around when an engram was shown', () => {
    const excerpt = excerptAround(TRANSCRIPT, at(3), { before: 1, after: 2 });
    expect(excerpt.split('\n')).toEqual(['tool: Bash npm test (failed)', 'assistant: Postgres is not running.', 'user: No — start it with docker compose up -d db, never brew services.']);
  });
});

const REAL = join(SHARED, 'fixtures', 'transcripts', 'codex-0.169.0__scripted-session.jsonl');
describe.skipIf(!existsSync(REAL))('on a real Codex session', () => {
  it('gives the prompt and the answers, without the 20 developer messages', () => {
    const lines = conversationLines(readTranscript(REAL));
    expect(lines[0]).toMatchObject({ role: 'user', text: expect.stringContaining('Add a small retry helper') });
    expect(lines.filter((l) => l.role === 'user')).toHaveLength(1);
    expect(lines.some((l) => l.text.includes('HOOKCTX'))).toBe(false);
  });
});
