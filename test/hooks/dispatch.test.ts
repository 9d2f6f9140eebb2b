/**
 * handleHookCall with the warm server's `defer`: SessionStart answers before its session row is written, then the
 * deferred work writes the row (with this sighting's fields) ahead of the record of what was shown. UserPromptSubmit
 * answers before its prompt is stored, and injects the same without the server's `defer` (the in-process path).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger, loadSettingsLeniently, openStore, readEnv } from '../../src/core/index.js';
import { handleHookCall } from '../../src/hooks/dispatch.js';
import { hookEnvironment } from '../../src/hooks/environment.js';
import type { HookRuntime } from '../../src/hooks/events.js';
import { addEngram, createSearchEngine, searchTuning } from '../../src/services/index.js';
import { processEnv, tempDir } from '../_helpers.js';

function serverLike() {
  const home = tempDir();
  const cwd = join(tempDir(), 'shop');
  mkdirSync(join(cwd, '.git'), { recursive: true });
  const { settings } = loadSettingsLeniently(readEnv(processEnv({ HOME: home, ENGRAM_HOME: home })));
  const store = openStore({ path: settings.paths.db });
  addEngram(store, { text: 'Never force-push to main; use git push --force-with-lease on your own feature branch.', category: 'tooling/git', tags: ['git'], pinned: true });
  const runtime: HookRuntime = {
    settings,
    log: createLogger({ dir: settings.paths.logs, name: 'hooks' }),
    now: () => new Date(),
    store: () => store,
    inject: { mode: 'bm25', answeredBy: 'server', embedderKind: () => null, search: (request) => createSearchEngine(store, { embedder: null, tuning: searchTuning(settings.config) }).search(request) },
    environment: (dir, agent) => hookEnvironment(settings, dir, agent),
    wake: () => undefined,
  };
  const call = (sessionId: string, source: string) => ({
    event: 'SessionStart' as const,
    stdin: JSON.stringify({ session_id: sessionId, transcript_path: '/tmp/t.jsonl', cwd, hook_event_name: 'SessionStart', source }),
    agentFlag: 'claude' as const,
    envHints: { claude: true, codex: false },
  });
  const prompt = (sessionId: string, text: string) => ({
    event: 'UserPromptSubmit' as const,
    stdin: JSON.stringify({ session_id: sessionId, transcript_path: '/tmp/t.jsonl', cwd, hook_event_name: 'UserPromptSubmit', prompt: text, prompt_id: `${sessionId}-p1` }),
    agentFlag: 'claude' as const,
    envHints: { claude: true, codex: false },
  });
  return { store, runtime, call, prompt };
}

describe('SessionStart on the warm server (deferred work)', () => {
  for (const source of ['startup', 'compact']) {
    it(`answers first, then records the session (${source}) and what was shown, in that order`, async () => {
      const { store, runtime, call } = serverLike();
      const deferred: Array<(delivered: boolean) => void> = [];
      const answer = await handleHookCall(call(`sess-${source}`, source), runtime, { defer: (work) => deferred.push(work) });
      expect(answer.outcome).toBe('answered');
      expect(answer.stdout).toContain('force-with-lease');
      // Before the deferred work a new startup session has no row yet; compact made its own (the new epoch).
      expect(store.sessions.get(`sess-${source}`) === undefined).toBe(source === 'startup');
      expect(store.activity.shown(`sess-${source}`)).toEqual([]);
      // The session row, what was shown, the log line.
      expect(deferred.length).toBe(3);
      for (const work of deferred) work(true);
      expect(store.sessions.get(`sess-${source}`)).toMatchObject({ agent: 'claude', start_source: source, project: 'shop' });
      expect(store.activity.shown(`sess-${source}`).map((row) => row.event)).toEqual(['SessionStart']);
      store.close();
    });
  }
});

describe('UserPromptSubmit on the warm server (deferred work)', () => {
  const text = 'how do I force-push my feature branch to git without losing work?';
  it('answers first, then stores the prompt ahead of the record of what was shown', async () => {
    const { store, runtime, prompt } = serverLike();
    const deferred: Array<(delivered: boolean) => void> = [];
    const answer = await handleHookCall(prompt('sess-p', text), runtime, { defer: (work) => deferred.push(work) });
    expect(answer.outcome).toBe('answered');
    expect(answer.stdout).toContain('force-with-lease');
    // Nothing of the prompt is written before the answer: no session row, no prompt.
    expect(store.sessions.get('sess-p')).toBeUndefined();
    expect(store.sessions.prompts('sess-p')).toEqual([]);
    // The prompt, what was shown, the log line.
    expect(deferred.length).toBe(3);
    deferred[0]?.(true);
    expect(store.sessions.prompts('sess-p').map((row) => row.content)).toEqual([text]);
    expect(store.activity.shown('sess-p')).toEqual([]);
    for (const work of deferred.slice(1)) work(true);
    expect(store.activity.shown('sess-p').map((row) => row.event)).toEqual(['UserPromptSubmit']);
    store.close();
  });

  it('injects the same as the in-process path, which stores the prompt before answering', async () => {
    const server = serverLike();
    const deferred: Array<(delivered: boolean) => void> = [];
    const warm = await handleHookCall(server.prompt('sess-a', text), server.runtime, { defer: (work) => deferred.push(work) });
    const inProcess = serverLike();
    // Another session id: what the first answer showed is counted as shown in its session until its record is written.
    const direct = await handleHookCall(inProcess.prompt('sess-b', text), inProcess.runtime, {});
    expect(inProcess.store.sessions.prompts('sess-b').map((row) => row.content)).toEqual([text]);
    expect(warm.stdout).toContain('force-with-lease');
    expect(warm.stdout).toBe(direct.stdout);
    for (const work of deferred) work(true);
    server.store.close();
    inProcess.store.close();
  });
});
