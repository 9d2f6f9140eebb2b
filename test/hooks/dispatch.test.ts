/**
 * handleHookCall with the warm server's `defer`: SessionStart answers before its session row is written, then the
 * deferred work writes the row (with this sighting's fields) ahead of the record of what was shown.
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
  return { store, runtime, call };
}

describe('SessionStart on the warm server (deferred work)', () => {
  for (const source of ['startup', 'compact']) {
    it(`answers first, then records the session (${source}) and what was shown, in that order`, async () => {
      const { store, runtime, call } = serverLike();
      const deferred: Array<() => void> = [];
      const answer = await handleHookCall(call(`sess-${source}`, source), runtime, { defer: (work) => deferred.push(work) });
      expect(answer.outcome).toBe('answered');
      expect(answer.stdout).toContain('force-with-lease');
      // Before the deferred work a new startup session has no row yet; compact made its own (the new epoch).
      expect(store.sessions.get(`sess-${source}`) === undefined).toBe(source === 'startup');
      expect(store.activity.shown(`sess-${source}`)).toEqual([]);
      // The session row, what was shown, the log line.
      expect(deferred.length).toBe(3);
      for (const work of deferred) work();
      expect(store.sessions.get(`sess-${source}`)).toMatchObject({ agent: 'claude', start_source: source, project: 'shop' });
      expect(store.activity.shown(`sess-${source}`).map((row) => row.event)).toEqual(['SessionStart']);
      store.close();
    });
  }
});
