/**
 * Which Engram a hook is, between the launcher (hooks/run.cjs) and the warm server: the hook sends its install folder
 * and the server finds that folder's runtime version (server/hook-version.ts), so the hook reads neither its runtime
 * pointer nor dist/build.json before posting. Each combination of launcher and server still ends in an answer: an
 * older server (which calls the install-folder form invalid) and a server that finds no runtime are asked again with
 * the version the hook reads itself; a server of another version sends the hook to its fast path. Real hook processes
 * (a copy of hooks/run.cjs in an install folder with a stand-in runtime) against a real mailbox in a child process.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAST_PATH, NATIVE_BINDING, mailboxOf } from '../../hooks/run.cjs';
import { bundledScript, ROOT, spawnJsonLines, tempDir, until } from '../_helpers.js';

const childScript = bundledScript('hooks/_version-server-child.ts', 'version-child');

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A home whose mailbox is served by the stand-in in `mode`; `calls` is what it got so far. */
async function serve(mode: 'new' | 'old' | 'no-runtime' | 'other-version') {
  const home = tempDir();
  const mailbox = mailboxOf(home);
  mkdirSync(join(home, 'run'), { recursive: true });
  const { child, lines } = await spawnJsonLines(await childScript(), [mailbox.fifo, mailbox.dir, mode], children, 'the mailbox child to open its pipe');
  const got = () => lines.filter((line) => line.call).map((line) => line.call as Record<string, unknown>);
  return {
    home,
    /** The calls it got, once `count` arrived (its output is read while no hook blocks this process) and a moment after. */
    async calls(count: number) {
      await until(() => got().length >= count, `${count} calls`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return got();
    },
  };
}

/**
 * An install folder built in place (hooks/run.cjs, the fast path and the native addon where findRuntime looks for
 * them; dist/build.json saying 7.7.7), whose fast path prints what the launcher handed it.
 */
function installFolder(): string {
  const root = tempDir();
  mkdirSync(join(root, 'hooks'));
  copyFileSync(join(ROOT, 'hooks', 'run.cjs'), join(root, 'hooks', 'run.cjs'));
  mkdirSync(join(root, FAST_PATH, '..'), { recursive: true });
  writeFileSync(join(root, FAST_PATH), `exports.runHook = (entry, root, dir, handed) => { require('node:fs').writeSync(1, 'fast path: ' + handed.mailbox); process.exit(0); };\n`);
  mkdirSync(join(root, NATIVE_BINDING, '..'), { recursive: true });
  writeFileSync(join(root, NATIVE_BINDING), '');
  writeFileSync(join(root, 'dist', 'build.json'), '{"version":"7.7.7"}\n');
  return root;
}

/** Runs the pre-tool-use hook of `root` with `home`, the server on. */
function hook(root: string, home: string) {
  const env = { PATH: process.env.PATH ?? '', HOME: home, ENGRAM_HOME: home, ENGRAM_SERVER: 'on' };
  const stdin = JSON.stringify({ session_id: 's', cwd: '/tmp', hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: '/tmp/x' } });
  return spawnSync(process.execPath, [join(root, 'hooks', 'run.cjs'), 'pre-tool-use', '--agent', 'claude'], { input: stdin, env, encoding: 'utf8', timeout: 20_000 });
}

describe.skipIf(process.platform === 'win32')('a hook tells the server which Engram it is', () => {
  it('by its install folder: the server answers, and the hook never read its build.json', async () => {
    const server = await serve('new');
    const root = installFolder();
    // Without build.json the hook could not say a version itself: answered all the same, it did not need one.
    rmSync(join(root, 'dist', 'build.json'));
    const result = hook(root, server.home);
    expect([result.status, result.stdout, result.stderr]).toEqual([0, `answered root ${root}`, '']);
    const calls = await server.calls(1);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ v: 1, op: 'hook', root, call: { event: 'PreToolUse' } });
    expect(calls[0]).not.toHaveProperty('version');
  });

  it('sends the agent’s plugin data folder, where the runtime’s pointer is', async () => {
    const server = await serve('new');
    const root = installFolder();
    const env = { PATH: process.env.PATH ?? '', HOME: server.home, ENGRAM_HOME: server.home, ENGRAM_SERVER: 'on', CLAUDE_PLUGIN_DATA: '/tmp/plugin-data' };
    const result = spawnSync(process.execPath, [join(root, 'hooks', 'run.cjs'), 'pre-tool-use', '--agent', 'claude'], { input: '{"session_id":"s"}', env, encoding: 'utf8', timeout: 20_000 });
    expect(result.status).toBe(0);
    expect((await server.calls(1))[0]).toMatchObject({ root, pluginData: '/tmp/plugin-data' });
  });

  it('to a server older than the install-folder form: asked again with its runtime’s version, and answered', async () => {
    const server = await serve('old');
    const root = installFolder();
    const result = hook(root, server.home);
    expect([result.status, result.stdout, result.stderr]).toEqual([0, 'answered version 7.7.7', '']);
    expect((await server.calls(2)).map((call) => [call.root, call.version])).toEqual([
      [root, undefined],
      [undefined, '7.7.7'],
    ]);
  });

  it('to a server that finds no runtime for its folder: asked again with the version it finds itself', async () => {
    const server = await serve('no-runtime');
    const root = installFolder();
    const result = hook(root, server.home);
    expect([result.status, result.stdout]).toEqual([0, 'answered version 7.7.7']);
    expect(await server.calls(2)).toHaveLength(2);
  });

  it('to a server of another version: not asked again; its fast path takes over', async () => {
    const server = await serve('other-version');
    const root = installFolder();
    const result = hook(root, server.home);
    expect([result.status, result.stdout]).toEqual([0, 'fast path: declined']);
    expect(await server.calls(1)).toHaveLength(1);
  });

  it('to an older server when it cannot say a version either: the fast path asks with the one it was built as', async () => {
    const server = await serve('old');
    const root = installFolder();
    rmSync(join(root, 'dist', 'build.json'));
    const result = hook(root, server.home);
    expect([result.status, result.stdout]).toEqual([0, 'fast path: not-asked']);
    expect(await server.calls(1)).toHaveLength(1);
  });
});
