import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, tempDir } from '../_helpers.js';
import { gitRepo, settle, write } from '../core/environment/_fixture.js';

/** A home holding a repository with a remote, TypeScript files and a Claude Code MCP server. */
function home(): { home: string; project: string } {
  const home = tempDir();
  const project = join(home, 'work', 'shop');
  gitRepo(project, { origin: 'https://ci:secret-token@github.com/acme/shop.git' });
  write(join(project, 'tsconfig.json'), '{}');
  write(join(project, 'package.json'), JSON.stringify({ devDependencies: { typescript: '5' } }));
  write(join(home, '.claude.json'), JSON.stringify({ mcpServers: { linear: {} } }));
  write(join(home, '.codex', 'config.toml'), '[mcp_servers.engram]\ncommand = "node"\n');
  settle(home);
  return { home, project };
}

describe('engram env', () => {
  it('prints the detected environment as JSON, cached between runs', async () => {
    const { home: engramHome, project } = home();
    const first = await cli(['env', '--cwd', project], { home: engramHome });
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({
      cwd: project,
      home: engramHome,
      repo: 'shop',
      repoRoot: project,
      remotes: ['https://github.com/acme/shop.git'],
      mcpServers: ['engram', 'linear'],
      tags: ['github', 'nodejs', 'typescript'],
      reasons: { typescript: ['file marker tsconfig.json', 'dependency typescript'] },
      cache: 'miss',
      errors: [],
    });
    expect(existsSync(join(engramHome, 'cache', 'env'))).toBe(true);
    expect((await cli(['env', '--cwd', project], { home: engramHome })).json.cache).toBe('hit');
    expect((await cli(['env', '--cwd', project, '--no-cache'], { home: engramHome })).json.cache).toBe('off');
  });

  it('reads one agent’s MCP servers with --agent, and uses the current folder by default', async () => {
    const { home: engramHome, project } = home();
    expect((await cli(['env', '--agent', 'claude'], { home: engramHome, cwd: project })).json).toMatchObject({ cwd: project, mcpServers: ['linear'] });
    expect((await cli(['env', '--agent', 'Codex'], { home: engramHome, cwd: project })).json.mcpServers).toEqual(['engram']);
  });

  it('applies the tags rules from config.json', async () => {
    const { home: engramHome, project } = home();
    writeFileSync(join(engramHome, 'config.json'), JSON.stringify({ tags: { path_patterns: [{ pattern: '/work/', tags: ['work'] }] } }));
    expect((await cli(['env', '--cwd', project], { home: engramHome })).json.tags).toEqual(['github', 'nodejs', 'typescript', 'work']);
  });

  it('shows each tag with its reasons with --pretty', async () => {
    const { home: engramHome, project } = home();
    const result = await cli(['env', '--cwd', project, '--pretty'], { home: engramHome });
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines).toContain(`repo: shop (${project})`);
    expect(lines).toContain('mcp servers: engram, linear');
    expect(lines).toContain('tags:');
    expect(lines).toContain('  typescript  file marker tsconfig.json; dependency typescript');
    expect(lines).toContain('  github      remote pattern github\\.com');
    expect(result.stdout).not.toContain('secret-token');
  });

  it.each([
    [['env', '--agent', 'cursor'], 2, 'USAGE', "--agent must be claude or codex (or unknown for both), got 'cursor'"],
    [['env', '--cwd', 'missing'], 3, 'NOT_FOUND', 'does not exist'],
    [['env', '--cwd', 'config.json'], 2, 'USAGE', 'is not a folder'],
  ])('%j exits %i with a %s error', async (argv, code, errorCode, message) => {
    const engramHome = tempDir();
    writeFileSync(join(engramHome, 'config.json'), '{}');
    const result = await cli(argv, { home: engramHome });
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr).error).toMatchObject({ code: errorCode, message: expect.stringContaining(message) });
  });
});
