/**
 * `engram mcp` as plugin.json's `mcpServers.engram` entry starts it from a plugin install (`node
 * <plugin root>/bin/engram mcp …`): the plugin folder holds no dist/ and no node_modules/ (the bootstrap builds them in a
 * runtime folder outside it, issue 19 blocker A), so the MCP server must find that runtime — through the pointer in
 * the plugin data folder when the agent gives one, through $ENGRAM_HOME when it does not (Codex's `[mcp_servers.engram]`
 * entry written by `engram hooks install`, an MCP client with a bare environment) — and start the background server
 * and its in-process fallback from there. The runtime is this checkout's build (fakeRuntime); the real bootstrap runs
 * in the plugin-install e2e tests.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeRuntime, folderDigest, pluginFolder, tempDir } from '../_helpers.js';
import { connect, logLines, serverPid, workspace } from './_mcp.js';

describe('engram mcp from a plugin install whose runtime lives outside the plugin folder', () => {
  for (const layout of ['plugin data folder', 'no data folder'] as const) {
    it(`finds the runtime (${layout}), answers from the background server and in-process, and writes nothing into the plugin folder`, async () => {
      const root = pluginFolder();
      const { home, project } = workspace();
      const data = tempDir('engram-plugin-data-');
      const env: Record<string, string> = layout === 'plugin data folder' ? { CLAUDE_PLUGIN_DATA: data } : {};
      const runtime = fakeRuntime(root, home, layout === 'plugin data folder' ? join(data, 'runtime') : join(home, 'runtime'), env);
      const digest = folderDigest(root);

      // Through the background server, which the MCP process starts from the runtime folder.
      const mcp = await connect(home, { cwd: project, root, env });
      expect(mcp.client.getInstructions()).toContain('engram_search'); // the real server, not the pending one
      const added = JSON.parse((await mcp.tool('engram_add', { text: 'Docker builds need BuildKit: set DOCKER_BUILDKIT=1 in CI.', category: 'ops' })).text);
      expect(added).toMatchObject({ status: 'created', id: 1 });
      const search = JSON.parse((await mcp.tool('engram_search', { query: 'docker buildkit' })).text);
      expect(search).toMatchObject({ results: [{ id: 1, text: expect.stringContaining('BuildKit') }] });
      expect(serverPid(home)).not.toBeNull();
      await mcp.close();

      // With the server switched off, the MCP process loads the in-process bundle from the runtime folder.
      const offline = await connect(home, { cwd: project, root, env: { ...env, ENGRAM_SERVER: 'off' } });
      const again = JSON.parse((await offline.tool('engram_search', { query: 'docker buildkit' })).text);
      expect(again).toMatchObject({ results: [{ id: 1 }] });
      await offline.close();

      const started = logLines(home, 'mcp').filter((line) => line.msg === 'mcp server started');
      expect(started.map((line) => line.runtime)).toEqual([runtime, runtime]);
      const answered = logLines(home, 'mcp').filter((line) => line.msg === 'operation answered' && String(line.method).includes('search'));
      expect(answered.map((line) => line.by)).toEqual(['server', 'in-process']);
      expect(folderDigest(root)).toEqual(digest);
    }, 60_000);
  }
});
