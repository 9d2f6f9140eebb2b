import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEnv } from '../../../src/core/index.js';
import { installHooks, uninstallHooks, type Agent, type Scope } from '../../../src/services/index.js';
import { tempDir } from '../../_helpers.js';

/** A fake install folder: all a settings hook needs is `<root>/hooks/run.sh` and the `run.cjs` it runs. */
function installRoot(): string {
  const root = realpathSync(tempDir('engram-root-'));
  mkdirSync(join(root, 'hooks'));
  writeFileSync(join(root, 'hooks', 'run.cjs'), '');
  writeFileSync(join(root, 'hooks', 'run.sh'), '');
  return root;
}

/** A scratch machine: HOME with ~/.claude and ~/.codex, and a git repository to run in. */
function machine() {
  const home = realpathSync(tempDir());
  const repo = join(home, 'work', 'repo');
  mkdirSync(join(repo, '.git'), { recursive: true });
  mkdirSync(join(repo, 'src'));
  return { home, repo, env: readEnv({ HOME: home }, { cwd: repo }) };
}

const json = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

const install = (m: ReturnType<typeof machine>, root: string, agent: Agent, extra: { scope?: Scope; dryRun?: boolean; cwd?: string } = {}) =>
  installHooks({ agent, env: m.env, cwd: extra.cwd ?? m.repo, installRoot: root, scope: extra.scope ?? 'user', dryRun: extra.dryRun ?? false });

/** Someone else's settings, with hooks of their own on an event Engram uses and one it does not. */
const THEIRS = {
  model: 'opus',
  permissions: { allow: ['Bash(ls:*)'] },
  hooks: {
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'my-guard.sh', timeout: 3 }] }],
    Notification: [{ hooks: [{ type: 'command', command: 'notify-send hi' }] }],
  },
  enabledPlugins: { 'other@market': true },
};

describe('engram hooks install (Claude Code)', () => {
  it('creates the user settings file with one group per event, each running this install', async () => {
    const m = machine();
    const root = installRoot();
    const result = await install(m, root, 'claude');
    const file = join(m.home, '.claude', 'settings.json');
    expect(result).toMatchObject({ agent: 'claude', scope: 'user', file, changed: true, removed: [], dry_run: false });
    const written = json(file);
    expect(Object.keys(written.hooks)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'SessionEnd']);
    expect(written.hooks.SessionStart).toEqual([
      { matcher: 'startup|resume|clear|compact|fork', hooks: [{ type: 'command', command: `sh "${root}/hooks/run.sh" session-start --agent claude`, timeout: 15 }] },
    ]);
    expect(written.hooks.PostToolUse[0].hooks[0].async).toBeUndefined();
    expect(result.added).toHaveLength(7);
    expect(result.added[0]).toEqual({ event: 'SessionStart', matcher: 'startup|resume|clear|compact|fork', command: `sh "${root}/hooks/run.sh" session-start --agent claude`, timeout: 15 });
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify(written, null, 2)}\n`);
  });

  it("keeps every other key, event, group and handler as it was", async () => {
    const m = machine();
    const root = installRoot();
    const file = join(m.home, '.claude', 'settings.json');
    mkdirSync(join(m.home, '.claude'));
    writeFileSync(file, JSON.stringify(THEIRS));
    await install(m, root, 'claude');
    const written = json(file);
    expect(Object.keys(written)).toEqual(['model', 'permissions', 'hooks', 'enabledPlugins']);
    expect({ ...written, hooks: undefined }).toEqual({ ...THEIRS, hooks: undefined });
    expect(written.hooks.PreToolUse[0]).toEqual(THEIRS.hooks.PreToolUse[0]);
    expect(written.hooks.PreToolUse[1].hooks[0].command).toContain('pre-tool-use --agent claude');
    expect(written.hooks.Notification).toEqual(THEIRS.hooks.Notification);

    const removed = uninstallHooks({ agent: 'claude', env: m.env, cwd: m.repo, installRoot: root });
    expect(removed.removed).toHaveLength(7);
    expect(json(file)).toEqual(THEIRS);
  });

  it('changes nothing the second time, and says so', async () => {
    const m = machine();
    const root = installRoot();
    await install(m, root, 'claude');
    const file = join(m.home, '.claude', 'settings.json');
    const before = readFileSync(file, 'utf8');
    const mtime = statSync(file).mtimeMs;
    const again = await install(m, root, 'claude');
    expect(again).toMatchObject({ changed: false, added: [], removed: [] });
    expect(again.next_steps[0]).toContain('already registered');
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(statSync(file).mtimeMs).toBe(mtime);
  });

  it('replaces the entries of an older install folder in place, keeping others at their index', async () => {
    const m = machine();
    const oldRoot = installRoot();
    const newRoot = installRoot();
    const file = join(m.home, '.claude', 'settings.json');
    await install(m, oldRoot, 'claude');
    // Someone adds their own hook after Engram's.
    const edited = json(file);
    edited.hooks.Stop.push({ hooks: [{ type: 'command', command: 'after-engram.sh' }] });
    writeFileSync(file, JSON.stringify(edited, null, 2));

    const moved = await install(m, newRoot, 'claude');
    expect(moved.changed).toBe(true);
    expect(moved.removed.map((entry) => entry.command)).toEqual(expect.arrayContaining([`sh "${oldRoot}/hooks/run.sh" stop --agent claude`]));
    expect(moved.removed).toHaveLength(7);
    expect(moved.added).toHaveLength(7);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(oldRoot);
    const written = json(file);
    expect(written.hooks.Stop).toEqual([
      { hooks: [{ type: 'command', command: `sh "${newRoot}/hooks/run.sh" stop --agent claude`, timeout: 10 }] },
      { hooks: [{ type: 'command', command: 'after-engram.sh' }] },
    ]);
  });

  it("removes only Engram's handlers from a group it shares with someone else's", () => {
    const m = machine();
    const root = installRoot();
    const file = join(m.home, '.claude', 'settings.json');
    mkdirSync(join(m.home, '.claude'));
    const shared = { matcher: 'Bash', hooks: [{ type: 'command', command: `node "/old/engram/hooks/run.cjs" pre-tool-use --agent claude` }, { type: 'command', command: 'mine.sh' }] };
    writeFileSync(file, JSON.stringify({ hooks: { PreToolUse: [shared], Stop: [] } }));
    const result = uninstallHooks({ agent: 'claude', env: m.env, cwd: m.repo, installRoot: root });
    expect(result.removed).toEqual([{ event: 'PreToolUse', matcher: 'Bash', command: 'node "/old/engram/hooks/run.cjs" pre-tool-use --agent claude', timeout: null }]);
    // The empty Stop list was someone else's: it stays.
    expect(json(file)).toEqual({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'mine.sh' }] }], Stop: [] } });
    expect(uninstallHooks({ agent: 'claude', env: m.env, cwd: m.repo, installRoot: root })).toMatchObject({ changed: false, removed: [] });
  });

  it('drops the hooks key it created when uninstalling leaves it empty', async () => {
    const m = machine();
    const root = installRoot();
    const file = join(m.home, '.claude', 'settings.json');
    mkdirSync(join(m.home, '.claude'));
    writeFileSync(file, JSON.stringify({ model: 'opus' }));
    await install(m, root, 'claude');
    uninstallHooks({ agent: 'claude', env: m.env, cwd: m.repo, installRoot: root });
    expect(json(file)).toEqual({ model: 'opus' });
  });

  it('refuses a file that is not JSON, or whose hooks have the wrong shape, and leaves it as it was', async () => {
    const m = machine();
    const root = installRoot();
    const file = join(m.home, '.claude', 'settings.json');
    mkdirSync(join(m.home, '.claude'));
    for (const text of ['{ "model": "opus", ', '[1, 2]', '{"hooks": {"Stop": {"command": "x"}}}', '{"hooks": {"Stop": [{"matcher": "x"}]}}']) {
      writeFileSync(file, text);
      await expect(install(m, root, 'claude')).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining(file) });
      expect(() => uninstallHooks({ agent: 'claude', env: m.env, cwd: m.repo, installRoot: root })).toThrow(/nothing was changed/);
      expect(readFileSync(file, 'utf8')).toBe(text);
    }
  });

  it('writes nothing on a dry run, but reports what it would do', async () => {
    const m = machine();
    const root = installRoot();
    const result = await install(m, root, 'claude', { dryRun: true });
    expect(result).toMatchObject({ dry_run: true, changed: true });
    expect(result.added).toHaveLength(7);
    expect(existsSync(join(m.home, '.claude'))).toBe(false);
    await install(m, root, 'claude');
    const file = join(m.home, '.claude', 'settings.json');
    const before = readFileSync(file, 'utf8');
    const dry = uninstallHooks({ agent: 'claude', env: m.env, cwd: m.repo, installRoot: root, dryRun: true });
    expect(dry.removed).toHaveLength(7);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('puts project and local scopes at the repository root, whatever subfolder it runs in', async () => {
    const m = machine();
    const root = installRoot();
    const project = await install(m, root, 'claude', { scope: 'project', cwd: join(m.repo, 'src') });
    expect(project.file).toBe(join(m.repo, '.claude', 'settings.json'));
    expect(project.warnings.join('\n')).toContain('usually committed');
    const local = await install(m, root, 'claude', { scope: 'local', cwd: join(m.repo, 'src') });
    expect(local.file).toBe(join(m.repo, '.claude', 'settings.local.json'));
    expect(existsSync(local.file)).toBe(true);
  });

  it('follows CLAUDE_CONFIG_DIR for the user scope, and writes through a symlinked settings file', async () => {
    const m = machine();
    const root = installRoot();
    const config = join(m.home, 'dotfiles', 'claude');
    mkdirSync(config, { recursive: true });
    const real = join(m.home, 'dotfiles', 'settings.json');
    writeFileSync(real, '{"model": "opus"}');
    symlinkSync(real, join(config, 'settings.json'));
    const env = readEnv({ HOME: m.home, CLAUDE_CONFIG_DIR: config }, { cwd: m.repo });
    const result = await installHooks({ agent: 'claude', env, cwd: m.repo, installRoot: root });
    expect(result.file).toBe(join(config, 'settings.json'));
    expect(json(real).hooks.Stop).toHaveLength(1);
    expect(statSync(join(config, 'settings.json'), { throwIfNoEntry: true }).isFile()).toBe(true);
  });

  it('warns when Engram is also enabled as a plugin: every event would run twice', async () => {
    const m = machine();
    const root = installRoot();
    mkdirSync(join(m.home, '.claude', 'plugins'), { recursive: true });
    writeFileSync(join(m.home, '.claude', 'plugins', 'installed_plugins.json'), JSON.stringify({ version: 2, plugins: { 'engram@engram': [{ scope: 'user', installPath: '/x', version: '0.1.0' }] } }));
    writeFileSync(join(m.home, '.claude', 'settings.json'), JSON.stringify({ enabledPlugins: { 'engram@engram': true } }));
    const result = await install(m, root, 'claude');
    expect(result.warnings.join('\n')).toMatch(/also enabled as the Claude Code plugin engram@engram.*twice.*claude plugin uninstall engram@engram/);
  });

  it('does not take the user file for another scope when run from the home folder', async () => {
    const m = machine();
    const root = installRoot();
    const result = await install(m, root, 'codex', { cwd: m.home });
    expect(result.warnings.join('\n')).not.toContain('also registers');
    await install(m, root, 'codex', { scope: 'project' });
    expect((await install(m, root, 'codex')).warnings.join('\n')).toContain('(scope project) also registers');
  });

  it('refuses an install folder without the hook launcher, and --trust for Claude', async () => {
    const m = machine();
    await expect(install(m, tempDir(), 'claude')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // A folder of a version before the shell front: the registered command would name a file that is not there.
    const nodeOnly = installRoot();
    rmSync(join(nodeOnly, 'hooks', 'run.sh'));
    await expect(install(m, nodeOnly, 'claude')).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('run.sh does not exist') });
    await expect(installHooks({ agent: 'claude', env: m.env, cwd: m.repo, installRoot: installRoot(), trust: { vars: {} } })).rejects.toMatchObject({ code: 'USAGE' });
  });
});

describe('engram hooks install (Codex)', () => {
  it("writes $CODEX_HOME/hooks.json with Codex's groups (no async handlers, no Claude-only events) and says how to trust", async () => {
    const m = machine();
    const root = installRoot();
    const result = await install(m, root, 'codex');
    expect(result.file).toBe(join(m.home, '.codex', 'hooks.json'));
    const written = json(result.file);
    expect(Object.keys(written.hooks)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd']);
    expect(JSON.stringify(written)).not.toContain('"async"');
    expect(written.hooks.PreToolUse[0]).toEqual({ matcher: 'Bash|apply_patch', hooks: [{ type: 'command', command: `sh "${root}/hooks/run.sh" pre-tool-use --agent codex`, timeout: 5 }] });
    expect(result.next_steps.join('\n')).toMatch(/skips hooks it has not trusted.*engram hooks trust --agent codex.*\/hooks/s);
  });

  it('writes the project scope to <repository>/.codex/hooks.json and says Codex loads it only for a trusted project', async () => {
    const m = machine();
    const root = installRoot();
    const result = await install(m, root, 'codex', { scope: 'project', cwd: join(m.repo, 'src') });
    expect(result.file).toBe(join(m.repo, '.codex', 'hooks.json'));
    expect(json(result.file).hooks.Stop[0].hooks[0].command).toBe(`sh "${root}/hooks/run.sh" stop --agent codex`);
    expect(result.warnings.join('\n')).toContain('only for a trusted project');
  });

  it('has no local scope', async () => {
    const m = machine();
    await expect(install(m, installRoot(), 'codex', { scope: 'local' })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('no local hooks file') });
  });

  it('warns when removing Engram moves other hooks, whose trust Codex keys by position', async () => {
    const m = machine();
    const root = installRoot();
    await install(m, root, 'codex');
    const file = join(m.home, '.codex', 'hooks.json');
    const edited = json(file);
    edited.hooks.Stop.push({ hooks: [{ type: 'command', command: 'after.sh' }] });
    writeFileSync(file, JSON.stringify(edited));
    expect((await install(m, installRoot(), 'codex')).warnings.join('\n')).not.toContain('keys trust by position');
    const removed = uninstallHooks({ agent: 'codex', env: m.env, cwd: m.repo, installRoot: root });
    expect(removed.warnings.join('\n')).toContain('other hooks under Stop');
    expect(json(file).hooks).toEqual({ Stop: [{ hooks: [{ type: 'command', command: 'after.sh' }] }] });
  });

  it('warns when Engram is also the enabled Codex plugin, and when Codex hooks are off', async () => {
    const m = machine();
    mkdirSync(join(m.home, '.codex'));
    writeFileSync(join(m.home, '.codex', 'config.toml'), 'features.hooks = false\n\n[plugins."engram@engram"]\nenabled = true\n');
    const result = await install(m, installRoot(), 'codex');
    const warnings = result.warnings.join('\n');
    expect(warnings).toContain('codex plugin remove engram@engram');
    expect(warnings).toContain('turned off');
  });
});
