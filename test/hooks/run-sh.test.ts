/**
 * The shell front (hooks/run.sh): with a server that reads its pipe alive, it hands the event over without starting
 * Node and prints the answer; everything else runs the Node launcher with the same arguments and stdin. Real hook
 * processes through `sh -c`, as agents run them (an install folder with run.sh, run.cjs and a stand-in fast path that
 * says what the launcher handed it), against the real mailbox in a child process (_shell-server-child.ts); a `node`
 * on PATH that logs each start proves when Node ran. test/e2e/hooks.test.ts runs both fronts against the real server.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, constants, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAST_PATH, HOOK_ENTRIES, NATIVE_BINDING, shellMailboxOf } from '../../hooks/run.cjs';
import { hookCommand } from '../../scripts/hook-registry.mjs';
import { bundledScript, ROOT, spawnJsonLines, tempDir, until } from '../_helpers.js';

const childScript = bundledScript('hooks/_shell-server-child.ts', 'shell-child');

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) {
    try {
      child.kill('SIGCONT');
    } catch {
      // Gone.
    }
    child.kill('SIGTERM');
  }
});

type Mode = 'echo' | 'decline' | 'slow' | 'old';

/** A home served by the stand-in in `mode`. */
async function serve(mode: Mode, home = tempDir()) {
  mkdirSync(join(home, 'run'), { recursive: true });
  const { child, lines } = await spawnJsonLines(await childScript(), [home, mode], children, 'the mailbox child to open its pipes');
  return { home, child, lines, got: (key: string) => lines.filter((line) => key in line).map((line) => line[key] as Record<string, unknown>) };
}

/** An install folder whose fast path prints what the launcher handed it (and the payload's length). */
function installFolder(parent = tempDir(), name = 'install'): string {
  const root = join(parent, name);
  mkdirSync(join(root, 'hooks'), { recursive: true });
  for (const file of ['run.cjs', 'run.sh']) copyFileSync(join(ROOT, 'hooks', file), join(root, 'hooks', file));
  mkdirSync(join(root, FAST_PATH, '..'), { recursive: true });
  writeFileSync(
    join(root, FAST_PATH),
    `exports.runHook = (entry, root, dir, handed) => { require('node:fs').writeSync(1, 'fast path: ' + entry + ' ' + handed.mailbox + ' ' + ('text' in handed.stdin ? handed.stdin.text.length : 'stream')); process.exit(0); };\n`,
  );
  mkdirSync(join(root, NATIVE_BINDING, '..'), { recursive: true });
  writeFileSync(join(root, NATIVE_BINDING), '');
  writeFileSync(join(root, 'dist', 'build.json'), '{"version":"7.7.7"}\n');
  return root;
}

/** A folder with a `node` that logs its arguments to `log` and runs the real one; and the tools the front uses. */
function shimPath(options: { timeout?: boolean } = {}) {
  const bin = tempDir();
  const log = join(bin, 'node.log');
  writeFileSync(join(bin, 'node'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${process.execPath}' "$@"\n`);
  chmodSync(join(bin, 'node'), 0o755);
  const tools = ['sh', 'cat', 'mkfifo', ...(options.timeout === false ? [] : ['timeout'])];
  const found = tools.map((tool) => spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim());
  for (const [i, path] of found.entries()) symlinkSync(path, join(bin, tools[i]!));
  return { path: bin, nodeRuns: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []) };
}

interface HookOptions {
  home: string;
  root: string;
  shim: ReturnType<typeof shimPath>;
  entry?: string;
  agent?: string;
  stdin?: string;
  env?: Record<string, string>;
  args?: string;
}

/** Runs the registered command line through `sh -c`, as agents do. */
function hook(options: HookOptions) {
  // Written out, not hookCommand: some cases give an agent or a command-line shape the registry never writes.
  const command = `sh "${options.root}/hooks/run.sh" ${options.entry ?? 'pre-tool-use'} --agent ${options.agent ?? 'claude'}${options.args ?? ''}`;
  const env = { PATH: options.shim.path, HOME: options.home, ENGRAM_HOME: options.home, CLAUDE_PLUGIN_DATA: '/tmp/plugin data', ...options.env };
  const started = Date.now();
  const result = spawnSync('/bin/sh', ['-c', command], { input: options.stdin ?? '{"session_id":"s"}', env, encoding: 'utf8', timeout: 20_000, maxBuffer: 64 << 20 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, ms: Date.now() - started };
}

describe('the shell front, with a server that reads its pipe', () => {
  it.each(Object.keys(HOOK_ENTRIES))('%s: the server answers, no Node starts', async (entry) => {
    const server = await serve('echo');
    const root = installFolder();
    const shim = shimPath();
    const stdin = JSON.stringify({ session_id: 's', hook_event_name: entry, text: 'x'.repeat(100) });
    const result = hook({ home: server.home, root, shim, entry, agent: 'codex', stdin, env: { PLUGIN_ROOT: root } });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({
      entry,
      agent: 'codex',
      envHints: { codex: true, claude: false },
      root,
      pluginData: '/tmp/plugin data',
      stdinLength: stdin.length,
      stdinHead: stdin.slice(0, 40),
    });
    expect(shim.nodeRuns()).toEqual([]);
    // The server removed what the hook no longer needs (the sweep takes the claim and the marks).
    await until(() => !readdirSync(join(server.home, 'run', 'hooks')).some((name) => name.endsWith('.req') || name.endsWith('.out')), 'the call files removed');
    // And was told the answer reached the hook.
    await until(() => server.lines.some((line) => 'delivered' in line), 'the answer settled');
    expect(server.lines.filter((line) => 'delivered' in line)).toEqual([{ delivered: true }]);
  });

  it('a payload far above PIPE_BUF (1 MiB) goes through the saved file', async () => {
    const server = await serve('echo');
    const stdin = JSON.stringify({ session_id: 's', tool_response: { content: 'y'.repeat(1 << 20) } });
    const shim = shimPath();
    const result = hook({ home: server.home, root: installFolder(), shim, entry: 'post-tool-use', stdin });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).stdinLength).toBe(stdin.length);
    expect(shim.nodeRuns()).toEqual([]);
  });

  it('four hooks at once each get their own answer', async () => {
    const server = await serve('echo');
    const root = installFolder();
    const shim = shimPath();
    const env = { PATH: shim.path, HOME: server.home, ENGRAM_HOME: server.home };
    const results = await Promise.all(
      [0, 1, 2, 3, 4, 5, 6, 7].map(
        (n) =>
          new Promise<string>((resolve) => {
            const child = spawn('/bin/sh', ['-c', hookCommand(root, 'pre-tool-use', 'claude')], { env });
            let out = '';
            child.stdout.on('data', (chunk) => (out += chunk));
            child.on('close', () => resolve(out));
            child.stdin.end(JSON.stringify({ session_id: `s${n}`, pad: 'z'.repeat(n * 10) }));
          }),
      ),
    );
    expect(results.map((out) => JSON.parse(out).stdinHead)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((n) => `{"session_id":"s${n}","pad":"${'z'.repeat(n * 10)}"}`.slice(0, 40)));
    expect(shim.nodeRuns()).toEqual([]);
  });

  it('a call the server declines runs the Node launcher with the payload, which asks as Node hooks do', async () => {
    const server = await serve('decline');
    const shim = shimPath();
    const root = installFolder();
    const result = hook({ home: server.home, root, shim, stdin: '{"session_id":"declined"}' });
    expect(result).toMatchObject({ code: 0, stdout: 'node: PreToolUse root\n', stderr: '' });
    expect(shim.nodeRuns()).toEqual([`--v8-pool-size=1 ${root}/hooks/run.cjs pre-tool-use --agent claude`]);
    await until(() => server.got('call').length === 1, 'the Node launcher\'s call');
    expect(server.got('call')).toEqual([{ event: 'PreToolUse', stdinLength: '{"session_id":"declined"}'.length }]);
  });

  it('a server that claims a recording call and answers late: the hook gives up after its wait, in silence (the server has it)', async () => {
    const server = await serve('slow');
    const shim = shimPath();
    const result = hook({ home: server.home, root: installFolder(), shim, entry: 'session-end' });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(result.ms).toBeLessThan(5_000);
    expect(shim.nodeRuns()).toEqual([]);
    await until(() => server.got('shell').length === 1, 'the call the server got');
    // The late answer is not written, and the server is told so (it records nothing as shown).
    await until(() => server.lines.some((line) => 'delivered' in line), 'the late answer', 10_000);
    expect(server.lines.filter((line) => 'delivered' in line)).toEqual([{ delivered: false }]);
  });

  it('a server that claims a call whose answer is context and answers late: the launcher answers in-process after the wait', async () => {
    const server = await serve('slow');
    const shim = shimPath();
    const root = installFolder();
    const stdin = '{"session_id":"late"}';
    const result = hook({ home: server.home, root, shim, entry: 'pre-tool-use', stdin });
    expect(result).toMatchObject({ code: 0, stdout: `fast path: pre-tool-use timeout ${stdin.length}`, stderr: '' });
    expect(shim.nodeRuns()).toEqual([`--v8-pool-size=1 ${root}/hooks/run.cjs pre-tool-use --agent claude --mailbox timeout`]);
    await until(() => server.got('shell').length === 1, 'the call the server got');
    await until(() => server.lines.some((line) => 'delivered' in line), 'the late answer', 10_000);
    expect(server.lines.filter((line) => 'delivered' in line)).toEqual([{ delivered: false }]);
  });

  it('a call whose payload file is gone is declined at once (the hook still has the payload as its stdin)', async () => {
    const server = await serve('echo');
    const dir = join(server.home, 'run', 'hooks');
    spawnSync('mkfifo', [join(dir, 's1-0.out')]);
    const fd = openSync(shellMailboxOf(server.home).fifo, constants.O_RDWR | constants.O_NONBLOCK);
    writeSync(fd, `s1-0\tstop\tclaude\t00\t${tempDir()}\t\n`);
    closeSync(fd);
    const read = spawnSync('timeout', ['5', 'cat', join(dir, 's1-0.out')], { encoding: 'utf8' });
    expect({ status: read.status, stdout: read.stdout }).toEqual({ status: 0, stdout: '' });
    expect(existsSync(join(dir, 's1-0.no'))).toBe(true);
    expect(server.got('shell')).toEqual([]);
  });

  it('a server killed after it claimed the call: the hook sees it dead after its wait and the launcher answers in-process', async () => {
    const server = await serve('slow');
    const root = installFolder();
    const shim = shimPath();
    const env = { PATH: shim.path, HOME: server.home, ENGRAM_HOME: server.home };
    const child = spawn('/bin/sh', ['-c', hookCommand(root, 'stop', 'claude')], { env });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdin.end('{"session_id":"killed"}');
    await until(() => server.got('shell').length === 1, 'the server to claim the call');
    server.child.kill('SIGKILL');
    expect(await closed).toBe(0);
    expect(out).toBe(`fast path: stop lost ${'{"session_id":"killed"}'.length}`);
    expect(shim.nodeRuns()).toEqual([`--v8-pool-size=1 ${root}/hooks/run.cjs stop --agent claude --mailbox lost`]);
  });

  it('a server alive but not reading: the hook takes its call back after its wait and the launcher answers; the server, resumed, leaves it', async () => {
    const server = await serve('echo');
    const root = installFolder();
    const shim = shimPath();
    server.child.kill('SIGSTOP');
    const result = hook({ home: server.home, root, shim, stdin: '{"session_id":"wedged"}' });
    expect(result).toMatchObject({ code: 0, stdout: `fast path: pre-tool-use timeout ${'{"session_id":"wedged"}'.length}`, stderr: '' });
    expect(shim.nodeRuns()).toEqual([`--v8-pool-size=1 ${root}/hooks/run.cjs pre-tool-use --agent claude --mailbox timeout`]);
    server.child.kill('SIGCONT');
    // Exactly one of them handles it: the server finds the claim the hook made.
    await until(() => server.got('withdrawn').length === 1, 'the withdrawn call');
    expect(server.lines.filter((line) => 'withdrawn' in line)).toEqual([{ withdrawn: 'PreToolUse' }]);
    expect(server.got('shell')).toEqual([]);
  });

  it('a full pipe (a wedged server): the post does not hold the hook, and no writer is left behind', async () => {
    const server = await serve('echo');
    const root = installFolder();
    const shim = shimPath();
    server.child.kill('SIGSTOP');
    const fd = openSync(shellMailboxOf(server.home).fifo, constants.O_RDWR | constants.O_NONBLOCK);
    try {
      const line = Buffer.from(`${'f'.repeat(1023)}\n`);
      for (;;) {
        try {
          writeSync(fd, line);
        } catch {
          break;
        }
      }
      const result = hook({ home: server.home, root, shim });
      expect(result).toMatchObject({ code: 0, stdout: 'fast path: pre-tool-use timeout 18', stderr: '' });
      expect(result.ms).toBeLessThan(10_000);
      const left = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout.split('\n').filter((args) => args.includes(`${root}/hooks/run.sh`));
      expect(left).toEqual([]);
    } finally {
      closeSync(fd);
    }
  });
});

describe('the shell front runs the Node launcher', () => {
  it('with no server (no pipe): exactly the Node hook', async () => {
    const home = tempDir();
    const shim = shimPath();
    const root = installFolder();
    const result = hook({ home, root, shim });
    expect(result).toMatchObject({ code: 0, stdout: 'fast path: pre-tool-use absent 18', stderr: '' });
    expect(shim.nodeRuns()).toEqual([`--v8-pool-size=1 ${root}/hooks/run.cjs pre-tool-use --agent claude`]);
  });

  it('with a dead server whose pipe and pid file were left behind, at once', async () => {
    const server = await serve('echo');
    server.child.kill('SIGKILL');
    await until(() => server.child.exitCode !== null || server.child.signalCode !== null, 'the server to die');
    expect(existsSync(shellMailboxOf(server.home).fifo)).toBe(true);
    const shim = shimPath();
    const result = hook({ home: server.home, root: installFolder(), shim });
    expect(result).toMatchObject({ code: 0, stdout: 'fast path: pre-tool-use refused 18', stderr: '' });
    expect(result.ms).toBeLessThan(5_000);
    expect(shim.nodeRuns()).toHaveLength(1);
  });

  it('with a server from before the shell front (no shell pipe): the Node launcher posts as before', async () => {
    const server = await serve('old');
    const shim = shimPath();
    const result = hook({ home: server.home, root: installFolder(), shim });
    expect(result).toMatchObject({ code: 0, stdout: 'node: PreToolUse root\n' });
    expect(shim.nodeRuns()).toHaveLength(1);
  });

  it('a Node hook (registered before the shell front) still talks to a server that reads both pipes', async () => {
    const server = await serve('echo');
    const root = installFolder();
    const env = { PATH: process.env.PATH ?? '', HOME: server.home, ENGRAM_HOME: server.home };
    const result = spawnSync(process.execPath, [join(root, 'hooks', 'run.cjs'), 'stop', '--agent', 'claude'], { input: '{"session_id":"s"}', env, encoding: 'utf8', timeout: 20_000 });
    expect(result.stdout).toBe('node: Stop root\n');
  });

  const cases: Array<[string, Partial<HookOptions> & { expected?: string }]> = [
    ['ENGRAM_SERVER=off', { env: { ENGRAM_SERVER: 'off' }, expected: 'fast path: pre-tool-use not-asked 18' }],
    ['a nested agent session (ENGRAM_LLM_CHILD=1)', { env: { ENGRAM_LLM_CHILD: '1' }, expected: '' }],
    ['an entry it does not know', { entry: 'post-compact', expected: '' }],
    ['another command-line shape', { args: ' --extra', expected: 'node: PreToolUse root' }],
    ['an agent it does not know', { agent: 'gemini' }],
    ['a relative ENGRAM_HOME', { env: { ENGRAM_HOME: 'rel/home' } }],
    ['no HOME and no ENGRAM_HOME (the launcher asks the system)', { env: { HOME: '', ENGRAM_HOME: '' } }],
    ['a plugin data folder with a tab in it', { env: { CLAUDE_PLUGIN_DATA: '/tmp/a\tb' } }],
    ['a plugin data folder with edge whitespace', { env: { CLAUDE_PLUGIN_DATA: ' /tmp/data' } }],
    ['a call line too long for one atomic pipe write', { env: { CLAUDE_PLUGIN_DATA: `/tmp/${'d'.repeat(1000)}` } }],
  ];
  it.each(cases)('with %s', async (_name, options) => {
    const server = await serve('echo');
    const shim = shimPath();
    const root = installFolder();
    const result = hook({ home: server.home, root, shim, ...options });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    if (options.expected !== undefined) expect(result.stdout.startsWith(options.expected)).toBe(true);
    expect(shim.nodeRuns()).toHaveLength(1);
    expect(server.got('shell')).toEqual([]);
  });

  it('with no `timeout` program (macOS has none by default)', async () => {
    const server = await serve('echo');
    const shim = shimPath({ timeout: false });
    const result = hook({ home: server.home, root: installFolder(), shim });
    expect(result).toMatchObject({ code: 0, stdout: 'node: PreToolUse root\n' });
    expect(shim.nodeRuns()).toHaveLength(1);
    expect(server.got('shell')).toEqual([]);
  });

  it('from an install folder whose path has a newline in it', async () => {
    const server = await serve('echo');
    const shim = shimPath();
    const root = installFolder(tempDir(), 'in\nstall');
    const result = hook({ home: server.home, root, shim });
    expect(result).toMatchObject({ code: 0, stdout: 'node: PreToolUse root\n' });
    expect(shim.nodeRuns().join('\n')).toBe(`--v8-pool-size=1 ${root}/hooks/run.cjs pre-tool-use --agent claude`);
    expect(server.got('shell')).toEqual([]);
  });

  it('is plain POSIX sh (dash parses it; no bashisms the checker knows)', () => {
    expect(spawnSync('sh', ['-n', join(ROOT, 'hooks', 'run.sh')]).status).toBe(0);
    const text = readFileSync(join(ROOT, 'hooks', 'run.sh'), 'utf8');
    for (const bashism of ['[[ ', '$RANDOM', 'local ', 'function ', '<<<', '$(<', '${!', 'source ']) expect(text).not.toContain(bashism);
  });
});
