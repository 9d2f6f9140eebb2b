/**
 * The install users do, with the real Claude Code CLI (2.1.197, offline against ../shared/tools/fake-anthropic):
 * `claude plugin marketplace add <clean clone>` and `claude plugin install engram@engram` in a scratch HOME. The
 * plugin arrives without a built native module or dist/ (Claude Code at most runs `npm ci --ignore-scripts`); the
 * first session's hooks start the bootstrap in the background and stay silent, and the next sessions' hooks work.
 * With a folder marketplace Claude Code runs the hooks from the folder itself (the clone) and keeps a copy in its
 * plugin cache: the bootstrap builds in Claude Code's plugin data folder, neither folder changes by a byte, the
 * cache copy's `engram` waits for the hooks' bootstrap instead of starting its own, and the first session (which the
 * hooks never saw) is recorded when the second one ends.
 *
 * One install (it compiles better-sqlite3, a minute or two) serves both tests:
 * - the install itself: the next session's records reach the store, no hook reports an error;
 * - recall (all seven hooks): a session about a topic engrams cover shows them to the model — the pinned one at
 *   SessionStart, the one the prompt is about at UserPromptSubmit, the one about `git status --ignored` at PreToolUse — and
 *   the store records the session, the prompt, what was shown, the tool calls (PostToolUse, PostToolUseFailure) and
 *   the SessionEnd job; an unrelated prompt injects nothing.
 * The hooks run as by default, with the background server on; after every session it is stopped, and nothing of the
 * scratch home (no server, no hook, no bootstrap step) is left running.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { bootstrapFiles } from '../../scripts/install-state.mjs';
import { CLAUDE_BIN as CLAUDE, folderDigest, processEnv, until } from '../_helpers.js';
import { cleanClone, engramLine, expectNothingLeft, killLeftovers, logProblems, requestLog, RUN_CLAUDE, seedEngrams, shellFrontEvents, TOPIC } from './_agents.js';

/**
 * How Claude Code 2.1.197 records a hook that went wrong: a `hook_non_blocking_error` attachment ("Failed with
 * non-blocking status code: …") for a non-zero exit, `hook_blocking_error` / a tool result "<Event>:<Tool> hook
 * error: …" for exit 2, `hook_cancelled` (timedOut) for a timeout. A failing SessionEnd hook only reaches the
 * CLI's output ("SessionEnd hook [...] failed: …"), and an async hook's outcome is recorded nowhere.
 */
const HOOK_TROUBLE = /hook_(non_)?blocking_error|hook_cancelled|hook error|non-blocking status code/i;

/** All strings inside a value (a request body), joined: what the model was sent, whatever the message layout. */
function texts(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(texts).join('\n');
  if (value && typeof value === 'object') return Object.values(value).map(texts).join('\n');
  return '';
}

/** A transcript's lines, parsed. */
const transcriptLines = (file: string): Array<Record<string, any>> =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

/** The `hook_additional_context` attachments of a transcript: which event added what. */
function addedContext(file: string): Array<{ event: string; text: string }> {
  return transcriptLines(file)
    .filter((line) => line.type === 'attachment' && line.attachment?.type === 'hook_additional_context')
    .map((line) => ({ event: String(line.attachment.hookEvent), text: [line.attachment.content].flat().join('\n') }));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The last lines of the server and hook logs, for an assertion's message. */
function lastLogLines(engramHome: string): string {
  return ['server.log', 'hooks.log']
    .map((name) => {
      try {
        return `${name}:\n${readFileSync(join(engramHome, 'logs', name), 'utf8').split('\n').slice(-25).join('\n')}`;
      } catch {
        return `${name}: (none)`;
      }
    })
    .join('\n');
}

/** Waits for the server to run the session's SessionEnd job, and returns it. */
async function sessionEndJob(store: Store, sessionId: string) {
  const deadline = Date.now() + 20_000;
  while (store.jobs.get('session-end', sessionId)?.status !== 'done' && Date.now() < deadline) await sleep(200);
  return store.jobs.get('session-end', sessionId);
}

describe.skipIf(!existsSync(RUN_CLAUDE))('a marketplace install in the real Claude Code CLI', () => {
  let work = '';
  let clone = '';
  let home = '';
  let project = '';
  let engramHome = '';
  let env: Record<string, string> = {};
  let first = { transcript: '', id: '' };
  let cacheCopy = '';
  let digests: { clone: Record<string, string>; cache: Record<string, string> } = { clone: {}, cache: {} };
  const runs: string[] = [];

  /** One `claude -p` session in the project through run-claude.sh; returns its report. */
  const session = (prompt: string, turns: unknown[], allowed = 'Read'): { transcript: string; requests: string; output: string; id: string } => {
    const script = join(work, `turns-${runs.length}.json`);
    writeFileSync(script, JSON.stringify(turns));
    const result = spawnSync('bash', [RUN_CLAUDE, '--script', script, '--cwd', project, '--home', home, '--prompt', prompt, '--allowed', allowed], {
      env,
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(result.status, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { exit: number; transcript: string; requests: string; output: string };
    runs.push(dirname(report.requests));
    expect(report.exit, readFileSync(report.output, 'utf8')).toBe(0);
    return { ...report, id: report.transcript.split('/').at(-1)?.replace('.jsonl', '') as string };
  };

  // Clean clone, marketplace add, install, then the first session, whose hooks bootstrap the install.
  beforeAll(async () => {
    // Not tempDir(): that folder is removed after each test, and this install serves both.
    work = realpathSync(mkdtempSync(join(tmpdir(), 'engram-install-')));
    clone = join(work, 'engram');
    home = join(work, 'home');
    project = join(work, 'shop');
    engramHome = join(home, '.engram');
    mkdirSync(home);
    mkdirSync(project);
    cleanClone(clone);
    const cloneDigest = folderDigest(clone);
    execFileSync('git', ['init', '-q'], { cwd: project });
    writeFileSync(join(project, 'README.md'), '# shop\n');

    // Scratch HOME for Claude Code and Engram; npm reuses the machine's package cache so the test does not
    // download the dependencies again (the native build still happens, as it would for a user).
    env = processEnv({ HOME: home, CLAUDE_BIN: CLAUDE });
    const claude = (...args: string[]) => spawnSync(CLAUDE, args, { cwd: work, env, encoding: 'utf8', timeout: 180_000 });
    const added = claude('plugin', 'marketplace', 'add', clone);
    expect(added.stdout + added.stderr).toContain('Successfully added marketplace: engram');
    const installed = claude('plugin', 'install', 'engram@engram');
    expect(installed.stdout + installed.stderr).toContain('Successfully installed plugin: engram@engram');
    cacheCopy = (JSON.parse(readFileSync(join(home, '.claude', 'plugins', 'installed_plugins.json'), 'utf8')) as {
      plugins: Record<string, Array<{ installPath: string }>>;
    }).plugins['engram@engram']?.[0]?.installPath as string;
    digests = { clone: cloneDigest, cache: folderDigest(cacheCopy) };

    // First session: the install is not ready; hooks start the bootstrap and stay out of the way.
    first = session('first session: remember the blue widget', [{ text: 'Noted.' }]);
    const files = bootstrapFiles(clone, engramHome);
    // The hooks started it detached; on a loaded machine its process may not have written its state yet.
    await until(() => existsSync(files.state), 'the bootstrap to record its state', 120_000);
    expect(JSON.parse(readFileSync(files.state, 'utf8'))).toMatchObject({ status: 'running', root: clone });

    // Meanwhile the plugin cache's own `engram` (same version and lockfile) waits for that bootstrap rather than
    // starting a second one, then answers from the runtime it built.
    const status = spawnSync(process.execPath, [join(cacheCopy, 'bin', 'engram'), 'status'], { cwd: project, env, encoding: 'utf8', timeout: 8 * 60_000 });
    const bootstrapLog = () => readFileSync(files.log, 'utf8').slice(-3000);
    expect(status.status, `${status.stderr}\n${bootstrapLog()}`).toBe(0);
    expect(status.stderr).toContain('another bootstrap is running for this version; waiting for it');
    const state = JSON.parse(readFileSync(files.state, 'utf8')) as { status?: string; steps?: string[]; runtime?: string };
    expect(state, bootstrapLog()).toMatchObject({ status: 'done', runtime: join(home, '.claude', 'plugins', 'data', 'engram-engram', 'runtime', files.key) });
    expect(state.steps).toEqual(['npm ci', 'build', 'npm prune --omit=dev']);
    expect(JSON.parse(status.stdout).install).toMatchObject({ root: cacheCopy, runtime: state.runtime, kind: 'runtime', bootstraps: [], notes: [] });
    // Neither the folder the hooks run from nor the plugin cache's copy changed by a byte.
    expect(folderDigest(clone)).toEqual(digests.clone);
    expect(folderDigest(cacheCopy)).toEqual(digests.cache);
    // The bootstrap ran in the background and is over; the silent hooks started no server.
    expect(existsSync(join(engramHome, 'run', 'server.json'))).toBe(false);
    await expectNothingLeft(home);
  }, 600_000);

  // Removing the install (a runtime with its node_modules, the clone, the plugin cache) takes more than vitest's
  // default 60 s on a machine at load 9.
  afterAll(() => {
    if (home) killLeftovers(home);
    for (const dir of runs) rmSync(dir, { recursive: true, force: true });
    if (work) rmSync(work, { recursive: true, force: true });
  }, 300_000);

  it('installs, bootstraps on first use, and the next session’s hooks record it, and the first one too', async () => {
    expect(first.transcript).not.toBe('');
    // Second session: the hooks work.
    const second = session('second session: the deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789', [{ text: 'Noted.' }]);
    const store = openStore({ path: join(engramHome, 'engram.db'), readonly: true });
    try {
      expect(store.sessions.get(second.id)).toMatchObject({ agent: 'claude', project: 'shop', cwd: project, start_source: 'startup', turns: 1, end_reason: 'other' });
      expect(store.sessions.prompts(second.id).map((p) => p.content)).toEqual([
        'second session: the deploy token is [REDACTED:github-token]',
      ]);
      expect(await sessionEndJob(store, second.id)).toMatchObject({ status: 'done', error: null });
      // The first session, whose hooks stayed silent during the bootstrap, was recorded by that job.
      expect(await sessionEndJob(store, first.id)).toMatchObject({ status: 'done', error: null, payload: { caught_up: true } });
      expect(store.sessions.get(first.id)).toMatchObject({ agent: 'claude', project: 'shop', start_source: 'caught-up', transcript_path: first.transcript });
      expect(store.sessions.prompts(first.id).map((p) => p.content)).toEqual(['first session: remember the blue widget']);
    } finally {
      store.close();
    }

    for (const transcript of [first.transcript, second.transcript]) {
      expect(readFileSync(transcript, 'utf8')).not.toMatch(HOOK_TROUBLE);
    }
    expect(readFileSync(second.output, 'utf8')).not.toMatch(/hook.*failed/i);
    // The hooks log what they did (info); nothing went wrong enough to warn.
    expect(logProblems(engramHome)).toEqual([]);
    await expectNothingLeft(home);

    // The installed CLI agrees: the plugin is registered and working.
    const doctor = spawnSync(process.execPath, [join(clone, 'bin', 'engram'), 'doctor'], { env, encoding: 'utf8' });
    const checks = Object.fromEntries(
      (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string }> }).checks.map((c) => [c.name, c.status]),
    );
    expect(checks).toMatchObject({ claude: 'ok', install: 'ok', store: 'ok', sqlite: 'ok', hook_errors: 'ok' });
    await expectNothingLeft(home);
    expect(folderDigest(clone)).toEqual(digests.clone);
    expect(folderDigest(cacheCopy)).toEqual(digests.cache);
  }, 600_000);

  it('recalls what a session is about through all seven hooks, records it, and says nothing off topic', async () => {
    const { push, status, pinned } = TOPIC.engrams;
    const [pushId, statusId, pinnedId] = seedEngrams(home, [push, status, pinned]) as [number, number, number];

    // A session on the topic: `git status --ignored` (PreToolUse shows the engram about it; async PostToolUse records it),
    // a Read, then a command that fails (PostToolUseFailure), then the answer. The failing call comes last on
    // purpose: its hook runs synchronously, which gives the Read's async PostToolUse time to finish — Claude Code
    // 2.1.197 in -p mode skips SessionEnd hooks when an async hook is still running as the session ends.
    const on = session(
      TOPIC.prompt,
      [
        { text: 'Checking the branch first.', tool: 'Bash', input: { command: 'git status --ignored', description: 'Show the working tree status' } },
        { tool: 'Read', input: { file_path: join(project, 'README.md') } },
        { tool: 'Bash', input: { command: 'git log -1', description: 'Show the last commit' } },
        { text: 'Use git push --force-with-lease on your own branch.' },
      ],
      'Read Bash',
    );

    // What the model was sent: before any tool ran, the pinned engram and the one the prompt is about; by the
    // end, also the one about `git status --ignored`.
    const main = requestLog(on.requests).filter((r) => r.path === '/v1/messages' && Array.isArray(r.body.tools));
    expect(main.length).toBe(4);
    const before = texts(main[0]?.body);
    expect(before).toContain(engramLine(pinnedId, pinned));
    expect(before).toContain(engramLine(pushId, push));
    expect(before).not.toContain(`EG#${statusId} `);
    const last = texts(main.at(-1)?.body);
    // A failure says which hooks added what, and how the server and hooks fared (a hook that answered late, say).
    const why = () => `${JSON.stringify(addedContext(on.transcript))}\n${lastLogLines(engramHome)}`;
    for (const [id, engram] of [[pinnedId, pinned], [pushId, push], [statusId, status]] as const) {
      expect(last, why()).toContain(engramLine(id, engram));
    }
    expect(last).toContain('[ENGRAM] Memories from earlier sessions that may apply to this request');
    expect(last).toContain('[ENGRAM] Memories from earlier sessions about this Bash call');

    // The transcript: each block came from the hook that should give it, and no hook reported trouble.
    const added = addedContext(on.transcript);
    expect(added.map((a) => a.event)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse']);
    expect(added[0]?.text).toContain(engramLine(pinnedId, pinned));
    expect(added[1]?.text).toContain(engramLine(pushId, push));
    expect(added[2]?.text).toContain(engramLine(statusId, status));
    expect(readFileSync(on.transcript, 'utf8')).not.toMatch(HOOK_TROUBLE);
    expect(readFileSync(on.output, 'utf8')).not.toMatch(/hook.*failed/i);

    const store = openStore({ path: join(engramHome, 'engram.db'), readonly: true });
    try {
      expect(store.sessions.get(on.id)).toMatchObject({ agent: 'claude', project: 'shop', cwd: project, start_source: 'startup', turns: 1, end_reason: 'other' });
      expect(store.sessions.prompts(on.id).map((p) => p.content)).toEqual([TOPIC.prompt]);
      expect(store.activity.shown(on.id).map(({ engram_id, event, query }) => ({ engram_id, event, query }))).toEqual([
        { engram_id: pinnedId, event: 'SessionStart', query: null },
        { engram_id: pushId, event: 'UserPromptSubmit', query: TOPIC.prompt },
        { engram_id: statusId, event: 'PreToolUse', query: 'Bash git status --ignored' },
      ]);
      const tools = store.activity.toolEvents(on.id).map(({ tool_name, target, ok, error }) => ({ tool_name, target, ok, error }));
      expect(tools).toHaveLength(3);
      expect(tools).toEqual(
        expect.arrayContaining([
          { tool_name: 'Bash', target: 'git status --ignored', ok: true, error: null },
          { tool_name: 'Read', target: 'README.md', ok: true, error: null },
          { tool_name: 'Bash', target: 'git log -1', ok: false, error: expect.stringContaining('does not have any commits yet') },
        ]),
      );
      expect(await sessionEndJob(store, on.id)).toMatchObject({ kind: 'session-end', session_id: on.id, status: 'done', error: null });
    } finally {
      store.close();
    }
    expect(logProblems(engramHome)).toEqual([]);
    // Claude Code ran the hooks through the shell front, the warm server answering them without a Node process: every
    // event once the server the first hook started was up (a few hundred ms: the prompt's hook may still miss it).
    expect(shellFrontEvents(engramHome), lastLogLines(engramHome)).toEqual(expect.arrayContaining(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'SessionEnd']));
    await expectNothingLeft(home);

    // An unrelated prompt in a new session: the pinned engram at start, nothing for the prompt.
    const off = session(TOPIC.unrelated, [{ text: '4' }]);
    const sent = requestLog(off.requests)
      .filter((r) => r.path === '/v1/messages')
      .map((r) => texts(r.body))
      .join('\n');
    expect(sent).toContain(engramLine(pinnedId, pinned));
    expect(sent).not.toContain(`EG#${pushId} `);
    expect(sent).not.toContain(`EG#${statusId} `);
    expect(sent).not.toContain('may apply to this request');
    expect(addedContext(off.transcript).map((a) => a.event)).toEqual(['SessionStart']);
    expect(readFileSync(off.transcript, 'utf8')).not.toMatch(HOOK_TROUBLE);
    const store2 = openStore({ path: join(engramHome, 'engram.db'), readonly: true });
    try {
      expect(store2.sessions.prompts(off.id).map((p) => p.content)).toEqual([TOPIC.unrelated]);
      expect(store2.activity.shown(off.id).map(({ engram_id, event }) => ({ engram_id, event }))).toEqual([{ engram_id: pinnedId, event: 'SessionStart' }]);
      // The logs' last lines go with a failure: a job that did not finish says why there.
      expect(await sessionEndJob(store2, off.id), lastLogLines(engramHome)).toMatchObject({ status: 'done' });
    } finally {
      store2.close();
    }
    expect(logProblems(engramHome)).toEqual([]);
    await expectNothingLeft(home);
  }, 600_000);
  it("gives the model Engram's MCP tools: it searches, then saves; each result reaches it and the save is in the store", async () => {
    // The plugin's MCP server (plugin.json → .claude-plugin/plugin.json), started by Claude Code through bin/engram.
    const tool = (name: string) => `mcp__plugin_engram_engram__${name}`;
    // The first session ran before the bootstrap finished; engram mcp still connected (with no tools), so Claude Code
    // did not set the server aside (it skips a plugin server that failed to connect for 15 minutes).
    const setAside = join(home, '.claude', 'mcp-needs-auth-cache.json');
    expect(existsSync(setAside) ? JSON.parse(readFileSync(setAside, 'utf8'))['plugin:engram:engram'] : undefined).toBeUndefined();
    const [seeded] = seedEngrams(home, [{ text: 'Release builds need NODE_ENV=production or the bundle keeps its debug asserts.', category: 'build' }]) as [number];
    const run = session(
      'how do release builds work here?',
      [
        { text: 'Checking memory first.', tool: tool('engram_search'), input: { query: 'release build debug asserts' } },
        { tool: tool('mem_save'), input: { title: 'Release flag', content: '**What**: set NODE_ENV=production for release builds', type: 'config' } },
        { text: 'Saved it.' },
      ],
      `${tool('engram_search')} ${tool('mem_save')}`,
    );
    const main = requestLog(run.requests).filter((r) => r.path === '/v1/messages' && Array.isArray(r.body.tools));
    expect(main).toHaveLength(3);
    const offered = main[0]?.body.tools.map((t: { name: string }) => t.name) as string[];
    const mcpLog = () => (existsSync(join(engramHome, 'logs', 'mcp.log')) ? readFileSync(join(engramHome, 'logs', 'mcp.log'), 'utf8') : 'no mcp.log');
    expect(offered, `${mcpLog()}\n${readFileSync(run.output, 'utf8')}`).toEqual(expect.arrayContaining([tool('engram_search'), tool('mem_save'), tool('engram_feedback'), tool('mem_context')]));
    // What each call returned is in the next request, as the tool's result.
    const lastResult = (body: { messages: Array<{ content: unknown }> }): string => {
      const blocks = body.messages.flatMap((message) => (Array.isArray(message.content) ? message.content : []));
      const result = blocks.filter((block: { type?: string }) => block.type === 'tool_result').at(-1) as { content: unknown };
      return Array.isArray(result.content) ? result.content.map((part: { text?: string }) => part.text ?? '').join('') : String(result.content);
    };
    const searched = JSON.parse(lastResult(main[1]?.body)) as { abstained: string | null; results: Array<{ id: number }> };
    expect(searched.abstained).toBeNull();
    expect(searched.results[0]?.id).toBe(seeded);
    // The agent's save waits for a person's review (the Go engram's lines first, the status after them).
    expect(lastResult(main[2]?.body)).toMatch(/^Memory saved: "Release flag" \(config\)\nSuggested topic_key: config\/release-flag\nStatus: pending review — [^\n]+\nID: \d+$/);
    expect(readFileSync(run.transcript, 'utf8')).not.toMatch(HOOK_TROUBLE);

    const store = openStore({ path: join(engramHome, 'engram.db'), readonly: true });
    try {
      const saved = store.engrams.list({ limit: 1000 }).engrams.find((engram) => engram.title === 'Release flag');
      expect(saved).toMatchObject({
        kind: 'config',
        project: 'shop',
        session_id: 'manual-save-shop',
        text: '**What**: set NODE_ENV=production for release builds',
        status: 'pending',
        learned_by: 'agent',
      });
    } finally {
      store.close();
    }
    // Both calls were answered by the background server the hooks share.
    const answered = readFileSync(join(engramHome, 'logs', 'mcp.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line)).filter((line) => line.msg === 'operation answered');
    expect(answered.map((line) => [line.method, line.by])).toEqual([
      ['engram.search', 'server'],
      ['obs.save', 'server'],
    ]);
    expect(logProblems(engramHome)).toEqual([]);
    await expectNothingLeft(home);
  }, 600_000);
});
