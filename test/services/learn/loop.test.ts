/**
 * The learning loop end to end, through the real hook handlers (in-process path), the real session-end job and a
 * fake OpenAI-compatible judge on 127.0.0.1: a memory shown in five sessions and judged useful each time moves its
 * EMA exactly as computed by hand, a repeated SessionEnd changes nothing, the fifth judgement pins it, and the next
 * session in a matching environment starts with it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLlmClient, createLogger, loadSettings, openStore, readEnv } from '../../../src/core/index.js';
import { runInProcess } from '../../../src/hooks/inprocess.js';
import type { HookEventName } from '../../../src/hooks/contract.js';
import { addEngram, runPendingJobs } from '../../../src/services/index.js';
import { completion, fakeOpenAi } from '../../core/llm/_fakes.js';
import { tempDir } from '../../_helpers.js';

describe('the learning loop', () => {
  it('shown, judged useful five times, pinned by relevance, and injected at the next session start', async () => {
    const home = tempDir();
    const cwd = join(tempDir(), 'shop');
    mkdirSync(join(cwd, '.git'), { recursive: true });
    writeFileSync(join(cwd, 'package.json'), '{"name":"shop"}'); // environment tag: nodejs
    const server = await fakeOpenAi([completion('{"score": 3, "evidence": "docker compose up -d db"}')]);
    writeFileSync(join(home, 'config.json'), JSON.stringify({ llm: { base_url: server.baseUrl, model: 'judge' } }));
    const env = { HOME: home, ENGRAM_HOME: home, ENGRAM_SERVER: 'off' };
    const setup = openStore({ path: join(home, 'engram.db') });
    const { engram } = addEngram(setup, { text: 'Tests need Postgres: when npm test fails with ECONNREFUSED, run docker compose up -d db.', category: 'testing' });
    setup.close();

    const noServer = tempDir();
    const hook = async (event: HookEventName, session: string, payload: Record<string, unknown>) => {
      const transcript = join(home, `${session}.jsonl`);
      const stdout = await runInProcess(
        { event, stdin: JSON.stringify({ session_id: session, transcript_path: transcript, cwd, hook_event_name: event, ...payload }), agentFlag: 'claude', envHints: { codex: false, claude: true } },
        // An install folder without dist/server.mjs: no background drain races this test for the job.
        { reason: 'server-off', installRoot: noServer, env },
      );
      return stdout ? (JSON.parse(stdout).hookSpecificOutput.additionalContext as string) : '';
    };
    const runJobs = async () => {
      const store = openStore({ path: join(home, 'engram.db') });
      try {
        const settings = loadSettings(readEnv(env));
        const log = createLogger({ dir: join(home, 'logs'), name: 'jobs' });
        return await runPendingJobs({ store, log, now: () => new Date(), llm: createLlmClient(settings, { store, log }) });
      } finally {
        store.close();
      }
    };
    const scores: number[] = [];
    for (let n = 1; n <= 5; n++) {
      const session = `loop-${n}`;
      // The transcript the judge's excerpt comes from.
      writeFileSync(
        join(home, `${session}.jsonl`),
        JSON.stringify({ type: 'assistant', uuid: 'a', timestamp: new Date(Date.now() + 60_000).toISOString(), message: { id: 'm', content: [{ type: 'text', text: 'Starting it: docker compose up -d db' }] } }),
      );
      expect(await hook('SessionStart', session, { source: 'startup' })).not.toContain(`EG#${engram.id}`);
      expect(await hook('UserPromptSubmit', session, { prompt: 'npm test fails with ECONNREFUSED, why?' })).toContain(`EG#${engram.id}`);
      await hook('SessionEnd', session, { reason: 'other' });
      expect(await runJobs()).toEqual({ ran: 1, failed: 0 });
      const store = openStore({ path: join(home, 'engram.db'), readonly: true });
      scores.push(store.stats.get(engram.id).tag_relevance.find((row) => row.tag === 'nodejs')?.score ?? NaN);
      store.close();
    }
    // EMA with alpha 0.3 from 0, raw = +3 / 3 = 1: 0.3, 0.51, 0.657, 0.7599, 0.83193.
    expect(scores.map((score) => Math.round(score * 100_000) / 100_000)).toEqual([0.3, 0.51, 0.657, 0.7599, 0.83193]);

    // The same session ending again (resume, then exit) re-queues its job, which changes nothing.
    await hook('SessionEnd', 'loop-5', { reason: 'other' });
    expect(await runJobs()).toEqual({ ran: 1, failed: 0 });
    expect(server.requests).toHaveLength(5);

    const store = openStore({ path: join(home, 'engram.db'), readonly: true });
    expect(store.engrams.get(engram.id)).toMatchObject({ pinned: true, auto_pinned: true, times_matched: 5 });
    expect(store.stats.get(engram.id).tag_relevance.find((row) => row.tag === 'nodejs')).toMatchObject({ positive_evals: 5, negative_evals: 0 });
    store.close();
    // The next session in the same environment starts with it.
    expect(await hook('SessionStart', 'loop-6', { source: 'startup' })).toContain(`EG#${engram.id}`);
  }, 60_000);
});
