/**
 * `engram mcp` from an install whose first-run setup has not finished (no node_modules, no dist/): it must still
 * connect — Claude Code leaves a plugin's MCP server that fails to connect out of its sessions for 15 minutes — and say
 * that its tools come in the next session, while the bootstrap runs in the background.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { bootstrapFiles } from '../../scripts/install-state.mjs';
import { pluginFolder, tempDir } from '../_helpers.js';

describe('engram mcp before the first-run setup finished', () => {
  it('connects with no tools, says why, and leaves the setup to the background bootstrap', async () => {
    // A plugin install as the agent leaves it (hooks/, scripts/, bin/, manifests; no node_modules/, no dist/).
    const root = pluginFolder();
    const home = tempDir();
    // A bootstrap of this folder is already running (this test process holds its lock), so none is started here.
    const { lock } = bootstrapFiles(root, home);
    mkdirSync(lock, { recursive: true });
    writeFileSync(join(lock, 'pid'), String(process.pid));

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(root, 'bin', 'engram'), 'mcp', '--tools=engram,agent'],
      env: { PATH: process.env.PATH ?? '', ENGRAM_PORT: '0', HOME: home, ENGRAM_HOME: home },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'engram-test', version: '1' });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'engram' });
      expect(client.getInstructions()).toMatch(/^Engram is finishing its first-run setup in the background \(running\); its memory tools .* are available from the next session\.$/);
      expect((await client.listTools()).tools).toEqual([]);
      await expect(client.callTool({ name: 'engram_search', arguments: { query: 'x' } })).rejects.toThrow(/-32602/);
      expect(await client.ping()).toEqual({});
    } finally {
      await client.close();
    }
  });
});
