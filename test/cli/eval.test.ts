import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { addEngram, recordSessionStart } from '../../src/services/index.js';
import { cli, tempDir } from '../_helpers.js';

/** A home whose session s1 was shown one engram. */
function home(): string {
  const dir = tempDir();
  const store = openStore({ path: join(dir, 'engram.db') });
  const { engram } = addEngram(store, { text: 'Tests need Postgres running.', category: 'testing' });
  recordSessionStart(store, { sessionId: 's1', agent: 'claude', cwd: dir, transcriptPath: null }, 'startup', { now: () => new Date() });
  store.write(() => {
    const at = new Date().toISOString();
    store.activity.audit({ session_id: 's1', env_tags: ['nodejs'], repo: null, transcript_path: null, at });
    store.activity.recordShown([{ session_id: 's1', engram_id: engram.id, event: 'SessionStart', query: null, score: null, rank: 1, chars: 40, answered_by: 'server', at }]);
  });
  store.close();
  return dir;
}

describe('engram eval', () => {
  it('run evaluates waiting sessions (without an LLM: recorded, no judgement); status reports it', async () => {
    const dir = home();
    const run = await cli(['eval', 'run'], { home: dir, env: { ENGRAM_LLM_PROVIDER: 'none' } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.reports).toEqual([expect.objectContaining({ session_id: 's1', outcome: 'skipped', error: expect.stringContaining('no LLM') })]);
    const status = await cli(['eval', 'status', '--session', 's1'], { home: dir });
    expect(status.json).toMatchObject({ counts: { skipped: 1 }, session: { eval_status: 'skipped' }, judgements: [{ engram_id: 1, score: null, judged_by: 'none' }] });
    expect((await cli(['eval', 'run'], { home: dir, env: { ENGRAM_LLM_PROVIDER: 'none' } })).json.reports).toEqual([]);
    const pretty = await cli(['eval', 'status', '--session', 's1', '--pretty'], { home: dir });
    expect(pretty.stdout).toContain('EG#1: no judgement by none');
  });

  it('status of an unknown session is NOT_FOUND', async () => {
    const result = await cli(['eval', 'status', '--session', 'nope'], { home: home() });
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stderr).error.code).toBe('NOT_FOUND');
  });
});
