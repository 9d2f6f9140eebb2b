/**
 * Engram's MCP server in Codex's config.toml: written from plugin.json's entry with this install's folder, replaced
 * in place on reinstall, removed exactly on uninstall — and the user's other tables, keys and comments untouched.
 * Plus doctor's view of it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { readEnv } from '../../../src/core/index.js';
import { checkClaudeMcp, checkCodexMcp, codexMcpEntry, engramMcpEntry, installHooks, registerCodexMcp, uninstallHooks, unregisterCodexMcp } from '../../../src/services/index.js';
import { ROOT, tempDir, thrown } from '../../_helpers.js';

const USER_CONFIG = `# my settings
model = "gpt-5.5"

[mcp_servers.github]
command = "gh-mcp" # keep me
args = ["--stdio"]

[projects."/work/shop"]
trust_level = "trusted"
`;

describe('Codex config.toml', () => {
  it('adds [mcp_servers.engram] from plugin.json, keeps everything else byte for byte, and is idempotent', () => {
    const file = join(tempDir(), 'config.toml');
    writeFileSync(file, USER_CONFIG);
    const root = '/opt/engram';
    const added = registerCodexMcp(file, root);
    expect(added).toMatchObject({ action: 'added', changed: true, entry: { command: 'node', args: ['/opt/engram/bin/engram', 'mcp', '--tools=engram,agent'] } });
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith(USER_CONFIG.trimEnd())).toBe(true);
    const config = parse(text) as { mcp_servers: Record<string, Record<string, unknown>>; model: string };
    expect(config.model).toBe('gpt-5.5');
    expect(config.mcp_servers.github).toEqual({ command: 'gh-mcp', args: ['--stdio'] });
    expect(config.mcp_servers.engram).toMatchObject({ command: 'node', args: engramMcpEntry(root).args, env_vars: expect.arrayContaining(['ENGRAM_HOME', 'ENGRAM_PORT', 'ENGRAM_HTTP']) });
    expect(registerCodexMcp(file, root)).toMatchObject({ action: 'unchanged', changed: false });
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('replaces an older entry (another install, an env subtable) in place, and uninstall removes exactly it', () => {
    const file = join(tempDir(), 'config.toml');
    writeFileSync(file, `${USER_CONFIG}\n[mcp_servers."engram"]\ncommand = "node"\nargs = ["/old/engram/bin/engram", "mcp"]\n\n[mcp_servers.engram.env]\nENGRAM_HOME = "/x"\n\n[features]\nhooks = true\n`);
    expect(registerCodexMcp(file, '/new/engram').action).toBe('updated');
    const config = parse(readFileSync(file, 'utf8')) as Record<string, any>;
    expect(config.mcp_servers.engram.args[0]).toBe('/new/engram/bin/engram');
    expect(config.mcp_servers.engram.env).toBeUndefined();
    expect(config.features).toEqual({ hooks: true });
    expect(unregisterCodexMcp(file)).toMatchObject({ action: 'removed', changed: true });
    const after = readFileSync(file, 'utf8');
    expect(codexMcpEntry(file)).toBeUndefined();
    expect(after).not.toContain('engram');
    expect(parse(after)).toEqual({ ...(parse(USER_CONFIG) as object), features: { hooks: true } });
    expect(unregisterCodexMcp(file)).toMatchObject({ action: 'absent', changed: false });
  });

  it('creates the file when there is none, and refuses what it cannot edit safely, changing nothing', () => {
    const dir = tempDir();
    const fresh = join(dir, 'new', 'config.toml');
    expect(registerCodexMcp(fresh, '/opt/engram').action).toBe('added');
    expect(Object.keys(parse(readFileSync(fresh, 'utf8')))).toEqual(['mcp_servers']);
    const broken = join(dir, 'broken.toml');
    writeFileSync(broken, 'model = [unclosed\n');
    expect(thrown(() => registerCodexMcp(broken, '/opt/engram'))?.message).toMatch(/broken\.toml is not valid TOML .*nothing was changed/);
    expect(readFileSync(broken, 'utf8')).toBe('model = [unclosed\n');
    const inline = join(dir, 'inline.toml');
    writeFileSync(inline, 'mcp_servers = { engram = { command = "x" } }\n');
    expect(thrown(() => registerCodexMcp(inline, '/opt/engram'))?.message).toMatch(/defines mcp_servers.engram inline or with dotted keys; remove it by hand/);
    expect(readFileSync(inline, 'utf8')).toBe('mcp_servers = { engram = { command = "x" } }\n');
  });

  it('engram hooks install/uninstall --agent codex write and remove it beside the hooks', async () => {
    const home = tempDir();
    const env = readEnv({ HOME: home, CODEX_HOME: join(home, '.codex') }, { cwd: home });
    mkdirSync(env.codexHome, { recursive: true });
    writeFileSync(join(env.codexHome, 'config.toml'), USER_CONFIG);
    const installed = await installHooks({ agent: 'codex', env, cwd: home, installRoot: ROOT });
    expect(installed.mcp).toMatchObject({ file: join(env.codexHome, 'config.toml'), action: 'added' });
    expect(installed.next_steps.join('\n')).toContain('[mcp_servers.engram]');
    expect(checkCodexMcp(env, { installRoot: ROOT })).toMatchObject({ name: 'codex_mcp', status: 'ok' });
    expect(checkCodexMcp(env, { installRoot: '/somewhere/else' })).toMatchObject({ status: 'degraded', detail: expect.stringContaining(`runs the Engram in ${ROOT}, not this one`) });
    const removed = uninstallHooks({ agent: 'codex', env, cwd: home, installRoot: ROOT });
    expect(removed.mcp).toMatchObject({ action: 'removed' });
    expect(parse(readFileSync(join(env.codexHome, 'config.toml'), 'utf8'))).toEqual(parse(USER_CONFIG));
    expect(checkCodexMcp(env, { installRoot: ROOT })).toMatchObject({ status: 'degraded', fix: expect.stringContaining('engram hooks install --agent codex') });
  });

  it("doctor finds Claude Code's registration from the plugin, .claude.json or .mcp.json", async () => {
    const home = tempDir();
    const env = readEnv({ HOME: home }, { cwd: home });
    expect(checkClaudeMcp(env, { installRoot: ROOT }).status).toBe('skipped');
    mkdirSync(env.claudeConfigDir, { recursive: true });
    expect(checkClaudeMcp(env, { installRoot: ROOT })).toMatchObject({ status: 'degraded', fix: `claude mcp add --scope user engram -- node ${ROOT}/bin/engram mcp --tools=engram,agent` });
    writeFileSync(join(home, '.claude.json'), JSON.stringify({ mcpServers: { engram: { command: 'node', args: [`${ROOT}/bin/engram`, 'mcp'] } } }));
    expect(checkClaudeMcp(env, { installRoot: ROOT })).toMatchObject({ status: 'ok', detail: expect.stringContaining('.claude.json') });
    const installed = await installHooks({ agent: 'claude', env, cwd: home, installRoot: ROOT });
    expect(installed.next_steps.join('\n')).toContain(`claude mcp add --scope user engram -- node ${ROOT}/bin/engram mcp --tools=engram,agent`);
  });
});
