import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { recordPrompt, recordSessionEnd, recordSessionStart, recordTurnEnd, type SessionContext } from '../../../src/services/index.js';
import { steppingClock, tempDir, tempStore } from '../../_helpers.js';

const context = (cwd: string): SessionContext => ({
  sessionId: 'sess-1',
  agent: 'claude',
  cwd,
  transcriptPath: '/home/u/.claude/projects/-p/sess-1.jsonl',
  model: null,
});

describe('session capture', () => {
  it('records a session’s life: start, prompts, turns, end', () => {
    const store = tempStore();
    const repo = tempDir();
    execFileSync('git', ['init', '-q'], { cwd: repo });
    const now = steppingClock();
    recordSessionStart(store, context(repo), 'startup', { now });
    recordPrompt(store, context(repo), { text: 'Fix the login bug', key: 'p1' }, { now });
    recordTurnEnd(store, context(repo), { now });
    recordSessionStart(store, { ...context(repo), cwd: '/elsewhere' }, 'resume', { now });
    recordTurnEnd(store, context(repo), { now });
    const session = recordSessionEnd(store, context(repo), 'other', { now });
    expect(session).toMatchObject({
      id: 'sess-1',
      agent: 'claude',
      project: repo.split('/').at(-1),
      cwd: repo,
      repo_root: repo,
      start_source: 'startup',
      turns: 2,
      started_at: '2026-11-01T10:00:00.000Z',
      ended_at: '2026-11-01T10:00:05.000Z',
      end_reason: 'other',
    });
    expect(store.sessions.prompts('sess-1').map((p) => p.content)).toEqual(['Fix the login bug']);
  });

  it('counts a turn once however often its Stop is handled (the same prompt_id / turn_id), each turn without an id', () => {
    const store = tempStore();
    const ctx = context('/tmp');
    // A hook that gave up on a busy server answers by itself while the server may still handle the same Stop.
    recordTurnEnd(store, ctx, { turnKey: 'prompt-1' });
    recordTurnEnd(store, ctx, { turnKey: 'prompt-1' });
    expect(store.sessions.get('sess-1')?.turns).toBe(1);
    recordTurnEnd(store, ctx, { turnKey: 'prompt-2' });
    expect(store.sessions.get('sess-1')?.turns).toBe(2);
    // An agent that sends no id for its turns: every Stop counts.
    recordTurnEnd(store, ctx);
    recordTurnEnd(store, ctx, { turnKey: null });
    expect(store.sessions.get('sess-1')?.turns).toBe(4);
    // Another session's turn with the same id is its own.
    recordTurnEnd(store, { ...ctx, sessionId: 'sess-2' }, { turnKey: 'prompt-1' });
    expect(store.sessions.get('sess-2')?.turns).toBe(1);
  });

  it('creates the session on first sight even when SessionStart was missed', () => {
    const store = tempStore();
    recordPrompt(store, context('/tmp'), { text: 'hello', key: null });
    expect(store.sessions.get('sess-1')).toMatchObject({ start_source: null, project: null });
  });

  it('stores prompts redacted, once per prompt id, and not at all when fully private or disabled', () => {
    const store = tempStore();
    const ctx = context('/tmp');
    expect(recordPrompt(store, ctx, { text: 'use token ghp_abcdefghijklmnopqrstuvwxyz0123456789', key: 'p1' })).toEqual({
      stored: true,
      redacted: ['github-token'],
    });
    expect(recordPrompt(store, ctx, { text: 'use token ghp_abcdefghijklmnopqrstuvwxyz0123456789', key: 'p1' }).skipped).toBe('repeat');
    expect(recordPrompt(store, ctx, { text: '<private>my diary</private>', key: 'p2' }).skipped).toBe('empty');
    expect(recordPrompt(store, ctx, { text: 'hello', key: 'p3' }, { capture: false }).skipped).toBe('disabled');
    expect(store.sessions.prompts('sess-1').map((p) => p.content)).toEqual(['use token [REDACTED:github-token]']);
  });

  it('truncates a huge prompt after redacting it', () => {
    const store = tempStore();
    const text = `${'a'.repeat(9_990)} AKIAIOSFODNN7EXAMPLE ${'b'.repeat(50_000)}`;
    recordPrompt(store, context('/tmp'), { text, key: 'big' });
    const [prompt] = store.sessions.prompts('sess-1');
    expect(prompt?.content).not.toContain('AKIA');
    expect(prompt?.content).toMatch(/…\[truncated from 60012 characters\]$/);
  });
});
