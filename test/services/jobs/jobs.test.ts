import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/core/index.js';
import { initRepo, queueAbandonedSessions, queueSessionEndWork, recordSessionStart, runPendingJobs } from '../../../src/services/index.js';
import { SHARED, tempDir, tempStore } from '../../_helpers.js';

const session = (id: string) => ({ sessionId: id, agent: 'claude' as const, cwd: '/tmp', transcriptPath: `/tmp/${id}.jsonl` });

describe('background jobs', () => {
  it('SessionEnd queues one job per session; it runs once, and a second SessionEnd (after a resume) queues it again', async () => {
    const store = tempStore();
    const log = createLogger({ dir: tempDir(), name: 'jobs' });
    const now = () => new Date('2026-11-22T10:00:00Z');
    queueSessionEndWork(store, session('s1'), { now });
    queueSessionEndWork(store, session('s1'), { now });
    expect(store.jobs.counts()).toMatchObject({ pending: 1 });
    let embedded = 0;
    expect(await runPendingJobs({ store, log, now, embedPending: async () => ++embedded })).toEqual({ ran: 1, failed: 0 });
    expect(await runPendingJobs({ store, log, now })).toEqual({ ran: 0, failed: 0 });
    expect(embedded).toBe(1);
    expect(store.jobs.get('session-end', 's1')).toMatchObject({ status: 'done', attempts: 1, payload: { transcript_path: '/tmp/s1.jsonl' } });
    expect(store.db.prepare('SELECT repo, transcript_path FROM session_audit WHERE session_id = ?').get('s1')).toEqual({ repo: null, transcript_path: '/tmp/s1.jsonl' });
    queueSessionEndWork(store, session('s1'), { now });
    expect(store.jobs.get('session-end', 's1')?.status).toBe('pending');
  });

  it('a failing job is marked failed with its error and not retried in a loop', async () => {
    const store = tempStore();
    const log = createLogger({ dir: tempDir(), name: 'jobs' });
    const now = () => new Date('2026-11-22T10:00:00Z');
    queueSessionEndWork(store, session('s2'), { now });
    const result = await runPendingJobs({ store, log, now, embedPending: async () => { throw new Error('model exploded'); } });
    expect(result).toEqual({ ran: 0, failed: 1 });
    expect(store.jobs.get('session-end', 's2')).toMatchObject({ status: 'failed', error: 'model exploded' });
  });

  it('queues the work of sessions that went quiet without a SessionEnd, once', () => {
    const store = tempStore();
    recordSessionStart(store, session('quiet'), 'startup', { now: () => new Date('2026-11-22T06:00:00Z') });
    recordSessionStart(store, session('active'), 'startup', { now: () => new Date('2026-11-22T09:59:00Z') });
    const now = new Date('2026-11-22T10:00:00Z');
    expect(queueAbandonedSessions(store, now)).toBe(1);
    expect(queueAbandonedSessions(store, now)).toBe(0);
    expect(store.jobs.get('session-end', 'quiet')).toMatchObject({ status: 'pending', payload: { abandoned: true } });
    expect(store.jobs.get('session-end', 'active')).toBeUndefined();
  });
});

describe('the session-end job records the session as tapes', () => {
  it('writes the tape into an opted-in repository once, and a resumed session adds a tape of what is new', async () => {
    const store = tempStore();
    const log = createLogger({ dir: tempDir(), name: 'jobs' });
    const home = tempDir();
    const root = join(tempDir(), 'proj');
    mkdirSync(root, { recursive: true });
    initRepo({ cwd: root });
    const transcript = join(tempDir(), 'session.jsonl');
    const fixture = readFileSync(join(SHARED, 'fixtures', 'transcripts', 'claude-code-2.1.197__scripted-session.jsonl'), 'utf8');
    const lines = fixture.split('\n').filter(Boolean);
    writeFileSync(transcript, `${lines.slice(0, 20).join('\n')}\n`);
    const context = { store, log, now: () => new Date(), env: { home, claudeConfigDir: join(home, '.claude'), codexHome: join(home, '.codex') } };
    const end = async () => {
      queueSessionEndWork(store, { sessionId: 'f62cb199', agent: 'claude', cwd: root, transcriptPath: transcript }, { now: () => new Date() });
      expect(await runPendingJobs(context)).toEqual({ ran: 1, failed: 0 });
      return store.jobs.get('session-end', 'f62cb199');
    };
    await end();
    const tapes = () => readdirSync(join(root, '.engram', 'tapes')).filter((name) => name.endsWith('.jsonl.zst')).sort();
    expect(tapes()).toHaveLength(1);
    await end(); // the same session ending again: nothing new
    expect(tapes()).toHaveLength(1);
    writeFileSync(transcript, `${lines.join('\n')}\n`); // resumed: the rest of the session
    await end();
    expect(tapes()).toHaveLength(2);
    expect(existsSync(join(home, 'tapes'))).toBe(false); // nothing outside the opted-in repository

    // Off in config: nothing is recorded.
    const other = join(tempDir(), 'other');
    mkdirSync(other);
    queueSessionEndWork(store, { sessionId: 'off', agent: 'claude', cwd: other, transcriptPath: transcript }, { now: () => new Date() });
    await runPendingJobs({ ...context, recordTapes: false });
    expect(existsSync(join(home, 'tapes'))).toBe(false);
  });
});
