/**
 * The warm server as hooks use it: real hook processes, the real dist/server.mjs, a real store. Pins: one server per
 * home however many hooks start at once, nothing lost, hooks keep answering when the server dies mid-query and the
 * next hook restarts it, it sees other processes' writes, it exits when idle or when its home disappears, and it
 * leaves no process behind.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { ask } from '../../src/server/ask.js';
import { alive, engramProcess, hasModels, hookProcess, MODELS_DIR, ROOT, seed, serverPid, stopServer, tempDir, until, waitForServer } from '../_helpers.js';

/** Pids of processes whose environment names this home (servers, hooks, drains); Linux /proc. */
function processesOf(home: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (environ.includes(`ENGRAM_HOME=${home}`)) pids.push(Number(entry));
    } catch {
      // Gone, or not ours.
    }
  }
  return pids;
}

const prompt = (session: string, text: string) =>
  JSON.stringify({ session_id: session, transcript_path: '/tmp/t.jsonl', cwd: '/tmp', hook_event_name: 'UserPromptSubmit', prompt: text });

const hookLog = (home: string): Array<Record<string, unknown>> =>
  readFileSync(join(home, 'logs', 'hooks.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));

const LESSONS = [
  { text: 'Database migrations run with npm run migrate; never edit an applied migration file.', category: 'database' },
  { text: 'Docker builds need BuildKit: set DOCKER_BUILDKIT=1 before docker build in CI.', category: 'ops' },
];

describe.skipIf(process.platform !== 'linux')('the warm server', () => {
  it('8 hooks at once on a cold home: all exit 0, nothing lost, exactly one server; then all answered by it', async () => {
    const home = tempDir();
    seed(home, LESSONS);
    const cold = await Promise.all(
      Array.from({ length: 8 }, (_, i) => hookProcess('user-prompt-submit', prompt(`cold-${i}`, `how do database migrations run? (${i})`), { home, server: true })),
    );
    expect(cold.map((r) => [r.code, r.stderr])).toEqual(Array(8).fill([0, '']));
    expect(cold.every((r) => r.stdout.includes('EG#1'))).toBe(true);
    const pid = await waitForServer(home);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(processesOf(home)).toEqual([pid]);
    // The server records what a hook showed, and logs it, once the answer is sent.
    const logged = (): Array<{ path?: unknown }> => hookLog(home).filter((line) => line.event === 'UserPromptSubmit' && line.msg === 'hook done');
    await until(() => logged().length === 8, 'the cold hooks’ log lines');
    // Answered by themselves — except a hook the machine started late, after the server came up, which it answers.
    const coldPaths = logged().map((line) => line.path);
    expect(coldPaths.every((path) => path === 'in-process' || path === 'server')).toBe(true);
    expect(coldPaths.filter((path) => path === 'in-process').length).toBeGreaterThanOrEqual(1);

    const warm = await Promise.all(
      Array.from({ length: 8 }, (_, i) => hookProcess('user-prompt-submit', prompt(`warm-${i}`, `how do database migrations run? (${i})`), { home, server: true })),
    );
    expect(warm.map((r) => [r.code, r.stderr])).toEqual(Array(8).fill([0, '']));
    expect(warm.every((r) => r.stdout.includes('EG#1'))).toBe(true);
    await until(() => logged().length === 16, 'the warm hooks’ log lines');
    expect(logged().map((line) => line.path)).toEqual([...coldPaths, ...Array(8).fill('server')]);
    await stopServer(home);
    const store = openStore({ path: join(home, 'engram.db'), readonly: true });
    expect(store.sessions.counts()).toMatchObject({ sessions: 16, prompts: 16 });
    expect(store.db.prepare('SELECT count(*) FROM session_shown_engrams').pluck().get()).toBe(16);
    store.close();
    expect(processesOf(home)).toEqual([]);
  }, 60_000);

  it('killed mid-query: hooks keep answering by themselves, and the next hook starts a new server over the stale files', async () => {
    const home = tempDir();
    seed(home, LESSONS);
    await hookProcess('user-prompt-submit', prompt('start', 'docker builds in CI'), { home, server: true });
    const first = await waitForServer(home);
    // Stopped, the server still holds its mailbox open (the pipe keeps what is written to it), so the six hooks post
    // their calls and wait: once all six are posted it is killed under them, mid-query, every time. Each prompt
    // carries an IDE note that the search drops, making its call too long for one pipe write: it is posted as a
    // `.req` file, which shows the hook got that far (a call in the pipe leaves no trace until it is claimed).
    process.kill(first, 'SIGSTOP');
    const posted = (): number => readdirSync(join(home, 'run', 'hooks')).filter((name) => name.endsWith('.req')).length;
    const note = `<system-reminder>${'the build log follows. '.repeat(250)}</system-reminder>`;
    const running = Array.from({ length: 6 }, (_, i) =>
      hookProcess('user-prompt-submit', prompt(`during-${i}`, `how do I run docker build with BuildKit? ${note}`), { home, server: true }),
    );
    try {
      await until(() => posted() === 6, 'the six hooks to post to the stopped server', 20_000);
    } finally {
      process.kill(first, 'SIGKILL');
    }
    const results = await Promise.all(running);
    // Each answered by itself, with the engram the query is about, and says why: the server was lost mid-query.
    expect(results.map((r) => [r.code, r.stderr])).toEqual(Array(6).fill([0, '']));
    for (const result of results) expect(result.stdout).toContain('EG#2');
    const during = hookLog(home).filter((line) => line.msg === 'hook done' && line.event === 'UserPromptSubmit').slice(1);
    expect(during.map(({ path, fallback, injected }) => ({ path, fallback, injected }))).toEqual(Array(6).fill({ path: 'in-process', fallback: 'lost', injected: [2] }));
    await until(() => !alive(first), 'the killed server to go');
    // The dead server's lock and socket are still there; a hook answers anyway and a new server replaces them.
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    const after = await hookProcess('user-prompt-submit', prompt('after', 'docker builds need BuildKit?'), { home, server: true });
    expect(after).toMatchObject({ code: 0, stderr: '' });
    expect(after.stdout).toContain('EG#2');
    await until(() => serverPid(home) !== null && serverPid(home) !== first, 'a new server');
    const second = await waitForServer(home);
    expect(alive(second)).toBe(true);
    const done = (): number => hookLog(home).filter((line) => line.msg === 'hook done').length;
    const before = done();
    const next = await hookProcess('user-prompt-submit', prompt('next', 'docker builds need BuildKit?'), { home, server: true });
    expect(next.stdout).toContain('EG#2');
    // Logged once the answer is sent.
    await until(() => done() > before, 'the last hook’s log line');
    expect(hookLog(home).at(-1)).toMatchObject({ msg: 'hook done', path: 'server' });
    await stopServer(home);
    expect(processesOf(home)).toEqual([]);
  }, 60_000);

  it('a hook that gave up waiting on a busy server answers by itself, and the server does not handle it again', async () => {
    const home = tempDir();
    seed(home, LESSONS);
    await hookProcess('user-prompt-submit', prompt('s1', 'docker builds'), { home, server: true });
    const pid = await waitForServer(home);
    // The server stops answering for longer than a Stop hook waits (a model loading, an index building).
    process.kill(pid, 'SIGSTOP');
    let stop;
    try {
      stop = await hookProcess(
        'stop',
        JSON.stringify({ session_id: 's1', transcript_path: '/tmp/t.jsonl', cwd: '/tmp', hook_event_name: 'Stop', stop_hook_active: false }),
        { home, server: true },
      );
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(stop).toMatchObject({ code: 0, stdout: '', stderr: '' });
    await until(() => hookLog(home).some((line) => String(line.msg).startsWith('hook gave up waiting')), 'the server to read the abandoned call');
    const stops = hookLog(home).filter((line) => line.event === 'Stop');
    expect(stops.map(({ msg, path, fallback }) => ({ msg, path, fallback }))).toEqual([
      { msg: 'hook done', path: 'in-process', fallback: 'timeout' },
      { msg: 'hook gave up waiting before the server read it; not handled twice', path: 'server', fallback: undefined },
    ]);
    await stopServer(home);
    const store = openStore({ path: join(home, 'engram.db'), readonly: true });
    expect(store.sessions.get('s1')?.turns).toBe(1);
    store.close();
  }, 60_000);

  it('sees engrams another process adds', async () => {
    const home = tempDir();
    seed(home, LESSONS);
    await hookProcess('user-prompt-submit', prompt('a', 'docker builds'), { home, server: true });
    await waitForServer(home);
    const added = engramProcess(['add', 'Feature flags live in config/flags.yml and are read at boot; restart after editing them.', '--category', 'config'], {
      home,
      env: { ENGRAM_EMBEDDER: 'none' },
    });
    expect(added.status, added.stderr).toBe(0);
    const result = await hookProcess('user-prompt-submit', prompt('b', 'where do feature flags live, and when are they read?'), { home, server: true });
    expect(result.stdout).toContain('EG#3');
    await until(() => hookLog(home).some((line) => line.msg === 'hook done' && line.path === 'server'), 'the hook’s log line');
    expect(hookLog(home).at(-1)).toMatchObject({ path: 'server', injected: [3] });
    await stopServer(home);
  }, 60_000);

  it('applies a changed config.json without a restart', async () => {
    const home = tempDir();
    seed(home, LESSONS);
    await hookProcess('user-prompt-submit', prompt('c1', 'docker builds'), { home, server: true });
    const pid = await waitForServer(home);
    writeFileSync(join(home, 'config.json'), JSON.stringify({ capture: { prompts: false } }));
    await hookProcess('user-prompt-submit', prompt('c2', 'docker builds again'), { home, server: true });
    expect(serverPid(home)).toBe(pid);
    await stopServer(home);
    const store = openStore({ path: join(home, 'engram.db'), readonly: true });
    expect(store.sessions.prompts('c1')).toHaveLength(1);
    expect(store.sessions.prompts('c2')).toHaveLength(0);
    store.close();
    expect(readFileSync(join(home, 'logs', 'server.log'), 'utf8')).toContain('config.json changed; reloaded');
  }, 60_000);

  it.skipIf(!hasModels('static-use-256', 'ctx-use-256'))('after a model change: restarts, re-embeds in the background, and engram status shows the new model coverage', async () => {
    const home = tempDir();
    seed(home, LESSONS);
    const embed = (model: string) => JSON.stringify({ embed: { provider: 'transformers', model, model_dir: MODELS_DIR } });
    writeFileSync(join(home, 'config.json'), embed('static-use-256'));
    await hookProcess('user-prompt-submit', prompt('m1', 'docker builds'), { home, server: true });
    const first = await waitForServer(home);
    await until(() => {
      const store = openStore({ path: join(home, 'engram.db'), readonly: true });
      try {
        return store.vectors().spaces().some((space) => space.model === 'transformers:static-use-256' && space.vectors === 2);
      } finally {
        store.close();
      }
    }, 'the first model to embed both engrams', 30_000);

    writeFileSync(join(home, 'config.json'), embed('ctx-use-256'));
    await until(() => !alive(first), 'the server to restart for the new model', 20_000);
    expect(readFileSync(join(home, 'logs', 'server.log'), 'utf8')).toContain('the embedding model changed');
    const answered = await hookProcess('user-prompt-submit', prompt('m2', 'docker builds need buildkit'), { home, server: true });
    expect(answered.code).toBe(0);
    await waitForServer(home);
    await until(() => {
      const status = engramProcess(['status'], { home });
      const embeddings = JSON.parse(status.stdout).embeddings as { model: string; pending: number; vectors: number; total: number };
      return embeddings.model === 'transformers:ctx-use-256' && embeddings.pending === 0 && embeddings.vectors === 2;
    }, 'the new model to re-embed everything in the background', 40_000);
    await stopServer(home);
  }, 120_000);

  it('does not answer hooks of another version, and steps aside for a newer one', async () => {
    const home = tempDir();
    seed(home, LESSONS);
    await hookProcess('user-prompt-submit', prompt('v', 'docker builds'), { home, server: true });
    const pid = await waitForServer(home);
    const call = { event: 'UserPromptSubmit', stdin: prompt('v2', 'docker builds'), envHints: { codex: false, claude: true } };
    const socket = join(home, 'run', 'server.sock');
    expect(await ask(socket, { v: 1, op: 'hook', version: '0.0.1', call }, 5_000)).toEqual({ ok: false, error: 'version' });
    expect(alive(pid)).toBe(true);
    expect(await ask(socket, { v: 1, op: 'hook', version: '99.0.0', call }, 5_000)).toEqual({ ok: false, error: 'version' });
    await until(() => !alive(pid), 'the old server to step aside');
    expect(readFileSync(join(home, 'logs', 'server.log'), 'utf8')).toContain('Engram 99.0.0 is installed');
  }, 60_000);

  it('finds the version of a hook that sends its install folder: its own answered, another not, no runtime said so, a newer one stepped aside for', async () => {
    const home = tempDir();
    seed(home, LESSONS);
    await hookProcess('user-prompt-submit', prompt('r', 'docker builds'), { home, server: true });
    const pid = await waitForServer(home);
    const call = { event: 'UserPromptSubmit', stdin: prompt('r2', 'docker builds'), envHints: { codex: false, claude: true } };
    const socket = join(home, 'run', 'server.sock');
    /** An install folder built in place whose dist/build.json says `version`. */
    const folder = (version: string): string => {
      const root = tempDir();
      for (const file of ['dist/hooks/fast.cjs', 'node_modules/better-sqlite3/build/Release/better_sqlite3.node']) {
        mkdirSync(join(root, file, '..'), { recursive: true });
        writeFileSync(join(root, file), '');
      }
      writeFileSync(join(root, 'dist', 'build.json'), `${JSON.stringify({ version })}\n`);
      return root;
    };
    expect(await ask(socket, { v: 1, op: 'hook', root: ROOT, call }, 5_000)).toMatchObject({ ok: true, op: 'hook' });
    expect(await ask(socket, { v: 1, op: 'hook', root: folder('0.0.1'), call }, 5_000)).toEqual({ ok: false, error: 'version' });
    expect(await ask(socket, { v: 1, op: 'hook', root: tempDir(), call }, 5_000)).toEqual({ ok: false, error: 'no runtime' });
    expect(alive(pid)).toBe(true);
    expect(await ask(socket, { v: 1, op: 'hook', root: folder('99.0.0'), call }, 5_000)).toEqual({ ok: false, error: 'version' });
    await until(() => !alive(pid), 'the old server to step aside');
    expect(readFileSync(join(home, 'logs', 'server.log'), 'utf8')).toContain('Engram 99.0.0 is installed');
  }, 60_000);

  it('exits by itself after the idle period, removing its socket and lock', async () => {
    const home = tempDir();
    seed(home, LESSONS);
    await hookProcess('user-prompt-submit', prompt('a', 'docker builds'), { home, server: true, env: { ENGRAM_SERVER_IDLE_MS: '1500' } });
    const pid = await waitForServer(home);
    await until(() => !alive(pid), 'the idle server to exit', 20_000);
    expect(readdirSync(join(home, 'run')).sort()).toEqual(['spawn.stamp']);
    expect(readFileSync(join(home, 'logs', 'server.log'), 'utf8')).toContain('"reason":"idle"');
    expect(processesOf(home)).toEqual([]);
  }, 60_000);

  it('runs with a capped young generation, gc() exposed and two malloc arenas, and samples its memory (and writes a heap snapshot on SIGUSR2) only when the soak asks', async () => {
    const home = tempDir();
    seed(home, LESSONS);
    await hookProcess('user-prompt-submit', prompt('a', 'docker builds'), { home, server: true, env: { ENGRAM_MEMORY_PROBE_MS: '200' } });
    const pid = await waitForServer(home);
    // The young generation is capped (server/client.ts SERVER_NODE_FLAGS): V8 grew it to 32 MB under a hook load.
    const flags = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(flags).toContain('--max-semi-space-size=4');
    // …and does not shrink: the RSS followed the machine's load by 7 MB as V8 resized it.
    expect(flags).toContain('--min-semi-space-size=4');
    // gc() for the collection between calls (server/quiet-collection.ts): the old space crept up under steady traffic.
    expect(flags).toContain('--expose-gc');
    // Two malloc arenas (SERVER_ENV): each of the server's threads kept an arena of its own, 28–31 MB between them.
    expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');
    const samples = (): Array<{ pid: number; rss_kb: number; heap_used_kb: number; spaces: Record<string, [number, number]> }> => {
      try {
        return readFileSync(join(home, 'logs', 'memory.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
      } catch {
        return [];
      }
    };
    await until(() => samples().length >= 3, 'three memory samples');
    const sample = samples().at(-1)!;
    expect(sample.pid).toBe(pid);
    expect(sample.rss_kb).toBeGreaterThan(sample.heap_used_kb);
    expect(sample.spaces.new_space![0]).toBeLessThanOrEqual(8 * 1024);
    process.kill(pid, 'SIGUSR2');
    await until(() => readdirSync(join(home, 'logs')).some((name) => name.endsWith('.heapsnapshot')), 'a heap snapshot');
    expect(alive(pid)).toBe(true);
    await stopServer(home);

    // Without the variable: no samples, and SIGUSR2 is not listened for.
    const plain = tempDir();
    seed(plain, LESSONS);
    await hookProcess('user-prompt-submit', prompt('b', 'docker builds'), { home: plain, server: true });
    await waitForServer(plain);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(existsSync(join(plain, 'logs', 'memory.jsonl'))).toBe(false);
    await stopServer(plain);
  }, 60_000);

  /**
   * A warm server's home (its index written, its text index built), then removed: the deletion meets a server at
   * rest, as a user's would. A server still writing (a log line, a snapshot) can put a file back while rm walks the
   * folder, so rm tries again then. Returns the server's pid.
   */
  async function removeWarmServersHome(home: string): Promise<number> {
    seed(home, LESSONS);
    await hookProcess('user-prompt-submit', prompt('a', 'docker builds'), { home, server: true });
    const pid = await waitForServer(home);
    await until(() => readFileSync(join(home, 'logs', 'server.log'), 'utf8').includes('"text index ready"'), 'the text index', 30_000);
    rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    return pid;
  }

  it('exits when its home is deleted', async () => {
    const home = tempDir();
    const pid = await removeWarmServersHome(home);
    await until(() => !alive(pid), 'the server to notice', 10_000);
    expect(existsSync(home)).toBe(false);
  }, 60_000);

  it('exits when its home is removed and made again (its socket went with it)', async () => {
    const home = tempDir();
    const pid = await removeWarmServersHome(home);
    mkdirSync(home, { mode: 0o700 });
    await until(() => !alive(pid), 'the server to notice', 10_000);
  }, 60_000);

  it('SessionEnd hands the session’s work to the server, which runs it after the hook has exited', async () => {
    const home = tempDir();
    seed(home, LESSONS);
    await hookProcess('user-prompt-submit', prompt('s1', 'docker builds'), { home, server: true });
    await waitForServer(home);
    // And its text index installed (built in a worker after warm-up, then caught up on the event loop): SessionEnd
    // waits only 400 ms for the server, which a loaded CI machine can spend on that step.
    await until(() => readFileSync(join(home, 'logs', 'server.log'), 'utf8').includes('"text index ready"'), 'the text index', 30_000);
    const end = await hookProcess(
      'session-end',
      JSON.stringify({ session_id: 's1', transcript_path: '/tmp/t.jsonl', cwd: '/tmp', hook_event_name: 'SessionEnd', reason: 'other' }),
      { home, server: true },
    );
    expect(end).toMatchObject({ code: 0, stdout: '', stderr: '' });
    // The server answered the hook (no in-process fallback, which would have queued and started the work itself) ...
    await until(() => hookLog(home).some((line) => line.event === 'SessionEnd'), 'the SessionEnd log line');
    expect(hookLog(home).filter((line) => line.event === 'SessionEnd')).toEqual([expect.objectContaining({ msg: 'hook done', path: 'server' })]);
    // ... and ran the job itself, after answering.
    await until(() => readFileSync(join(home, 'logs', 'server.log'), 'utf8').includes('"job done"'), 'the job to run');
    await stopServer(home);
    const store = openStore({ path: join(home, 'engram.db'), readonly: true });
    expect(store.jobs.get('session-end', 's1')).toMatchObject({ status: 'done', attempts: 1 });
    store.close();
  }, 60_000);
});
