import { cpSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHashingEmbedder, loadEmbedder, loadSettings, openStore, readEnv, resolveEmbedder, SCHEMA_VERSION } from '../../../src/core/index.js';
import { addEngram, checkClaude, checkCodex, CODEX_HOOK_EVENTS, embedPending, installHooks, runDoctor } from '../../../src/services/index.js';
import { hasModels, MODELS_DIR, pluginFolder, ROOT, tempDir } from '../../_helpers.js';

const readFileText = (file: string): string => readFileSync(file, 'utf8');

const envFor = (home: string, extra: Record<string, string> = {}) => readEnv({ HOME: home, ENGRAM_HOME: join(home, '.engram'), ...extra });

/** What `claude plugin install engram@engram` writes (observed with Claude Code 2.1.197). */
function claudeInstall(home: string, enabled: boolean): void {
  mkdirSync(join(home, '.claude', 'plugins'), { recursive: true });
  writeFileSync(
    join(home, '.claude', 'plugins', 'installed_plugins.json'),
    JSON.stringify({ version: 2, plugins: { 'engram@engram': [{ scope: 'user', installPath: '/x/cache/engram/engram/0.1.0', version: '0.1.0' }] } }),
  );
  writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ enabledPlugins: { 'engram@engram': enabled } }));
}

/** What `codex plugin add` and trusting hooks in /hooks write to config.toml (observed with Codex 0.169.0). */
function codexConfig(home: string, trustedEvents: string[]): void {
  mkdirSync(join(home, '.codex'), { recursive: true });
  const trust = trustedEvents
    .map((event) => `[hooks.state."engram@engram:hooks/codex-hooks.json:${event}:0:0"]\ntrusted_hash = "sha256:aa"\ntrusted_content_hash = "sha256:bb"\n`)
    .join('\n');
  writeFileSync(
    join(home, '.codex', 'config.toml'),
    `[marketplaces.engram]\nsource_type = "local"\nsource = "/src/engram"\n\n[plugins."engram@engram"]\nenabled = true\n\n[hooks.state]\n\n${trust}`,
  );
}

describe('checkClaude', () => {
  it('reports ok for an installed, enabled plugin and names where it lives', () => {
    const home = tempDir();
    claudeInstall(home, true);
    expect(checkClaude(envFor(home))).toMatchObject({ status: 'ok', detail: expect.stringContaining('/x/cache/engram/engram/0.1.0') });
  });

  it('reports a disabled plugin and a missing one as degraded with a fix', () => {
    const home = tempDir();
    claudeInstall(home, false);
    expect(checkClaude(envFor(home))).toMatchObject({ status: 'degraded', fix: 'claude plugin enable engram@engram' });
    const bare = tempDir();
    mkdirSync(join(bare, '.claude'));
    expect(checkClaude(envFor(bare)).status).toBe('degraded');
    expect(checkClaude(envFor(tempDir())).status).toBe('skipped');
  });

  it('follows CLAUDE_CONFIG_DIR', () => {
    const home = tempDir();
    const config = join(home, 'elsewhere');
    claudeInstall(home, true);
    expect(checkClaude(envFor(home, { CLAUDE_CONFIG_DIR: config })).status).toBe('skipped');
  });
});

describe('checkCodex', () => {
  it('reports ok only when every Engram hook is trusted', () => {
    const home = tempDir();
    expect(CODEX_HOOK_EVENTS).toEqual(['session_start', 'user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'stop', 'session_end']);
    codexConfig(home, [...CODEX_HOOK_EVENTS]);
    expect(checkCodex(envFor(home))).toMatchObject({ status: 'ok', detail: 'engram@engram enabled, 6 hooks trusted' });
  });

  it('reports untrusted hooks as degraded: Codex skips them silently', () => {
    const home = tempDir();
    codexConfig(home, ['session_start']);
    expect(checkCodex(envFor(home))).toMatchObject({
      status: 'degraded',
      detail: expect.stringContaining('only 1 of 6'),
      fix: expect.stringContaining('engram hooks trust --agent codex'),
    });
  });

  it('reads config.toml with a TOML parser: any equivalent spelling of the tables counts', () => {
    const home = tempDir();
    mkdirSync(join(home, '.codex'));
    const trust = CODEX_HOOK_EVENTS.map((event) => `"engram@engram:hooks/codex-hooks.json:${event}:0:0" = { trusted_hash = "sha256:aa" }`).join('\n');
    writeFileSync(join(home, '.codex', 'config.toml'), `plugins."engram@engram".enabled = true\n\n[hooks.state]\n${trust}\n`);
    expect(checkCodex(envFor(home))).toMatchObject({ status: 'ok', detail: 'engram@engram enabled, 6 hooks trusted' });
    writeFileSync(join(home, '.codex', 'config.toml'), 'model = \n');
    expect(checkCodex(envFor(home))).toMatchObject({ status: 'degraded', detail: expect.stringContaining('is not valid TOML') });
  });

  it('reports a disabled plugin, and Codex hooks turned off', () => {
    const home = tempDir();
    mkdirSync(join(home, '.codex'));
    writeFileSync(join(home, '.codex', 'config.toml'), '[plugins."engram@engram"]\nenabled = false\n');
    expect(checkCodex(envFor(home))).toMatchObject({ status: 'degraded', detail: expect.stringContaining('installed but disabled') });
    codexConfig(home, [...CODEX_HOOK_EVENTS]);
    writeFileSync(join(home, '.codex', 'config.toml'), `[features]\nhooks = false\n\n${readFileText(join(home, '.codex', 'config.toml'))}`);
    expect(checkCodex(envFor(home))).toMatchObject({ status: 'degraded', detail: expect.stringContaining('turned off') });
  });

  it('reports a missing plugin as degraded and no Codex at all as skipped', () => {
    const home = tempDir();
    mkdirSync(join(home, '.codex'));
    writeFileSync(join(home, '.codex', 'config.toml'), 'model = "gpt-5.5"\n');
    expect(checkCodex(envFor(home)).status).toBe('degraded');
    expect(checkCodex(envFor(tempDir())).status).toBe('skipped');
  });
});

/** A fake install folder: all a settings hook needs is `<root>/hooks/run.sh` and the `run.cjs` it runs. */
function fakeInstall(): string {
  const root = realpathSync(tempDir('engram-root-'));
  mkdirSync(join(root, 'hooks'));
  writeFileSync(join(root, 'hooks', 'run.cjs'), '');
  writeFileSync(join(root, 'hooks', 'run.sh'), '');
  return root;
}

describe('settings-file hooks (engram hooks install)', () => {
  it('count as registered for Claude Code, and are ok when they run this install', async () => {
    const home = tempDir();
    const root = fakeInstall();
    await installHooks({ agent: 'claude', env: envFor(home), cwd: home, installRoot: root });
    expect(checkClaude(envFor(home), { installRoot: root })).toMatchObject({
      status: 'ok',
      detail: `7 hooks in ${join(home, '.claude', 'settings.json')}`,
    });
  });

  it('are stale when they run another install folder, or one that is gone', async () => {
    const home = tempDir();
    const old = fakeInstall();
    await installHooks({ agent: 'claude', env: envFor(home), cwd: home, installRoot: old });
    const current = fakeInstall();
    expect(checkClaude(envFor(home), { installRoot: current })).toMatchObject({
      status: 'degraded',
      detail: expect.stringContaining(`runs Engram from ${old}, not from this install (${current})`),
      fix: 'engram hooks install --agent claude --scope user',
    });
    rmSync(old, { recursive: true });
    expect(checkClaude(envFor(home), { installRoot: current })).toMatchObject({ status: 'degraded', detail: expect.stringContaining('which no longer exists') });
  });

  it('with the plugin also enabled, are reported as double: every event would run twice', async () => {
    const home = tempDir();
    claudeInstall(home, true);
    const root = fakeInstall();
    await installHooks({ agent: 'claude', env: envFor(home), cwd: home, installRoot: root });
    const check = checkClaude(envFor(home), { installRoot: root });
    expect(check).toMatchObject({ status: 'degraded', detail: expect.stringContaining('registered twice') });
    expect(check.fix).toContain('engram hooks uninstall --agent claude --scope user');
  });

  it('are found in the project settings when doctor runs inside a repository', async () => {
    const home = tempDir();
    const repo = join(home, 'repo');
    mkdirSync(join(repo, '.git'), { recursive: true });
    const root = fakeInstall();
    await installHooks({ agent: 'claude', env: envFor(home), cwd: repo, installRoot: root, scope: 'local' });
    expect(checkClaude(envFor(home), { installRoot: root })).toMatchObject({ status: 'skipped' });
    expect(checkClaude(envFor(home), { installRoot: root, cwd: repo })).toMatchObject({ status: 'ok', detail: expect.stringContaining('settings.local.json') });
  });

  it('for Codex, are untrusted until config.toml records their trust, and then ok', async () => {
    const home = tempDir();
    const root = fakeInstall();
    const env = envFor(home);
    const result = await installHooks({ agent: 'codex', env, cwd: home, installRoot: root });
    // No config.toml yet: Codex never trusted anything.
    expect(checkCodex(env, { installRoot: root })).toMatchObject({ status: 'degraded', detail: expect.stringContaining('only 0 of 6') });
    const trust = CODEX_HOOK_EVENTS.map((event) => `[hooks.state."${result.file}:${event}:0:0"]\ntrusted_hash = "sha256:aa"\n`).join('\n');
    writeFileSync(join(home, '.codex', 'config.toml'), trust);
    expect(checkCodex(env, { installRoot: root })).toMatchObject({ status: 'ok', detail: `6 hooks in ${result.file}, 6 hooks trusted` });
  });
});

describe('runDoctor', () => {
  it('reports a healthy install with an empty home as working, degraded only for what is optional', async () => {
    const home = tempDir();
    const report = await runDoctor(envFor(home), { installRoot: ROOT });
    const byName = Object.fromEntries(report.checks.map((check) => [check.name, check.status]));
    expect(byName).toMatchObject({ node: 'ok', config: 'ok', home: 'ok', sqlite: 'ok', sqlite_vec: 'ok', store: 'ok', install: 'ok', hook_errors: 'ok' });
    // USE lite ships with the install, so a fresh home has a working embedder and nothing to embed yet.
    expect(byName.embeddings).toBe('ok');
    // No Claude Code or Codex configuration on this machine: nothing to check.
    expect(byName).toMatchObject({ claude: 'skipped', codex: 'skipped' });
    expect(report.status).toBe('ok');
  });

  it.skipIf(!hasModels('static-use-256'))('loads the embedder and embeds one string: a model that resolves but does not load is not healthy', async () => {
    const home = tempDir();
    // A model folder with every file transformers.js looks for, but an ONNX graph that is not one (a damaged download).
    const models = tempDir();
    cpSync(join(MODELS_DIR, 'static-use-256'), join(models, 'broken'), { recursive: true, dereference: true });
    writeFileSync(join(models, 'broken', 'onnx', 'model_quantized.onnx'), 'not an onnx graph');
    const env = readEnv({ HOME: home, ENGRAM_MODEL_DIR: models, ENGRAM_MODEL: 'broken' });
    const broken = (await runDoctor(env, { installRoot: ROOT })).checks.find((c) => c.name === 'embeddings');
    expect(broken).toMatchObject({ status: 'degraded', detail: expect.stringMatching(/transformers:broken \(.*\) does not work: .+; search uses BM25 only/), fix: 'engram model pull broken' });
  });

  it.skipIf(!hasModels('static-use-256'))('gives up on an embedder that does not load and embed in time, and says so', async () => {
    const home = tempDir();
    // A model this process never loaded (models are cached per folder): reading it takes longer than 1 ms.
    const models = tempDir();
    cpSync(join(MODELS_DIR, 'static-use-256'), join(models, 'fresh'), { recursive: true, dereference: true });
    const env = readEnv({ HOME: home, ENGRAM_MODEL_DIR: models, ENGRAM_MODEL: 'fresh' });
    const slow = (await runDoctor(env, { installRoot: ROOT, embedTimeoutMs: 1 })).checks.find((c) => c.name === 'embeddings');
    expect(slow).toMatchObject({ status: 'degraded', detail: expect.stringContaining('loading transformers:fresh and embedding one string took longer than 0 s') });
    // The load doctor stopped waiting for goes on; let it finish before the test process may be torn down (the ONNX
    // runtime does not survive its process exiting in the middle of creating a session).
    const spec = resolveEmbedder(loadSettings(env)).spec;
    if (spec) await loadEmbedder(spec).catch(() => {});
  });

  it.skipIf(!hasModels('static-use-256'))('says a working model loads and embeds, with its dimension', async () => {
    const home = tempDir();
    const env = readEnv({ HOME: home, ENGRAM_MODEL_DIR: MODELS_DIR, ENGRAM_MODEL: 'static-use-256' });
    const check = (await runDoctor(env, { installRoot: ROOT })).checks.find((c) => c.name === 'embeddings');
    expect(check).toMatchObject({ status: 'ok', detail: expect.stringMatching(/static-use-256 \(.*\) loads and embeds \(256 dimensions, \d+ ms\); quality: .*; no engrams to embed yet/) });
  });

  it('says when search is BM25 only, and when engrams lack vectors', async () => {
    const home = tempDir();
    const none = await runDoctor(readEnv({ HOME: home, ENGRAM_EMBEDDER: 'none' }), { installRoot: ROOT });
    expect(none.checks.find((check) => check.name === 'embeddings')).toMatchObject({
      status: 'degraded',
      detail: expect.stringContaining('search uses BM25 only'),
    });
    const env = readEnv({ HOME: home, ENGRAM_EMBEDDER: 'test' });
    const store = openStore({ path: join(env.home, 'engram.db') });
    addEngram(store, { text: 'A lesson without a vector yet.' });
    let check = (await runDoctor(env, { installRoot: ROOT })).checks.find((c) => c.name === 'embeddings');
    expect(check).toMatchObject({ status: 'degraded', fix: 'engram reindex', detail: expect.stringContaining('1 of 1 engrams have no current vector') });
    await embedPending(store, createHashingEmbedder());
    store.close();
    check = (await runDoctor(env, { installRoot: ROOT })).checks.find((c) => c.name === 'embeddings');
    expect(check).toMatchObject({ status: 'ok', detail: expect.stringContaining('all 1 engrams have vectors') });
  });

  it('checks the agents against this install folder', async () => {
    const home = tempDir();
    await installHooks({ agent: 'claude', env: envFor(home), cwd: home, installRoot: fakeInstall() });
    const claude = (await runDoctor(envFor(home), { installRoot: ROOT })).checks.find((check) => check.name === 'claude');
    expect(claude).toMatchObject({ status: 'degraded', detail: expect.stringContaining(`not from this install (${ROOT})`) });
  });

  it('reports a broken config as an error and stops there', async () => {
    const home = tempDir();
    mkdirSync(join(home, '.engram'));
    writeFileSync(join(home, '.engram', 'config.json'), '{');
    const report = await runDoctor(envFor(home), { installRoot: ROOT });
    expect(report.status).toBe('error');
    expect(report.checks.map((check) => check.name)).toEqual(['node', 'config']);
  });

  it('reports an install folder without its native addon and bundles as an error with the fix', async () => {
    const home = tempDir();
    // A source checkout part-way through ./install.sh (its own node_modules/, no addon, no dist/).
    const checkout = tempDir();
    mkdirSync(join(checkout, 'node_modules'));
    writeFileSync(join(checkout, 'install.sh'), '#!/bin/sh\n');
    const install = (await runDoctor(envFor(home), { installRoot: checkout })).checks.find((check) => check.name === 'install');
    expect(install).toMatchObject({ status: 'error', fix: expect.stringContaining('install.sh') });
    expect(install?.detail).toContain('node_modules/better-sqlite3');
    // A plugin folder whose runtime was never built.
    const plugin = pluginFolder();
    const bare = (await runDoctor(envFor(home), { installRoot: plugin })).checks.find((check) => check.name === 'install');
    expect(bare).toMatchObject({ status: 'error', fix: expect.stringContaining(join(plugin, 'scripts', 'bootstrap.mjs')) });
    expect(bare?.detail).toContain('(dependencies, native addon and bundles)');
  });

  it('surfaces hook errors from the last day, which hooks never show the agent', async () => {
    const home = tempDir();
    const logs = join(home, '.engram', 'logs');
    mkdirSync(logs, { recursive: true });
    const now = new Date('2026-11-22T12:00:00Z');
    writeFileSync(
      join(logs, 'hooks.log'),
      [
        { t: '2026-11-20T12:00:00.000Z', level: 'error', msg: 'hook failed', error: { message: 'old' } },
        { t: '2026-11-22T11:00:00.000Z', level: 'warn', msg: 'stdin is not JSON; ignored' },
        { t: '2026-11-22T11:30:00.000Z', level: 'error', msg: 'hook failed', error: { message: 'store is locked' } },
      ].map((entry) => JSON.stringify(entry)).join('\n'),
    );
    const check = (await runDoctor(envFor(home), { installRoot: ROOT, now: () => now })).checks.find((c) => c.name === 'hook_errors');
    expect(check).toMatchObject({ status: 'degraded', detail: expect.stringContaining('1 hook error(s) in the last 24 h; last: store is locked') });
  });

  it('opens (and so migrates) the store it checks', async () => {
    const home = tempDir();
    await runDoctor(envFor(home), { installRoot: ROOT });
    const store = openStore({ path: join(home, '.engram', 'engram.db'), readonly: true });
    expect(store.migration.to).toBe(SCHEMA_VERSION);
    store.close();
  });
});
