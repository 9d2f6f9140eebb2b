/**
 * The fold agent is a real agent CLI. Claude Code (2.1.197, offline against ../shared/tools/fake-anthropic): `engram docs
 * init --from-today` runs `claude -p --allowedTools Read Edit` through the LLM client's command mode with the fold
 * prompt on stdin; the scripted model reads the chunk input and the registry and adds the seed entry with Claude
 * Code's own Edit tool. The linter accepts it, the briefing is written, and the fold session's own transcript is
 * never fed back into the docs by `engram run`. Codex (0.169.0, against ../shared/tools/fake-openai) does the same
 * with `codex exec --sandbox workspace-write -` and its apply_patch tool.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, SHARED, tempDir } from '../_helpers.js';
import { requestLog, RUN_CLAUDE, RUN_CODEX } from './_agents.js';

const VERSION = '2.1.197';
const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), `engram-test-claude-${VERSION}`);
const CLAUDE = process.env.CLAUDE_BIN ?? join(CACHE, 'node_modules', '.bin', 'claude');
const SERVER = join(SHARED, 'tools', 'fake-anthropic', 'server.mjs');
const CODEX_VERSION = '0.169.0';
const CODEX_CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), `engram-test-codex-${CODEX_VERSION}`);
const CODEX = process.env.CODEX_BIN ?? join(CODEX_CACHE, 'node_modules', '.bin', 'codex');
const CODEX_SERVER = join(SHARED, 'tools', 'fake-openai', 'server.mjs');

/** The same pinned install run-claude.sh does. */
function ensureClaude(): void {
  if (existsSync(CLAUDE)) return;
  mkdirSync(CACHE, { recursive: true });
  execFileSync('npm', ['init', '-y'], { cwd: CACHE, stdio: 'ignore' });
  execFileSync('npm', ['install', '--no-audit', '--no-fund', `@anthropic-ai/claude-code@${VERSION}`], { cwd: CACHE, stdio: 'ignore' });
}

let server: ChildProcess | undefined;
afterEach(() => {
  if (server && server.exitCode === null) server.kill('SIGKILL');
});

/** Starts the scripted model; resolves with its port. */
async function startModel(script: string, log: string, portFile: string, file = SERVER): Promise<number> {
  server = spawn(process.execPath, [file, '--script', script, '--log', log, '--port-file', portFile], { stdio: 'ignore' });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (existsSync(portFile) && readFileSync(portFile, 'utf8').trim()) return Number(readFileSync(portFile, 'utf8'));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the fake model server did not start');
}

describe.skipIf(!existsSync(RUN_CLAUDE))('the fold agent is the real Claude Code', () => {
  it('edits the docs through its own file tools, and the result lints and reaches the briefing', { timeout: 300_000 }, async () => {
    ensureClaude();
    const work = realpathSync(tempDir('engram-kc-'));
    const root = join(work, 'shop');
    const home = join(work, 'home');
    mkdirSync(join(root, 'src'), { recursive: true });
    mkdirSync(home);
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: root, encoding: 'utf8' });
    git('init', '-q');
    writeFileSync(join(root, 'src', 'retry.ts'), 'export function retry<T>(fn: () => T, times = 3): T {\n  return fn();\n}\n');
    writeFileSync(join(root, 'CLAUDE.md'), '# Shop\n\nTeam notes.\n');
    git('add', '-A');
    git('commit', '-qm', 'add the retry helper');

    const env = {
      PATH: process.env.PATH ?? '',
      // The HTTP API on any free port: tests run side by side, and 7437 may be taken.
      ENGRAM_PORT: '0',
      HOME: home,
      ENGRAM_HOME: join(home, '.engram'),
      ENGRAM_EMBEDDER: 'none',
      ANTHROPIC_API_KEY: 'sk-ant-offline-test',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    };
    const engram = (args: string[], extra: Record<string, string> = {}) =>
      spawnSync(process.execPath, [join(ROOT, 'bin', 'engram'), ...args], { cwd: root, env: { ...env, ...extra }, encoding: 'utf8', timeout: 280_000 });
    expect(engram(['docs', 'init']).status).toBe(0);
    const configFile = join(root, '.engram', 'config.yaml');
    writeFileSync(configFile, readFileSync(configFile, 'utf8').replace(/^ {2}command: .*$/m, `  command: [${JSON.stringify(CLAUDE)}, -p, --allowedTools, Read, Edit]`));

    const registry = join(root, 'docs', 'decisions', 'concept_registry.md');
    const chunk = join(root, '.engram', 'fold', 'chunk_001_input.md');
    const anchor = 'Maintained by `engram run`.';
    const entry = '## C001: retry (ACTIVE)\n- **Code:** `src/retry.ts`, `retry()`\n- **Rationale:** documented — one place for retries';
    const script = join(work, 'turns.json');
    writeFileSync(
      script,
      JSON.stringify([
        { text: 'Reading the chunk.', tool: 'Read', input: { file_path: chunk } },
        { tool: 'Read', input: { file_path: registry } },
        { text: 'Adding the concept with the reserved id.', tool: 'Edit', input: { file_path: registry, old_string: anchor, new_string: `${anchor}\n\n${entry}` } },
        { text: 'done' },
      ]),
    );
    const log = join(work, 'requests.jsonl');
    const port = await startModel(script, log, join(work, 'port'));

    const init = engram(['docs', 'init', '--from-today'], { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` });
    expect(init.status, init.stderr).toBe(0);
    expect(JSON.parse(init.stdout)).toMatchObject({ mode: 'today', seed: { id: 1, state: 'committed' } });
    expect(init.stderr).toContain('chunk 001 (seed): committed; briefing written');

    // What the model was sent: the fold prompt on stdin, and the chunk input read through Claude Code's Read tool.
    const requests = requestLog(log).filter((request) => request.path.startsWith('/v1/messages'));
    const sent = JSON.stringify(requests.map((request) => request.body));
    expect(sent).toContain('[engram-fold chunk 1] Read the file .engram/fold/chunk_001_input.md');
    expect(sent).toContain('## New ID assignments for this chunk');
    expect(readFileSync(registry, 'utf8')).toContain(`${anchor}\n\n${entry}`);
    expect(JSON.parse(engram(['docs', 'lint']).stdout)).toMatchObject({ ok: true });
    expect(readFileSync(join(root, 'CLAUDE.md'), 'utf8')).toMatch(/^# Shop\n\nTeam notes\.\n\n## Project Knowledge Briefing\n<!-- engram:briefing:begin[^\n]*\n[\s\S]*- C001 retry — `src\/retry\.ts`, `retry\(\)`\n[\s\S]*<!-- engram:briefing:end -->\n$/);

    // Claude Code wrote a transcript of the fold session in this project's folder; engram run never folds it back.
    const projects = join(home, '.claude', 'projects');
    const folder = readdirSync(projects).find((name) => name === root.replace(/[^A-Za-z0-9]/g, '-'));
    expect(folder).toBeDefined();
    expect(readdirSync(join(projects, folder!)).some((name) => name.endsWith('.jsonl'))).toBe(true);
    const run = engram(['run', '--once']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('"reason":"empty"');
    expect(JSON.parse(engram(['docs', 'status']).stdout).buffer.items).toBe(0);
  });
});

/** The same pinned install run-codex.sh does. */
function ensureCodex(): void {
  if (existsSync(CODEX)) return;
  mkdirSync(CODEX_CACHE, { recursive: true });
  execFileSync('npm', ['init', '-y'], { cwd: CODEX_CACHE, stdio: 'ignore' });
  execFileSync('npm', ['install', '--no-audit', '--no-fund', `@openai/codex@${CODEX_VERSION}`], { cwd: CODEX_CACHE, stdio: 'ignore' });
}

describe.skipIf(!existsSync(RUN_CODEX))('the fold agent is the real Codex', () => {
  it('edits the docs with apply_patch under codex exec, and the result lints and reaches the briefing', { timeout: 300_000 }, async () => {
    ensureCodex();
    const work = realpathSync(tempDir('engram-kx-'));
    const root = join(work, 'shop');
    const home = join(work, 'home');
    mkdirSync(join(root, 'src'), { recursive: true });
    mkdirSync(join(home, '.codex'), { recursive: true });
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: root, encoding: 'utf8' });
    git('init', '-q');
    writeFileSync(join(root, 'src', 'retry.ts'), 'export function retry<T>(fn: () => T): T {\n  return fn();\n}\n');
    writeFileSync(join(root, 'AGENTS.md'), '# Shop\n');
    git('add', '-A');
    git('commit', '-qm', 'add the retry helper');
    const env = { PATH: process.env.PATH ?? '', ENGRAM_PORT: '0', HOME: home, CODEX_HOME: join(home, '.codex'), ENGRAM_HOME: join(home, '.engram'), ENGRAM_EMBEDDER: 'none', FAKE_OPENAI_API_KEY: 'sk-fake-offline-test' };
    const engram = (args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin', 'engram'), ...args], { cwd: root, env, encoding: 'utf8', timeout: 280_000 });
    expect(engram(['docs', 'init']).status).toBe(0);
    const configFile = join(root, '.engram', 'config.yaml');
    writeFileSync(
      configFile,
      readFileSync(configFile, 'utf8')
        .replace(/^ {2}command: .*$/m, `  command: [${JSON.stringify(CODEX)}, exec, --skip-git-repo-check, --sandbox, workspace-write, -m, "{model}", "-"]`)
        .replace('file: CLAUDE.md', 'file: AGENTS.md')
        .replace('model: sonnet', 'model: gpt-5.5'),
    );
    const line = readFileSync(join(root, 'docs', 'decisions', 'concept_registry.md'), 'utf8').split('\n')[2]!;
    const patch = `*** Begin Patch\n*** Update File: docs/decisions/concept_registry.md\n@@\n ${line}\n+\n+## C001: retry (ACTIVE)\n+- **Code:** \`src/retry.ts\`\n*** End Patch\n`;
    const script = join(work, 'turns.json');
    writeFileSync(script, JSON.stringify([{ text: 'Adding the concept with the reserved id.', patch }, { text: 'done' }]));
    const log = join(work, 'requests.jsonl');
    const port = await startModel(script, log, join(work, 'port'), CODEX_SERVER);
    writeFileSync(
      join(home, '.codex', 'config.toml'),
      [
        'model = "gpt-5.5"',
        'model_provider = "fake-openai"',
        'check_for_update_on_startup = false',
        'analytics.enabled = false',
        'model_providers.fake-openai.name = "Fake OpenAI (scripted)"',
        `model_providers.fake-openai.base_url = "http://127.0.0.1:${port}/v1"`,
        'model_providers.fake-openai.wire_api = "responses"',
        'model_providers.fake-openai.env_key = "FAKE_OPENAI_API_KEY"',
        'model_providers.fake-openai.request_max_retries = 0',
        'model_providers.fake-openai.stream_max_retries = 0',
        '',
      ].join('\n'),
    );

    const init = engram(['docs', 'init', '--from-today']);
    expect(init.status, init.stderr).toBe(0);
    expect(JSON.parse(init.stdout)).toMatchObject({ mode: 'today', seed: { id: 1, state: 'committed' } });
    const sent = JSON.stringify(requestLog(log).map((request) => request.body));
    expect(sent).toContain('[engram-fold chunk 1] Read the file .engram/fold/chunk_001_input.md');
    expect(readFileSync(join(root, 'docs', 'decisions', 'concept_registry.md'), 'utf8')).toContain('## C001: retry (ACTIVE)\n- **Code:** `src/retry.ts`');
    expect(JSON.parse(engram(['docs', 'lint']).stdout)).toMatchObject({ ok: true });
    expect(readFileSync(join(root, 'AGENTS.md'), 'utf8')).toMatch(/^# Shop\n\n## Project Knowledge Briefing\n<!-- engram:briefing:begin[\s\S]*- C001 retry — `src\/retry\.ts`\n[\s\S]*<!-- engram:briefing:end -->\n$/);
  });
});
