import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOOK_ENTRIES } from '../scripts/install-state.mjs';
import { CODEX_HOOK_EVENTS } from '../src/services/index.js';
import { HOOK_ENTRY_EVENTS } from '../src/hooks/entries.js';
import { CLAUDE_BIN, ROOT, tempDir } from './_helpers.js';

const json = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8'));
const plugin = json('plugin.json');

/** Events each agent knows (agent-contracts.md §1.1 and §4.4, plus SessionEnd seen in Codex 0.169). */
const CLAUDE_EVENTS = new Set(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'SubagentStop', 'PreCompact', 'PostCompact', 'SessionEnd', 'Notification']);
const CODEX_EVENTS = new Set(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'PreCompact', 'PostCompact', 'SubagentStart', 'SubagentStop', 'Stop', 'SessionEnd']);
/** Claude Code silently ignores matchers on these. */
const NO_MATCHER = new Set(['UserPromptSubmit', 'Stop', 'SessionEnd']);

describe('plugin manifests', () => {
  it('match what scripts/manifests.mjs derives from plugin.json', () => {
    const result = spawnSync(process.execPath, [join(ROOT, 'scripts', 'manifests.mjs'), '--check'], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('detects drift: a derived file that no longer matches plugin.json fails the check, naming it', () => {
    const copy = tempDir();
    for (const item of ['plugin.json', 'package.json', 'scripts', 'hooks', '.claude-plugin', '.codex-plugin', '.agents']) {
      cpSync(join(ROOT, item), join(copy, item), { recursive: true });
    }
    const bumped = { ...plugin, version: '9.9.9' };
    writeFileSync(join(copy, 'plugin.json'), JSON.stringify(bumped));
    const result = spawnSync(process.execPath, [join(copy, 'scripts', 'manifests.mjs'), '--check'], { encoding: 'utf8' });
    expect(result.status).toBe(1);
    for (const file of ['.claude-plugin/plugin.json', '.claude-plugin/marketplace.json', '.codex-plugin/plugin.json', 'package.json (version)']) {
      expect(result.stderr).toContain(file);
    }
    execFileSync(process.execPath, [join(copy, 'scripts', 'manifests.mjs')]);
    expect(JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8')).version).toBe('9.9.9');
    expect(spawnSync(process.execPath, [join(copy, 'scripts', 'manifests.mjs'), '--check']).status).toBe(0);
  });

  it('share one identity: name, version and description agree everywhere', () => {
    const claude = json('.claude-plugin/plugin.json');
    const codex = json('.codex-plugin/plugin.json');
    const market = json('.claude-plugin/marketplace.json');
    expect(plugin.name).toBe('engram');
    for (const manifest of [claude, codex, market.plugins[0]]) {
      expect(manifest).toMatchObject({ name: plugin.name, version: plugin.version, description: plugin.description });
    }
    expect(json('package.json').version).toBe(plugin.version);
    expect(market.plugins[0].source).toBe('./');
    expect(json('.agents/plugins/marketplace.json').plugins[0]).toMatchObject({ name: 'engram', source: { source: 'local', path: './' } });
  });

  it('do not name hooks/hooks.json in the Claude manifest (Claude Code loads it by default; naming it loads it twice)', () => {
    expect(json('.claude-plugin/plugin.json').hooks).toBeUndefined();
    expect(json('.codex-plugin/plugin.json').hooks).toBe('./hooks/codex-hooks.json');
  });

  it('register exactly the hook bundles that are built, and that doctor counts for Codex trust', () => {
    const entries = plugin.hooks.map((hook: { entry: string }) => hook.entry);
    expect(entries).toEqual([...HOOK_ENTRIES]);
    // Each entry names the event it is registered for, in the fast path's own table too.
    expect(plugin.hooks.map((hook: { entry: string; event: string }) => [hook.entry, hook.event])).toEqual(Object.entries(HOOK_ENTRY_EVENTS));
    const snake = plugin.hooks.filter((hook: { agents?: string[] }) => !hook.agents || hook.agents.includes('codex')).map((hook: { event: string }) => hook.event.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase());
    expect(snake).toEqual([...CODEX_HOOK_EVENTS]);
  });
});

describe.each([
  ['hooks/hooks.json', 'claude', '${CLAUDE_PLUGIN_ROOT}', CLAUDE_EVENTS],
  ['hooks/codex-hooks.json', 'codex', '${PLUGIN_ROOT}', CODEX_EVENTS],
])('%s', (file, agent, rootVar, known) => {
  const config = json(file);

  it('uses only events the agent knows, in the event → matcher group → handler shape', () => {
    for (const [event, groups] of Object.entries<Array<{ matcher?: string; hooks: unknown[] }>>(config.hooks)) {
      expect(known.has(event), event).toBe(true);
      expect(groups).toHaveLength(1);
      expect(groups[0]?.hooks).toHaveLength(1);
      if (agent === 'claude' && NO_MATCHER.has(event)) expect(groups[0]?.matcher).toBeUndefined();
    }
    expect(config.hooks.SessionStart[0].matcher).toMatch(/^startup\|resume\|clear\|compact/);
    // Both generations of tool names (agent-contracts.md §1.5), and Codex's shell and patch tools.
    const tools = config.hooks.PreToolUse[0].matcher.split('|');
    if (agent === 'claude') expect(tools).toEqual(expect.arrayContaining(['Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'Task', 'Agent', 'Bash', 'Read']));
    else expect(tools).toEqual(['Bash', 'apply_patch']);
    expect(config.hooks.PostToolUse[0].matcher).toBe(config.hooks.PreToolUse[0].matcher);
  });

  it(`runs the shell front with a quoted ${rootVar}, the entry and --agent ${agent}`, () => {
    for (const [event, groups] of Object.entries<Array<{ hooks: Array<{ type: string; command: string; timeout: number }> }>>(config.hooks)) {
      const handler = groups[0]?.hooks[0];
      const entry = plugin.hooks.find((hook: { event: string }) => hook.event === event).entry;
      // No async handlers: Codex skips them, and Claude Code -p skips SessionEnd while one is still running.
      expect(handler).toEqual({ type: 'command', command: `sh "${rootVar}/hooks/run.sh" ${entry} --agent ${agent}`, timeout: expect.any(Number) });
      expect(handler?.timeout).toBeGreaterThan(0);
      expect(handler?.timeout).toBeLessThanOrEqual(30);
    }
    // Claude Code gives SessionEnd hooks 1.5 s in all and Codex clamps them to 3 s: a longer timeout would be a lie.
    expect(config.hooks.SessionEnd[0].hooks[0].timeout).toBeLessThanOrEqual(3);
  });
});

describe('the plugin as Claude Code sees it', () => {
  // The global setup installs the pinned CLI (or stops the run saying why): this check never depends on test order.
  it('passes the real `claude plugin validate --strict`', () => {
    expect(existsSync(CLAUDE_BIN), `${CLAUDE_BIN} (installed by test/global-setup.ts)`).toBe(true);
    const home = tempDir();
    mkdirSync(join(home, '.claude'), { recursive: true });
    for (const target of ['.', '.claude-plugin/plugin.json']) {
      const result = spawnSync(CLAUDE_BIN, ['plugin', 'validate', target, '--strict'], { cwd: ROOT, env: { ...process.env, HOME: home }, encoding: 'utf8' });
      expect(result.stdout + result.stderr).toContain('Validation passed');
    }
  });
});
