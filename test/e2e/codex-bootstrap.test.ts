/**
 * The Codex plugin install users do, from a clean clone (no node_modules/, no dist/), with the real Codex CLI
 * (0.169.0, offline against ../shared/tools/fake-openai): `--plugin-dir` on the first run only (each run given it
 * installs the plugin again), then more sessions with the same home.
 *
 * Codex trusts a plugin's hooks by fingerprinting the plugin's files: a symlink there (node_modules/.bin after an
 * `npm ci` in the folder) makes it skip every hook, and a changed file un-trusts them. So the first session's hooks
 * start the bootstrap and stay silent, the bootstrap builds in Codex's plugin data folder, the plugin folder stays
 * byte-identical, and the second session's hooks are trusted, complete and inject. The first session, which the
 * hooks never saw, is recorded by the second session's end (catch-up). Nothing is left running.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { bootstrapFiles } from '../../scripts/install-state.mjs';
import { folderDigest, processEnv, tempDir } from '../_helpers.js';
import { cleanClone, engramLine, expectNothingLeft, killLeftovers, logProblems, requestLog, RUN_CODEX } from './_agents.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const PINNED = { text: 'Deploys to the shop cluster go through the release script, never kubectl apply by hand.', category: 'operations/deploy' };

describe.skipIf(!existsSync(RUN_CODEX))('a Codex plugin install from a clean clone', () => {
  it('bootstraps outside the plugin folder; the next session’s hooks are trusted, complete and inject; the first session is caught up', async () => {
    const work = realpathSync(tempDir('engram-codex-boot-'));
    const clone = join(work, 'engram');
    const home = join(work, 'home');
    const project = join(work, 'shop');
    const engramHome = join(home, '.engram');
    mkdirSync(home);
    mkdirSync(project);
    execFileSync('git', ['init', '-q'], { cwd: project });
    cleanClone(clone);
    const cloneDigest = folderDigest(clone);
    const runs: string[] = [];
    // The scratch HOME for Codex and Engram; npm reuses the machine's package cache (the native build still happens).
    const env = processEnv({ HOME: process.env.HOME ?? '' });
    const session = (prompt: string, plugin: boolean) => {
      const turns = join(work, `turns-${runs.length}.json`);
      writeFileSync(turns, JSON.stringify([{ text: 'Noted.' }]));
      const args = [RUN_CODEX, '--script', turns, '--cwd', project, '--home', home, ...(plugin ? ['--plugin-dir', clone] : []), '--prompt', prompt];
      const result = spawnSync('bash', args, { env, encoding: 'utf8', timeout: 300_000 });
      expect(result.status, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout) as { exit: number; output: string; rollout: string; requests: string; trust: string };
      runs.push(dirname(report.requests));
      expect(report.exit, readFileSync(report.output, 'utf8')).toBe(0);
      return { ...report, id: /([0-9a-f-]{36})\.jsonl$/.exec(report.rollout)?.[1] as string, text: readFileSync(report.output, 'utf8') };
    };
    try {
      // 1. Install and first session: the hooks start the bootstrap and say nothing.
      const first = session('first session: the deploy key rotates on Fridays', true);
      for (const event of ['SessionStart', 'UserPromptSubmit', 'Stop']) expect(first.text).toContain(`hook: ${event} Completed`);
      const plugin = join(home, '.codex', 'plugins', 'cache', 'local-test', 'engram', JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8')).version);
      expect(folderDigest(plugin)).toEqual(cloneDigest); // what Codex installed: the clone as it is

      // 2. The bootstrap finishes in Codex's plugin data folder.
      const files = bootstrapFiles(plugin, engramHome);
      let state: { status?: string; steps?: string[]; runtime?: string } = {};
      const deadline = Date.now() + 8 * 60_000;
      while (Date.now() < deadline) {
        try {
          state = JSON.parse(readFileSync(files.state, 'utf8'));
        } catch {}
        if (state.status === 'done' || state.status === 'failed') break;
        await sleep(1000);
      }
      const bootstrapLog = () => readFileSync(files.log, 'utf8').slice(-3000);
      expect(state, bootstrapLog()).toMatchObject({ status: 'done', runtime: join(home, '.codex', 'plugins', 'data', 'engram-local-test', 'runtime', files.key) });
      expect(state.steps).toEqual(['npm ci', 'build', 'npm prune --omit=dev']);
      // Nothing was written into the plugin folder (nor into the clone it came from).
      expect(folderDigest(plugin)).toEqual(cloneDigest);
      expect(folderDigest(clone)).toEqual(cloneDigest);

      // 3. The plugin's own CLI, from a shell (no PLUGIN_DATA), finds that runtime: no second bootstrap.
      const add = spawnSync(process.execPath, [join(plugin, 'bin', 'engram'), 'add', '--pin', '--category', PINNED.category, PINNED.text], {
        cwd: project,
        encoding: 'utf8',
        env: processEnv({ HOME: home, ENGRAM_EMBEDDER: 'none' }),
      });
      expect(add.status, add.stderr).toBe(0);
      expect(add.stderr).not.toContain('finishing installation');
      const pinnedId = (JSON.parse(add.stdout) as { engram: { id: number } }).engram.id;

      // 4. The second session: every Engram hook trusted and completing, the pinned engram in front of the model.
      const second = session('second session: what do I need to know before deploying?', false);
      const trust = JSON.parse(readFileSync(second.trust, 'utf8')) as { warnings?: string[]; hooks: Array<{ key: string; trust: string }> };
      expect(trust.warnings ?? []).toEqual([]);
      const engramHooks = trust.hooks.filter((hook) => hook.key.startsWith('engram@'));
      expect(engramHooks.map((hook) => hook.trust)).toEqual(Array(6).fill('trusted'));
      for (const event of ['SessionStart', 'UserPromptSubmit', 'Stop']) expect(second.text).toContain(`hook: ${event} Completed`);
      expect(second.text).not.toMatch(/hook: \w+ Failed/);
      const sent = requestLog(second.requests)
        .filter((r) => r.path === '/v1/responses')
        .map((r) => JSON.stringify(r.body))
        .join('\n');
      expect(sent).toContain(JSON.stringify(engramLine(pinnedId, PINNED)).slice(1, -1));

      // 5. The store: the second session and its end; the first one, which the hooks never saw, caught up by that end.
      const store = openStore({ path: join(engramHome, 'engram.db'), readonly: true });
      try {
        expect(store.sessions.get(second.id)).toMatchObject({ agent: 'codex', project: 'shop', start_source: 'startup', end_reason: 'other' });
        const jobDeadline = Date.now() + 60_000;
        while (store.jobs.get('session-end', first.id)?.status !== 'done' && Date.now() < jobDeadline) await sleep(250);
        expect(store.jobs.get('session-end', second.id)).toMatchObject({ status: 'done', error: null });
        expect(store.sessions.get(first.id)).toMatchObject({ agent: 'codex', project: 'shop', start_source: 'caught-up', transcript_path: first.rollout });
        expect(store.sessions.prompts(first.id).map((p) => p.content)).toEqual(['first session: the deploy key rotates on Fridays']);
        expect(store.jobs.get('session-end', first.id)).toMatchObject({ status: 'done', error: null, payload: { caught_up: true } });
      } finally {
        store.close();
      }
      // Both sessions are on tape.
      const tapes = spawnSync(process.execPath, [join(plugin, 'bin', 'engram'), 'tapes'], { cwd: project, encoding: 'utf8', env: processEnv({ HOME: home }) });
      expect(tapes.status, tapes.stderr).toBe(0);
      const sessions = (JSON.parse(tapes.stdout) as Array<{ session: { id: string } }>).map((tape) => tape.session.id);
      expect(new Set(sessions)).toEqual(new Set([first.id, second.id]));
      expect(logProblems(engramHome)).toEqual([]);
      expect(folderDigest(plugin)).toEqual(cloneDigest);
      await expectNothingLeft(home);
    } finally {
      killLeftovers(home);
      for (const dir of runs) rmSync(dir, { recursive: true, force: true });
    }
  }, 900_000);
});

