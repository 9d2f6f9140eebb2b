/**
 * Sessions the hooks never saw (they ran while a fresh install was still bootstrapping) are recorded by the next
 * session-end job of the same project and agent: the session, its prompts, its tapes, its own job.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/core/index.js';
import { queueSessionEndWork, recordSessionStart, runPendingJobs } from '../../../src/services/index.js';
import { claudeProjectFolderName } from '../../../src/services/tape/index.js';
import { SHARED, tempDir, tempStore } from '../../_helpers.js';

const FIXTURE = join(SHARED, 'fixtures', 'transcripts', 'claude-code-2.1.197__scripted-session.jsonl');
const MISSED = 'f62cb199-5524-4dac-8011-3b74b972172a';
const NOW = new Date();

/** A project (a git repository) and Claude Code's folder for it holding the fixture session, moved into it. */
function setup() {
  const home = tempDir();
  const project = join(tempDir(), 'shop');
  mkdirSync(project);
  execFileSync('git', ['init', '-q'], { cwd: project });
  const claudeConfigDir = join(home, '.claude');
  const folder = join(claudeConfigDir, 'projects', claudeProjectFolderName(project));
  mkdirSync(folder, { recursive: true });
  const transcript = join(folder, `${MISSED}.jsonl`);
  writeFileSync(transcript, readFileSync(FIXTURE, 'utf8').replaceAll('/home/user/proj', project));
  const env = { home, claudeConfigDir, codexHome: join(home, '.codex') };
  const store = tempStore();
  const log = createLogger({ dir: join(home, 'logs'), name: 'server' });
  return { home, project, folder, transcript, env, store, log, context: { store, log, now: () => NOW, env } };
}

/** A session the hooks did see, in the same project, ending now. */
function endKnownSession(s: ReturnType<typeof setup>, id = 'known-session', agent: 'claude' | 'codex' = 'claude') {
  const session = { sessionId: id, agent, cwd: s.project, transcriptPath: join(s.folder, `${id}.jsonl`) };
  recordSessionStart(s.store, session, 'startup', { now: () => new Date(NOW.getTime() - 60_000) });
  queueSessionEndWork(s.store, session, { now: () => NOW });
}

const tapesOf = (home: string): string[] => {
  try {
    return readdirSync(join(home, 'tapes')).flatMap((project) => readdirSync(join(home, 'tapes', project)).filter((name) => name.endsWith('.jsonl.zst')));
  } catch {
    return [];
  }
};

describe('catch-up of sessions the hooks missed', () => {
  it('records the missed session, its prompts and its tape at the next session end of the project, once', async () => {
    const s = setup();
    endKnownSession(s);
    expect(await runPendingJobs(s.context)).toEqual({ ran: 2, failed: 0 });
    expect(s.store.sessions.get(MISSED)).toMatchObject({ agent: 'claude', project: 'shop', start_source: 'caught-up', end_reason: 'caught-up', transcript_path: s.transcript });
    expect(s.store.sessions.prompts(MISSED).map((p) => p.content)).toEqual([
      'Add a small retry helper in src/retry.py with 5 attempts, check it, and note it in notes.md.',
    ]);
    expect(s.store.jobs.get('session-end', MISSED)).toMatchObject({ status: 'done', payload: { caught_up: true } });
    expect(tapesOf(s.home)).toHaveLength(1); // the missed session's (the known one has no transcript)
    const log = readFileSync(join(s.home, 'logs', 'server.log'), 'utf8');
    expect(log).toContain('recorded sessions the hooks missed');

    // The next session end finds nothing new: no second copy of the session, its prompts or its tape.
    endKnownSession(s, 'another-session');
    expect(await runPendingJobs(s.context)).toEqual({ ran: 1, failed: 0 });
    expect(s.store.sessions.prompts(MISSED)).toHaveLength(1);
    expect(s.store.sessions.counts().sessions).toBe(3);
    expect(tapesOf(s.home)).toHaveLength(1);
  });

  it('leaves alone transcripts from before Engram arrived, and other agents’ sessions', async () => {
    const old = setup();
    const twoDaysAgo = new Date(NOW.getTime() - 2 * 24 * 3600 * 1000);
    utimesSync(old.transcript, twoDaysAgo, twoDaysAgo);
    endKnownSession(old);
    expect(await runPendingJobs(old.context)).toEqual({ ran: 1, failed: 0 });
    expect(old.store.sessions.get(MISSED)).toBeUndefined();

    const codex = setup();
    endKnownSession(codex, 'codex-session', 'codex');
    expect(await runPendingJobs(codex.context)).toEqual({ ran: 1, failed: 0 });
    expect(codex.store.sessions.get(MISSED)).toBeUndefined();
  });

  it('counts Engram from its first bootstrap when the store has no session older than the missed one', async () => {
    const s = setup();
    // The missed session ran during the bootstrap, an hour before the first session the hooks recorded.
    const hourAgo = new Date(NOW.getTime() - 3600 * 1000);
    utimesSync(s.transcript, hourAgo, hourAgo);
    mkdirSync(join(s.home, 'bootstrap'), { recursive: true });
    writeFileSync(
      join(s.home, 'bootstrap', '0.1.0-000000000000.json'),
      JSON.stringify({ root: '/plugin', reason: 'hook session-start', status: 'done', started_at: new Date(hourAgo.getTime() - 60_000).toISOString() }),
    );
    endKnownSession(s);
    expect(await runPendingJobs(s.context)).toEqual({ ran: 2, failed: 0 });
    expect(s.store.sessions.get(MISSED)).toMatchObject({ start_source: 'caught-up' });
  });
});
