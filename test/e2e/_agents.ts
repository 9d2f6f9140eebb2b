/**
 * Shared by the end-to-end tests that run the real agent CLIs (Claude Code through ../shared/tools/fake-anthropic,
 * Codex through ../shared/tools/fake-openai): seeding a scratch home's store with the real CLI, reading what the
 * scripted model was sent, and making sure a session leaves nothing running — no Engram server, no hook.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { alive, processEnv, processesOf, ROOT, SHARED } from '../_helpers.js';

export { processesOf };

export const RUN_CLAUDE = join(SHARED, 'tools', 'fake-anthropic', 'run-claude.sh');
export const RUN_CODEX = join(SHARED, 'tools', 'fake-openai', 'run-codex.sh');

/** One engram to seed: its text and category, optionally pinned. */
export interface SeedEngram {
  text: string;
  category: string;
  pin?: boolean;
}

/**
 * Adds engrams to `<home>/.engram` with the real CLI (`engram add`), the way a user would, without vectors (the
 * server embeds them later). Returns the ids, in order.
 */
export function seedEngrams(home: string, engrams: readonly SeedEngram[]): number[] {
  return engrams.map((engram) => {
    const args = [join(ROOT, 'bin', 'engram'), 'add', '--category', engram.category, ...(engram.pin ? ['--pin'] : []), engram.text];
    const result = spawnSync(process.execPath, args, {
      cwd: home,
      encoding: 'utf8',
      env: processEnv({ HOME: home, ENGRAM_HOME: join(home, '.engram'), ENGRAM_EMBEDDER: 'none' }),
    });
    expect(result.status, result.stderr).toBe(0);
    return (JSON.parse(result.stdout) as { engram: { id: number } }).engram.id;
  });
}

/** How an injected engram reads in the `[ENGRAM]` block (services/inject/render.ts). */
export const engramLine = (id: number, engram: SeedEngram): string => `- EG#${id} [${engram.category}] ${engram.text}`;

/** The request log of a fake model server: one `{method, path, body}` per line. */
export function requestLog(file: string): Array<{ method: string; path: string; body: any }> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends one request line to the server's socket and resolves with its answer (or null). */
function ask(socket: string, request: object, timeoutMs = 3_000): Promise<unknown> {
  return new Promise((resolve) => {
    let answer = '';
    const connection = createConnection(socket);
    const done = (value: unknown) => {
      clearTimeout(timer);
      connection.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    connection.on('error', () => done(null));
    connection.on('data', (chunk) => {
      answer += chunk;
      if (answer.includes('\n')) {
        try {
          done(JSON.parse(answer));
        } catch {
          done(null);
        }
      }
    });
    connection.write(`${JSON.stringify(request)}\n`);
  });
}

/**
 * Stops the Engram server of `engramHome` the polite way (`{"v":1,"op":"stop"}` on its socket) and asserts its
 * process is gone. If it does not go, it is killed (so nothing leaks) and the test fails. Returns its pid, or null
 * when no server ran.
 */
export async function stopEngramServer(engramHome: string): Promise<number | null> {
  const info = join(engramHome, 'run', 'server.json');
  if (!existsSync(info)) return null;
  const { pid, socket } = JSON.parse(readFileSync(info, 'utf8')) as { pid: number; socket: string };
  const answer = await ask(socket, { v: 1, op: 'stop' });
  const deadline = Date.now() + 10_000;
  while (alive(pid) && Date.now() < deadline) await sleep(100);
  const stillThere = alive(pid);
  if (stillThere) process.kill(pid, 'SIGKILL');
  expect({ pid, answer, alive: stillThere }).toEqual({ pid, answer: { ok: true, op: 'stop' }, alive: false });
  expect(existsSync(info)).toBe(false);
  return pid;
}

/** The pid in `<engramHome>/run/server.json`, or null. */
export function serverPid(engramHome: string): number | null {
  try {
    return (JSON.parse(readFileSync(join(engramHome, 'run', 'server.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

/**
 * After a session: waits for stragglers (an async hook, a bootstrap step) to finish — a late hook could otherwise
 * start a server again — then stops the home's Engram server, asserting it goes, and asserts that no process of the
 * home is left.
 */
export async function expectNothingLeft(home: string): Promise<void> {
  const server = serverPid(join(home, '.engram'));
  const others = () => processesOf(home).filter((p) => p.pid !== server);
  const deadline = Date.now() + 15_000;
  while (others().length > 0 && Date.now() < deadline) await sleep(200);
  expect(others(), 'hook or agent processes still running after the session').toEqual([]);
  await stopEngramServer(join(home, '.engram'));
  await sleep(500);
  expect(processesOf(home), 'processes left after the server stopped').toEqual([]);
}

/** Best effort, for `finally` after a failed assertion: SIGKILLs whatever of the home is still running. */
export function killLeftovers(home: string): void {
  for (const { pid } of processesOf(home)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** Lines of Engram's own logs (hooks.log, server.log) at level warn or error: a healthy session writes none. */
export function logProblems(engramHome: string): string[] {
  return ['hooks.log', 'server.log'].flatMap((name) => {
    const file = join(engramHome, 'logs', name);
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => /"level":"(warn|error)"/.test(line))
      .map((line) => `${name}: ${line}`);
  });
}

/**
 * The events whose hook the shell front (hooks/run.sh) handed to the warm server without starting Node (the server's
 * log says `front: "sh"`): a real agent ran the registered command, gave it its payload and closed stdin.
 */
export function shellFrontEvents(engramHome: string): string[] {
  const file = join(engramHome, 'logs', 'hooks.log');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"msg":"hook done"') && line.includes('"front":"sh"'))
    .map((line) => String((JSON.parse(line) as { event?: unknown }).event));
}

/**
 * The topic the recall tests talk about: one engram the prompt is about, one the first tool call (`git status
 * --ignored`) is about, and one pinned (shown at every session start). Wording shares the query's words on purpose:
 * these tests pin the plumbing (hooks → search → context → store), not ranking quality, which the eval bench
 * measures. The tool call holds two words the search keeps (`status` is a generic word): with `git` alone the two git
 * engrams would tie, and a tool event injects only a clear winner (services/inject choose.ts).
 */
export const TOPIC = {
  prompt: 'how do I push my rebased feature branch safely?',
  unrelated: 'what is 2+2',
  engrams: {
    push: {
      text: 'Never force-push to main. To push a rebased feature branch safely, use git push --force-with-lease on your own branch.',
      category: 'tooling/git',
    },
    status: {
      text: 'The shop repo keeps generated files out of git; check git status --ignored before committing to catch stray build output.',
      category: 'tooling/git',
    },
    pinned: { text: 'Run the whole test suite with npm test before pushing any branch.', category: 'workflow', pin: true },
  } satisfies Record<string, SeedEngram>,
};

/** What a clone of this repository contains: tracked and new files that git does not ignore, committed. */
export function cleanClone(target: string): void {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT })
    .toString()
    .split('\0')
    .filter((file) => file && existsSync(join(ROOT, file)));
  for (const file of files) {
    mkdirSync(dirname(join(target, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(target, file));
  }
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: target, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'snapshot');
}
