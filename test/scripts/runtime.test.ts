/**
 * Where an install folder's code runs from (hooks/run.cjs findRuntime, scripts/install-state.mjs) and the launchers that use
 * it (hooks/run.cjs, bin/engram). An agent's plugin folder must stay exactly as installed — Codex fingerprints it to
 * trust the hooks — so its dependencies and bundles live in a runtime folder outside it. These tests use a runtime
 * folder made from this checkout's build (fakeRuntime); the plugin-install tests run the real bootstrap in the real
 * agents.
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import {
  BUILD_INPUTS,
  bootstrapFiles,
  collectOldRuntimes,
  findRuntime,
  linkRuntime,
  locateRuntime,
  missingFiles,
  NATIVE_BINDING as INSTALL_STATE_BINDING,
  pointerFile,
  runtimeKey,
} from '../../scripts/install-state.mjs';
import { fakeRuntime, folderDigest, hookProcess, pluginFolder, processEnv, ROOT, tempDir, until } from '../_helpers.js';

const PROMPT = {
  session_id: 'sess-runtime',
  transcript_path: '/home/u/.claude/projects/-p/sess-runtime.jsonl',
  cwd: '/tmp',
  hook_event_name: 'UserPromptSubmit',
  prompt: 'hello from a plugin install',
};

const prompts = (home: string): string[] => {
  const store = openStore({ path: join(home, 'engram.db'), readonly: true });
  try {
    return store.sessions.prompts(PROMPT.session_id).map((p) => p.content);
  } finally {
    store.close();
  }
};

describe('the runtime of an install folder', () => {
  it('is the folder itself for a source checkout built in place, and nothing for a bare plugin folder', () => {
    expect(findRuntime(ROOT)).toEqual({ dir: ROOT, kind: 'in-place' });
    expect(findRuntime(pluginFolder(), { HOME: tempDir(), ENGRAM_HOME: tempDir() })).toBeNull();
  });

  it('spells the native addon path once', () => {
    const launcher = createRequire(import.meta.url)('../../hooks/run.cjs') as { NATIVE_BINDING: string };
    expect(launcher.NATIVE_BINDING).toBe(INSTALL_STATE_BINDING);
    expect(existsSync(join(ROOT, INSTALL_STATE_BINDING))).toBe(true);
  });

  it('is keyed by version and lockfile: two copies of one version share it, another lockfile does not', () => {
    const a = pluginFolder();
    const b = pluginFolder();
    expect(runtimeKey(a)).toBe(runtimeKey(b));
    expect(runtimeKey(a)).toMatch(/^\d+\.\d+\.\d+-[0-9a-f]{12}$/);
    appendFileSync(join(b, 'package-lock.json'), ' ');
    expect(runtimeKey(b)).not.toBe(runtimeKey(a));
  });

  it('is found through the pointer the bootstrap leaves, which goes stale when the folder’s lockfile changes', () => {
    const root = pluginFolder();
    const home = tempDir();
    const dir = fakeRuntime(root, home);
    const env = { HOME: home, ENGRAM_HOME: home };
    expect(findRuntime(root, env)).toEqual({ dir, kind: 'runtime', key: runtimeKey(root) });
    // A folder marketplace's source folder pulled to another lockfile: the old runtime is not used for it.
    appendFileSync(join(root, 'package-lock.json'), ' ');
    expect(findRuntime(root, env)).toBeNull();
    expect(locateRuntime(root, { env, home })).toBeNull();
  });

  it('built for one install folder, is found and linked for another of the same key (the other agent, the CLI)', () => {
    const home = tempDir();
    const first = pluginFolder();
    const second = pluginFolder();
    // Built where Codex's plugin data folder would be; the second folder has no such variable (a shell).
    const dir = fakeRuntime(first, home, join(tempDir(), 'plugin-data', 'runtime'));
    const env = { HOME: home, ENGRAM_HOME: home };
    expect(findRuntime(second, env)).toBeNull();
    expect(locateRuntime(second, { env, home })).toEqual({ dir, kind: 'runtime', key: runtimeKey(second) });
    expect(findRuntime(second, env)).toEqual({ dir, kind: 'runtime', key: runtimeKey(second) });
    expect(JSON.parse(readFileSync(pointerFile(second, { HOME: home, ENGRAM_HOME: home }), 'utf8'))).toMatchObject({ root: second, dir });
  });
});

describe('a runtime folder', () => {
  it('builds from the build inputs the bootstrap copies, and nothing else of the install folder', () => {
    // What bootstrap.mjs does after npm ci, with this checkout's node_modules linked instead of installed.
    const runtime = tempDir('engram-runtime-');
    for (const name of BUILD_INPUTS) cpSync(join(ROOT, name), join(runtime, name), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(runtime, 'node_modules'), 'dir');
    const build = spawnSync(process.execPath, [join(runtime, 'scripts', 'build.mjs')], { cwd: runtime, encoding: 'utf8' });
    expect(build.status, build.stderr).toBe(0);
    expect(missingFiles(runtime)).toEqual([]);
  });
});

describe('runtimes nothing uses any more', () => {
  it('are removed after a bootstrap; those a folder still points at, or a process runs from, are kept', async () => {
    const home = tempDir();
    const data = join(tempDir(), 'plugin-data', 'runtime');
    // The previous version's folder (another lockfile), removed by the agent's update; its runtime stays behind.
    const previous = pluginFolder();
    appendFileSync(join(previous, 'package-lock.json'), ' ');
    const old = fakeRuntime(previous, home, data);
    rmSync(previous, { recursive: true, force: true });
    // Another version still installed (a folder marketplace next to the plugin cache).
    const other = pluginFolder();
    appendFileSync(join(other, 'package-lock.json'), '  ');
    const kept = fakeRuntime(other, home, data);
    // A third whose folder is gone but whose server still runs.
    const busyRoot = pluginFolder();
    appendFileSync(join(busyRoot, 'package-lock.json'), '   ');
    const busy = fakeRuntime(busyRoot, home, data);
    rmSync(busyRoot, { recursive: true, force: true });
    const server = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', join(busy, 'dist', 'server.mjs')], { stdio: 'ignore' });
    try {
      await until(() => readFileSync(`/proc/${server.pid}/cmdline`, 'utf8').includes(busy), 'the process to start');
      const current = pluginFolder();
      fakeRuntime(current, home, data);
      expect(collectOldRuntimes(runtimeKey(current), home)).toEqual([old]);
      expect(existsSync(old)).toBe(false);
      expect(existsSync(join(home, 'runtime', `${runtimeKey(previous)}.json`))).toBe(false);
      expect([kept, busy].map(existsSync)).toEqual([true, true]);
    } finally {
      server.kill('SIGKILL');
    }
  });
});

describe('the hook launcher of a plugin install', () => {
  it('runs the hook from the runtime folder and writes nothing into the install folder', async () => {
    const root = pluginFolder();
    const home = tempDir();
    fakeRuntime(root, home);
    const before = folderDigest(root);
    const result = await hookProcess('user-prompt-submit', JSON.stringify(PROMPT), { home, root });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(prompts(home)).toEqual([PROMPT.prompt]);
    expect(folderDigest(root)).toEqual(before);
  });

  it('finds a plugin’s runtime through the pointer in the data folder the agent gives its hooks, loading no other module', async () => {
    const root = pluginFolder();
    const home = tempDir();
    const data = tempDir();
    const dir = fakeRuntime(root, home, join(data, 'runtime'), { CLAUDE_PLUGIN_DATA: data });
    const result = await hookProcess('user-prompt-submit', JSON.stringify(PROMPT), { home, root, env: { CLAUDE_PLUGIN_DATA: data } });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(prompts(home)).toEqual([PROMPT.prompt]);
    // What the launcher loads to find it: nothing but itself, with or without a data folder (the home rule is in it).
    const probe = (env: Record<string, string>, folder: string) => {
      const script = `const l = require(${JSON.stringify(join(folder, 'hooks', 'run.cjs'))}); const r = l.findRuntime(${JSON.stringify(folder)}, ${JSON.stringify(env)}); process.stdout.write(JSON.stringify({ dir: r && r.dir, modules: Object.keys(require.cache) }));`;
      return JSON.parse(spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' }).stdout) as { dir: string | null; modules: string[] };
    };
    expect(probe({ PLUGIN_DATA: data }, root)).toEqual({ dir, modules: [join(root, 'hooks', 'run.cjs')] });
    expect(probe({}, ROOT)).toEqual({ dir: ROOT, modules: [join(ROOT, 'hooks', 'run.cjs')] });
    // Without a data folder (hooks registered by hand): the home's pointer, through the home rule.
    expect(probe({ HOME: home, ENGRAM_HOME: home }, root)).toEqual({ dir, modules: [join(root, 'hooks', 'run.cjs')] });
  });

  it('links a runtime another copy of the same version built, and runs the hook at once', async () => {
    const home = tempDir();
    const built = pluginFolder();
    fakeRuntime(built, home, join(tempDir(), 'claude-plugin-data', 'runtime'));
    const copy = pluginFolder();
    const before = folderDigest(copy);
    const result = await hookProcess('user-prompt-submit', JSON.stringify(PROMPT), { home, root: copy });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(prompts(home)).toEqual([PROMPT.prompt]);
    expect(existsSync(pointerFile(copy, { HOME: home, ENGRAM_HOME: home }))).toBe(true);
    expect(existsSync(bootstrapFiles(copy, home).state)).toBe(false); // no bootstrap was needed
    expect(folderDigest(copy)).toEqual(before);
  });

  it('logs, and stays silent, when the runtime it points at has lost its in-process path', async () => {
    const root = pluginFolder();
    const home = tempDir();
    const dir = fakeRuntime(root, home);
    writeFileSync(join(dir, 'dist', 'hooks', 'inprocess.cjs'), 'throw new Error("half-removed runtime");\n');
    const result = await hookProcess('user-prompt-submit', JSON.stringify(PROMPT), { home, root });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const lines = readFileSync(join(home, 'logs', 'hooks.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toEqual([
      expect.objectContaining({ level: 'error', msg: 'hook fast path failed', event: 'UserPromptSubmit', error: { message: 'half-removed runtime' } }),
    ]);
  });

  it('starts the first-run bootstrap in the background, exits 0 silently, writes nothing into the folder, and does not retry a failure at once', async () => {
    // A plugin folder whose dependencies cannot be installed (npm ci needs a lockfile): the bootstrap fails fast.
    const root = pluginFolder();
    writeFileSync(join(root, 'package.json'), '{"name": "broken", "version": "0.0.0", "dependencies": {"no-such-package-engram-test": "0.0.0"}}');
    writeFileSync(join(root, 'package-lock.json'), '');
    const home = tempDir();
    const before = folderDigest(root);
    const run = () => hookProcess('session-start', JSON.stringify({ ...PROMPT, hook_event_name: 'SessionStart' }), { home, root });
    const first = await run();
    expect(first).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const files = bootstrapFiles(root, home);
    const deadline = Date.now() + 60_000;
    let state: { status?: string; error?: string; runtime?: string } = {};
    while (Date.now() < deadline) {
      try {
        state = JSON.parse(readFileSync(files.state, 'utf8'));
      } catch {}
      if (state.status === 'failed' || state.status === 'done') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(state).toMatchObject({ status: 'failed', error: expect.stringContaining('npm ci'), runtime: join(home, 'runtime', files.key) });
    expect(readFileSync(files.log, 'utf8')).toContain('failed: npm ci');
    // The half-built runtime is gone, and the install folder was never touched.
    expect(existsSync(join(home, 'runtime', files.key))).toBe(false);
    expect(folderDigest(root)).toEqual(before);
    // Within the back-off window, a second hook neither waits nor starts another bootstrap.
    const stateBefore = readFileSync(files.state, 'utf8');
    const logBefore = readFileSync(files.log, 'utf8');
    expect(await run()).toMatchObject({ code: 0, stdout: '', stderr: '' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(readFileSync(files.state, 'utf8')).toBe(stateBefore);
    expect(readFileSync(files.log, 'utf8')).toBe(logBefore);
  }, 90_000);

  it('builds into the plugin data folder the agent gives (PLUGIN_DATA, CLAUDE_PLUGIN_DATA)', async () => {
    const root = pluginFolder();
    writeFileSync(join(root, 'package.json'), '{"name": "broken", "version": "0.0.1", "dependencies": {}}');
    writeFileSync(join(root, 'package-lock.json'), '');
    const home = tempDir();
    const data = tempDir();
    const result = await hookProcess('stop', JSON.stringify({ ...PROMPT, hook_event_name: 'Stop' }), { home, root, env: { PLUGIN_DATA: data } });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const files = bootstrapFiles(root, home);
    let state: { status?: string; runtime?: string } = {};
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && state.status !== 'failed' && state.status !== 'done') {
      await new Promise((resolve) => setTimeout(resolve, 200));
      try {
        state = JSON.parse(readFileSync(files.state, 'utf8'));
      } catch {}
    }
    expect(state).toMatchObject({ status: 'failed', runtime: join(data, 'runtime', files.key) });
  }, 90_000);
});

describe('bin/engram of a plugin install', () => {
  it('runs the CLI from the runtime folder and names the install folder, not the runtime, as its install', () => {
    const root = pluginFolder(['fixtures']);
    const home = tempDir();
    const dir = fakeRuntime(root, home);
    const before = folderDigest(root);
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [join(root, 'bin', 'engram'), ...args], { cwd: home, encoding: 'utf8', env: processEnv({ HOME: home, ENGRAM_HOME: home }) });
    const status = run('status');
    expect(status.status, status.stderr).toBe(0);
    expect(status.stderr).toBe('');
    expect(JSON.parse(status.stdout).install).toEqual({ root, runtime: dir, kind: 'runtime', bootstraps: [], notes: [] });
    const doctor = JSON.parse(run('doctor').stdout) as { checks: Array<{ name: string; status: string; detail: string }> };
    expect(doctor.checks.find((check) => check.name === 'install')).toMatchObject({ status: 'ok', detail: `${root}: runs from ${dir}` });
    expect(folderDigest(root)).toEqual(before);
  });

  it('says in engram status and doctor that the hooks’ copy is still bootstrapping', () => {
    const cli = pluginFolder();
    const home = tempDir();
    fakeRuntime(cli, home);
    // The copy the hooks run from (a folder marketplace's source folder), bootstrapping right now: a state file and
    // a lock held by a live process (this test's).
    const hooksCopy = join(tempDir(), 'engram-source');
    mkdirSync(hooksCopy);
    const key = '0.0.9-000000000000';
    mkdirSync(join(home, 'bootstrap', `${key}.lock`), { recursive: true });
    writeFileSync(join(home, 'bootstrap', `${key}.lock`, 'pid'), String(process.pid));
    const started = new Date(Date.now() - 30_000).toISOString();
    writeFileSync(
      join(home, 'bootstrap', `${key}.json`),
      JSON.stringify({ root: hooksCopy, key, runtime: join(home, 'runtime', key), reason: 'hook session-start', pid: process.pid, started_at: started, status: 'running' }),
    );
    const env = processEnv({ HOME: home, ENGRAM_HOME: home });
    const status = JSON.parse(spawnSync(process.execPath, [join(cli, 'bin', 'engram'), 'status'], { encoding: 'utf8', env }).stdout);
    expect(status.install.bootstraps).toEqual([
      { root: hooksCopy, key, runtime: join(home, 'runtime', key), status: 'running', reason: 'hook session-start', started_at: started },
    ]);
    expect(status.install.notes).toEqual([expect.stringContaining(`the hooks' copy of Engram in ${hooksCopy} is still bootstrapping`)]);
    const doctor = JSON.parse(spawnSync(process.execPath, [join(cli, 'bin', 'engram'), 'doctor'], { encoding: 'utf8', env }).stdout);
    expect(doctor.checks.find((check: { name: string }) => check.name === 'install')).toMatchObject({
      status: 'degraded',
      detail: expect.stringContaining(`the hooks' copy in ${hooksCopy} is still bootstrapping`),
    });
    // Its process gone (killed mid-way), the same state reads as interrupted.
    writeFileSync(join(home, 'bootstrap', `${key}.lock`, 'pid'), '999999999');
    const later = JSON.parse(spawnSync(process.execPath, [join(cli, 'bin', 'engram'), 'status'], { encoding: 'utf8', env }).stdout);
    expect(later.install.bootstraps).toEqual([expect.objectContaining({ status: 'interrupted' })]);
  });

  it('ignores a stale pointer whose runtime was deleted and looks again', () => {
    const root = pluginFolder();
    const home = tempDir();
    const dir = fakeRuntime(root, home);
    // Points at a runtime that no longer exists; the registry still knows the real one.
    linkRuntime(root, join(home, 'gone'), runtimeKey(root), home);
    writeFileSync(join(home, 'runtime', `${runtimeKey(root)}.json`), JSON.stringify({ key: runtimeKey(root), dir }));
    expect(locateRuntime(root, { env: { HOME: home, ENGRAM_HOME: home }, home })).toEqual({ dir, kind: 'runtime', key: runtimeKey(root) });
  });
});
