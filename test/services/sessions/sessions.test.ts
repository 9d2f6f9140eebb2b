/**
 * Sessions as a person inspects them, on a real store: the list newest first with keyset cursors and filters, and one
 * session's injections (grouped per hook call), tool calls and prompts (paged, prompts redacted when stored), the
 * judgements, what was learned from it (found in source_sessions exactly, not by a longer id that contains it) and its
 * tapes, recorded from a real transcript fixture.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/core/index.js';
import { addEngram, listSessions, recordPrompt, recordSessionStart, recordToolEvent, recordTranscript, sessionActivity, sessionDetail, sessionFacets } from '../../../src/services/index.js';
import { SHARED, tempDir, tempStore, thrown } from '../../_helpers.js';

// The session the scripted Claude Code transcript fixture records.
const CLAUDE_SESSION = 'f62cb199-5524-4dac-8011-3b74b972172a';
const at = (minute: number) => () => new Date(Date.UTC(2026, 10, 20, 9, minute));

function seed(store: Store, cwd: string) {
  const sessions = [
    { sessionId: 'old-codex', agent: 'codex' as const, minute: 1 },
    { sessionId: CLAUDE_SESSION, agent: 'claude' as const, minute: 5 },
    { sessionId: 'new-claude', agent: 'claude' as const, minute: 9 },
  ];
  for (const s of sessions) recordSessionStart(store, { sessionId: s.sessionId, agent: s.agent, cwd, transcriptPath: null }, 'startup', { now: at(s.minute) });
  const context = { sessionId: CLAUDE_SESSION, agent: 'claude' as const, cwd, transcriptPath: null };
  recordPrompt(store, context, { text: 'Add a retry helper; the key is sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', key: 'p1' }, { now: at(6) });
  for (let i = 0; i < 130; i++) recordToolEvent(store, context, { tool_use_id: `t${i}`, tool_name: 'Bash', target: `ls ${i}`, ok: i !== 3, error: i === 3 ? 'exit 2' : null, duration_ms: 5 }, { now: at(6) });
  const a = addEngram(store, { text: 'Retry helpers in this project live in src/retry.py.' }).engram;
  const b = addEngram(store, { text: 'List src before reading files there.' }).engram;
  store.write(() => {
    store.activity.recordShown([
      { session_id: CLAUDE_SESSION, engram_id: a.id, event: 'UserPromptSubmit', query: 'retry helper', score: 0.8, rank: 1, chars: 60, answered_by: 'server', at: '2026-11-20T09:06:00.000Z' },
      { session_id: CLAUDE_SESSION, engram_id: b.id, event: 'UserPromptSubmit', query: 'retry helper', score: 0.5, rank: 2, chars: 40, answered_by: 'server', at: '2026-11-20T09:06:00.000Z' },
      { session_id: CLAUDE_SESSION, engram_id: b.id + 0, event: 'PreToolUse', query: 'Read src/retry.py', score: 0.4, rank: 1, chars: 40, answered_by: 'in-process', at: '2026-11-20T09:07:00.000Z' },
    ]);
    store.activity.recordJudgement({ session_id: CLAUDE_SESSION, engram_id: a.id, source: 'evaluation', score: 2, evidence: 'the helper went to src/retry.py', judged_by: 'judge', at: '2026-11-20T10:00:00.000Z' });
  });
  const learned = addEngram(store, { text: 'Five attempts is this project’s retry default.', source_sessions: [CLAUDE_SESSION] }, { actor: { by: 'harvest', via: 'job' } }).engram;
  // An id that merely contains the session's id is another session.
  addEngram(store, { text: 'Something learned elsewhere entirely, in another session.', source_sessions: [`${CLAUDE_SESSION}-2`] }, { actor: { by: 'harvest', via: 'job' } });
  return { a, b, learned };
}

describe('sessions', () => {
  it('lists sessions newest first, a page at a time by cursor, filtered by agent and project', () => {
    const store = tempStore();
    seed(store, tempDir());
    const first = listSessions(store, { limit: 2 });
    expect(first.total).toBe(3);
    expect(first.sessions.map((s) => s.id)).toEqual(['new-claude', CLAUDE_SESSION]);
    expect(first.sessions[1]).toMatchObject({ agent: 'claude', shown: 2, prompts: 1, tools: 130, judged: 1 });
    const second = listSessions(store, { limit: 2, after: first.next });
    expect(second.sessions.map((s) => s.id)).toEqual(['old-codex']);
    expect(second.next).toBeNull();
    expect(listSessions(store, { agent: 'codex' }).sessions.map((s) => s.id)).toEqual(['old-codex']);
    expect(listSessions(store, { project: 'no-such-project' }).total).toBe(0);
    expect(sessionFacets(store).agents).toEqual([{ value: 'claude', count: 2 }, { value: 'codex', count: 1 }]);
    expect(thrown(() => listSessions(store, { after: 'not-a-cursor' }))?.code).toBe('INVALID_INPUT');
    expect(thrown(() => listSessions(store, { limit: 0 }))?.code).toBe('INVALID_INPUT');
  });

  it('shows one session: injections per hook call, judgements, what was learned, prompts, tool calls and tapes', async () => {
    const store = tempStore();
    const home = tempDir();
    const cwd = tempDir();
    const { a, b, learned } = seed(store, cwd);
    const recorded = await recordTranscript({ path: join(SHARED, 'fixtures', 'transcripts', 'claude-code-2.1.197__scripted-session.jsonl'), cwd, home });
    const detail = sessionDetail(store, CLAUDE_SESSION, { home });
    expect(detail.session).toMatchObject({ id: CLAUDE_SESSION, agent: 'claude' });
    // session_shown_engrams keeps one row per engram (its latest showing): b moved to the PreToolUse call.
    expect(detail.injections).toEqual([
      expect.objectContaining({ event: 'UserPromptSubmit', query: 'retry helper', answered_by: 'server', engrams: [expect.objectContaining({ id: a.id, rank: 1, score: 0.8, text: a.text, status: 'active' })] }),
      expect.objectContaining({ event: 'PreToolUse', query: 'Read src/retry.py', answered_by: 'in-process', engrams: [expect.objectContaining({ id: b.id, rank: 1 })] }),
    ]);
    expect(detail.judgements).toEqual([expect.objectContaining({ engram: expect.objectContaining({ id: a.id }), score: 2, evidence: 'the helper went to src/retry.py', judged_by: 'judge' })]);
    expect(detail.extracted).toEqual([expect.objectContaining({ id: learned.id, status: 'pending', learned_by: 'harvest' })]);
    expect(detail.prompts.total).toBe(1);
    expect(detail.prompts.items[0]?.content).not.toContain('AAAAAAAAAAAAAAAA');
    expect(detail.tools).toMatchObject({ total: 130, offset: 0, limit: 100 });
    expect(detail.tools.items).toHaveLength(100);
    expect(detail.tools.items[3]).toMatchObject({ ok: false, error: 'exit 2' });
    expect(sessionActivity(store, CLAUDE_SESSION, 'tools', { offset: 100 }).items.map((t) => t.tool_use_id)).toEqual(Array.from({ length: 30 }, (_, i) => `t${100 + i}`));
    expect(detail.tapes.map((t) => t.tape_id).sort()).toEqual(recorded.tapes.map((t) => t.tape_id).sort());
    expect(thrown(() => sessionDetail(store, 'nope', { home }))?.code).toBe('NOT_FOUND');
  });
});
