/**
 * Engram's MCP server in the real Codex CLI (0.169.0, offline against ../shared/tools/fake-openai), registered the
 * way users register it: `engram hooks install --agent codex` writes `[mcp_servers.engram]` into config.toml beside
 * the hooks. The scripted model calls `engram_search`, then `mem_save`; each result reaches the next model request,
 * the saved observation is in the store, both calls were answered by the background server, and `engram hooks
 * uninstall --agent codex` takes the entry out again, leaving Codex's own keys.
 *
 * The model is `gpt-4.1` on purpose: Codex gives models whose catalogue entry supports `tool_search` (gpt-5.5) the
 * MCP tools only through a client-side `tool_search` call, which the scripted server cannot produce; an uncatalogued
 * model gets them directly, in the `mcp__engram` namespace, through the same MCP client.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { ROOT, tempDir } from '../_helpers.js';
import { expectNothingLeft, killLeftovers, logProblems, requestLog, RUN_CODEX, seedEngrams } from './_agents.js';

/** The output items (text) of the function calls in a Responses request's input. */
function callOutputs(body: { input: Array<{ type: string; output?: unknown }> }): string[] {
  return body.input
    .filter((item) => item.type === 'function_call_output')
    .map((item) => (Array.isArray(item.output) ? item.output.map((part: { text?: string }) => part.text ?? '').join('\n') : String(item.output)));
}

describe.skipIf(!existsSync(RUN_CODEX))('the MCP server in the real Codex CLI', () => {
  it('is registered by engram hooks install; the model searches, then saves; results reach it; the store has the save', async () => {
    const work = realpathSync(tempDir('engram-mcp-codex-'));
    const home = join(work, 'home');
    const project = join(work, 'shop');
    mkdirSync(join(home, '.codex'), { recursive: true });
    mkdirSync(project);
    execFileSync('git', ['init', '-q'], { cwd: project });
    const engramHome = join(home, '.engram');
    const [seeded] = seedEngrams(home, [{ text: 'Release builds need NODE_ENV=production or the bundle keeps its debug asserts.', category: 'build' }]) as [number];
    const env = { PATH: process.env.PATH ?? '', ENGRAM_PORT: '0', HOME: home, CODEX_HOME: join(home, '.codex'), ENGRAM_EMBEDDER: 'none' };
    const engram = (...args: string[]) =>
      spawnSync(process.execPath, [join(ROOT, 'bin', 'engram'), ...args], { cwd: project, env, encoding: 'utf8' });

    const installed = engram('hooks', 'install', '--agent', 'codex');
    expect(installed.status, installed.stderr).toBe(0);
    expect(JSON.parse(installed.stdout)).toMatchObject({ mcp: { action: 'added', file: join(home, '.codex', 'config.toml') } });

    const script = join(work, 'turns.json');
    writeFileSync(
      script,
      JSON.stringify([
        { text: 'Checking memory first.', tool: 'engram_search', input: { query: 'release build debug asserts' } },
        { tool: 'mem_save', input: { title: 'Release flag', content: '**What**: set NODE_ENV=production for release builds\n**Why**: debug asserts', type: 'config' } },
        { text: 'Saved it.' },
      ]),
    );
    const run = spawnSync(
      'bash',
      [RUN_CODEX, '--script', script, '--cwd', project, '--home', home, '--model', 'gpt-4.1', '--prompt', 'how do release builds work here?'],
      // The HTTP API on any free port: tests run side by side, and 7437 may be taken.
      { env: { PATH: process.env.PATH ?? '', ENGRAM_PORT: '0', HOME: process.env.HOME ?? '', ENGRAM_EMBEDDER: 'none' }, encoding: 'utf8', timeout: 300_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { exit: number; requests: string; output: string; rollout: string };
    try {
      const output = readFileSync(report.output, 'utf8');
      expect(report.exit, output).toBe(0);
      expect(output).toContain('mcp: engram/engram_search (completed)');
      expect(output).toContain('mcp: engram/mem_save (completed)');

      const main = requestLog(report.requests).filter((r) => r.path === '/v1/responses' && Array.isArray(r.body.tools));
      expect(main).toHaveLength(3);
      // The tools came from Engram's server, in Codex's MCP namespace.
      const namespace = main[0]?.body.tools.find((tool: { type: string; name?: string }) => tool.type === 'namespace' && tool.name === 'mcp__engram');
      expect(namespace.tools.map((tool: { name: string }) => tool.name)).toEqual(expect.arrayContaining(['engram_search', 'mem_save', 'engram_feedback', 'engram_explain']));
      // Each result reached the next request.
      const afterSearch = callOutputs(main[1]?.body).join('\n');
      const search = JSON.parse(afterSearch.slice(afterSearch.indexOf('{')));
      expect(search).toMatchObject({ abstained: null, results: [{ id: seeded, text: expect.stringContaining('NODE_ENV=production') }] });
      const afterSave = callOutputs(main[2]?.body).join('\n');
      expect(afterSave).toMatch(/Memory saved: "Release flag" \(config\)\nSuggested topic_key: config\/release-flag\nStatus: pending review — [^\n]+\nID: 2/);

      const store = openStore({ path: join(engramHome, 'engram.db'), readonly: true });
      try {
        // Saved by the agent: it waits for a person's review before any hook shows it.
        expect(store.engrams.get(2)).toMatchObject({ kind: 'config', title: 'Release flag', project: 'shop', session_id: 'manual-save-shop', source: 'manual', status: 'pending', learned_by: 'agent' });
      } finally {
        store.close();
      }
      // Both calls went to the background server (the MCP process never opened the store).
      const mcpLog = readFileSync(join(engramHome, 'logs', 'mcp.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
      expect(mcpLog.filter((line) => line.msg === 'operation answered').map((line) => [line.method, line.by])).toEqual([
        ['engram.search', 'server'],
        ['obs.save', 'server'],
      ]);
      expect(logProblems(engramHome)).toEqual([]);
      await expectNothingLeft(home);

      // Uninstall takes the entry out and leaves Codex's own keys (written by run-codex.sh) as they were.
      const removed = engram('hooks', 'uninstall', '--agent', 'codex');
      expect(JSON.parse(removed.stdout)).toMatchObject({ mcp: { action: 'removed' } });
      const config = parse(readFileSync(join(home, '.codex', 'config.toml'), 'utf8')) as Record<string, any>;
      expect(config.mcp_servers?.engram).toBeUndefined();
      expect(config).toMatchObject({ model: 'gpt-4.1', model_provider: 'fake-openai' });
    } finally {
      killLeftovers(home);
      rmSync(dirname(report.requests), { recursive: true, force: true });
    }
  }, 600_000);
});
