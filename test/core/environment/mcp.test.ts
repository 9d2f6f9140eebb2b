import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeStatePath } from '../../../src/core/index.js';
import { gitRepo, world, write } from './_fixture.js';

/** A Claude Code state file with user servers and local servers for some project folders. */
function claudeState(path: string, projects: Record<string, object>, user: string[] = ['github']): void {
  const servers = (names: string[]) => Object.fromEntries(names.map((name) => [name, { command: name }]));
  write(path, JSON.stringify({ numStartups: 3, mcpServers: servers(user), projects: { '/elsewhere': { mcpServers: servers(['other']) }, ...projects } }));
}

const codexToml = `
model = "gpt-5"
[mcp_servers.engram]
command = "node"
args = ["/x/dist/mcp.mjs"]
[mcp_servers.engram.env]
ENGRAM_HOME = "/x"
[mcp_servers.off]
command = "off"
enabled = false
[mcp_servers.docs]
url = "https://example.com/mcp"
enabled = true
`;

describe('MCP servers', () => {
  it('reads Claude Code’s ~/.claude.json (user and local scope) and the project’s .mcp.json', () => {
    const w = world();
    gitRepo(w.project);
    const cwd = join(w.project, 'web');
    claudeState(join(w.home, '.claude.json'), {
      [w.project]: { mcpServers: { postgres: {} }, disabledMcpjsonServers: ['blocked'] },
      [cwd]: { mcpServers: { figma: {} } },
    });
    write(join(w.project, '.mcp.json'), JSON.stringify({ mcpServers: { sentry: {}, blocked: {} } }));
    write(join(w.home, '.codex', 'config.toml'), codexToml);
    expect(claudeStatePath(w.env)).toBe(join(w.home, '.claude.json'));
    expect(w.detect({ cwd: w.project, agent: 'claude' }).mcpServers).toEqual(['github', 'postgres', 'sentry']);
    write(join(cwd, 'index.ts'), '');
    expect(w.detect({ cwd, agent: 'claude' }).mcpServers).toEqual(['figma', 'github', 'postgres', 'sentry']);
  });

  it('reads $CLAUDE_CONFIG_DIR/.claude.json when the config folder is relocated', () => {
    const probe = world();
    const relocated = world({ CLAUDE_CONFIG_DIR: join(probe.root, 'claude-config') });
    claudeState(join(relocated.home, '.claude.json'), {}, ['ignored']);
    claudeState(join(probe.root, 'claude-config', '.claude.json'), {}, ['relocated']);
    expect(claudeStatePath(relocated.env)).toBe(join(probe.root, 'claude-config', '.claude.json'));
    expect(relocated.detect({ agent: 'claude' }).mcpServers).toEqual(['relocated']);
  });

  it('reads Codex’s config.toml and the project’s .codex/config.toml, skipping enabled = false', () => {
    const w = world();
    gitRepo(w.project);
    claudeState(join(w.home, '.claude.json'), {});
    write(join(w.home, '.codex', 'config.toml'), codexToml);
    write(join(w.project, '.codex', 'config.toml'), '[mcp_servers.local-db]\ncommand = "db"\n');
    expect(w.detect({ agent: 'codex' }).mcpServers).toEqual(['docs', 'engram', 'local-db']);
    expect(w.detect({ agent: 'unknown' }).mcpServers).toEqual(['docs', 'engram', 'github', 'local-db']);
  });

  it('honours $CODEX_HOME', () => {
    const probe = world();
    const w = world({ CODEX_HOME: join(probe.root, 'cx') });
    write(join(probe.root, 'cx', 'config.toml'), '[mcp_servers.relocated]\ncommand = "x"\n');
    expect(w.detect({ agent: 'codex' }).mcpServers).toEqual(['relocated']);
  });

  it('reports unreadable configurations and keeps what the others give', () => {
    const w = world();
    write(join(w.home, '.claude.json'), '{');
    write(join(w.home, '.codex', 'config.toml'), '[mcp_servers.broken\ncommand = ');
    write(join(w.project, '.mcp.json'), JSON.stringify({ mcpServers: { sentry: {} } }));
    write(join(w.project, '.codex', 'config.toml'), 'mcp_servers = "not a table"\n');
    const found = w.detect();
    expect(found.mcpServers).toEqual(['sentry']);
    expect(found.errors).toEqual([
      expect.stringContaining('.claude.json is not valid JSON'),
      expect.stringContaining('config.toml is not valid TOML'),
    ]);
  });

  it('lists nothing when no agent is configured', () => {
    expect(world().detect().mcpServers).toEqual([]);
  });
});
