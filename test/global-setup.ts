import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeOrphanMailboxFolders } from '../src/server/mailbox-server.js';

/**
 * The test run's setup and teardown:
 * - builds dist/ once (end-to-end tests spawn the bundles users run), and fetches the pinned Codex and Claude Code CLIs
 *   the fake model runners drive, failing loudly when it cannot;
 * - moves HOME to a throwaway folder for every test process, so a test or a process it starts that forgets its own
 *   home writes nowhere real; the package and agent CLI caches stay where they were (XDG_CACHE_HOME,
 *   npm_config_cache);
 * - marks every process of the run (ENGRAM_TEST_RUN) and, at the end, fails the run if an Engram process a test
 *   started (a server, a drain, a hook, a bootstrap) is still alive — it is killed, and named in the failure — or if
 *   the real home's Engram, Claude Code or Codex folders changed; and removes the mailbox folders on a tmpfs that
 *   servers the tests killed left behind.
 */

/** The agent CLIs the fake model runners pin (../shared/tools/fake-openai/run-codex.sh, fake-anthropic/run-claude.sh). */
export const AGENT_CLIS = {
  codex: { package: '@openai/codex', version: '0.169.0', bin: 'codex', cache: 'engram-test-codex-0.169.0' },
  claude: { package: '@anthropic-ai/claude-code', version: '2.1.197', bin: 'claude', cache: 'engram-test-claude-2.1.197' },
} as const;
/** How long the teardown gives detached processes (a drain finishing its job, a server noticing its home is gone). */
const SETTLE_MS = 15_000;

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/**
 * Installs a pinned agent CLI into the cache its runner uses, once, before test files run in parallel: several files
 * drive each CLI (and the manifests test runs `claude plugin validate`), and on a cold machine each would otherwise
 * start its own `npm install` into the same folder at the same time, or depend on another file having run first.
 * A failure stops the run with npm's reason instead of leaving tests to fail obscurely or skip.
 */
function ensureAgentCli(cli: (typeof AGENT_CLIS)[keyof typeof AGENT_CLIS], override: string | undefined): void {
  if (override) return;
  const cache = join(process.env.XDG_CACHE_HOME as string, cli.cache);
  const bin = join(cache, 'node_modules', '.bin', cli.bin);
  if (existsSync(bin)) return;
  mkdirSync(cache, { recursive: true });
  try {
    execFileSync('npm', ['init', '-y'], { cwd: cache, stdio: 'pipe' });
    execFileSync('npm', ['install', '--no-audit', '--no-fund', `${cli.package}@${cli.version}`], { cwd: cache, stdio: 'pipe', timeout: 600_000 });
  } catch (error) {
    const { stderr, message } = error as { stderr?: Buffer; message: string };
    throw new Error(`could not install ${cli.package}@${cli.version} into ${cache} for the tests that run it: ${stderr?.toString().trim() || message}`);
  }
  if (!existsSync(bin)) throw new Error(`npm installed ${cli.package}@${cli.version} into ${cache} but node_modules/.bin/${cli.bin} is missing`);
}

/**
 * Removes the mailbox call folders this run's servers left on a tmpfs (src/server/mailbox-server.ts: `run/hooks` links
 * to `engram-<uid>-XXXXXX` in $XDG_RUNTIME_DIR or /dev/shm): a server a test killed cannot remove its own, and the
 * next server of that home — which a test never starts — would. Only folders made since the run started whose link is
 * gone (their test home was removed) are touched.
 */
function removeRunMailboxFolders(since: number): void {
  for (const base of new Set([process.env.XDG_RUNTIME_DIR, '/dev/shm'])) {
    if (base) removeOrphanMailboxFolders(base, (folder) => folder.ctimeMs >= since);
  }
}

/** A process of this run: its pid, command line, and whether it carries the run's marker. */
interface RunProcess {
  pid: number;
  command: string;
}

/** Node processes running an Engram entry (server, hook, bootstrap, CLI) that carry this run's marker. */
function engramProcessesOf(marker: string): RunProcess[] {
  if (process.platform !== 'linux') return [];
  const found: RunProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue; // exited, not reaped
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (!/(server\.mjs|run\.cjs|bootstrap\.mjs|cli\.mjs|bin\/engram)/.test(command)) continue;
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (environ.includes(`ENGRAM_TEST_RUN=${marker}`)) found.push({ pid, command });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** Names, sizes and mtimes two levels into the real home's agent and Engram folders. */
function realHomeState(home: string): Record<string, string> {
  const state: Record<string, string> = {};
  const visit = (path: string, depth: number): void => {
    let stats;
    try {
      stats = statSync(path);
    } catch {
      return;
    }
    state[path] = `${stats.isDirectory() ? 'dir' : stats.size} ${stats.mtimeMs}`;
    if (stats.isDirectory() && depth < 2) for (const name of readdirSync(path)) visit(join(path, name), depth + 1);
  };
  for (const name of ['.engram', '.claude', '.codex']) visit(join(home, name), 0);
  return state;
}

export default function setup(): () => Promise<void> {
  const realHome = process.env.HOME || homedir();
  process.env.XDG_CACHE_HOME ||= join(realHome, '.cache');
  process.env.npm_config_cache ||= join(realHome, '.npm');
  const sandbox = mkdtempSync(join(tmpdir(), 'engram-test-home-'));
  // Only HOME moves: ENGRAM_HOME, CLAUDE_CONFIG_DIR and CODEX_HOME follow it by default, and tests that give a
  // process its own HOME expect exactly that (CODEX_HOME set would even make every hook think Codex ran it).
  Object.assign(process.env, { HOME: sandbox, ENGRAM_TEST_RUN: randomUUID() });
  // Every warm server a test starts serves the HTTP API; on the default port (7437) the first would take it and the
  // others log that it is in use, which tests read as a problem. Any free port instead, unless a test names one.
  process.env.ENGRAM_PORT = '0';
  const marker = process.env.ENGRAM_TEST_RUN as string;
  const before = realHomeState(realHome);

  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  // Without ../shared there is no fake model to drive the agents with; `claude plugin validate` needs none.
  if (existsSync(join(root, '..', 'shared', 'tools', 'fake-openai', 'run-codex.sh'))) ensureAgentCli(AGENT_CLIS.codex, process.env.CODEX_BIN);
  ensureAgentCli(AGENT_CLIS.claude, process.env.CLAUDE_BIN);

  const started = Date.now();
  return async function teardown(): Promise<void> {
    const deadline = Date.now() + SETTLE_MS;
    let left = engramProcessesOf(marker);
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      left = engramProcessesOf(marker);
    }
    for (const { pid } of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    removeRunMailboxFolders(started);
    const after = realHomeState(realHome);
    const touched = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((path) => before[path] !== after[path]);
    rmSync(sandbox, { recursive: true, force: true });
    const problems: string[] = [];
    if (left.length > 0) {
      problems.push(`${left.length} Engram process(es) started by the tests outlived them (killed now):\n${left.map((p) => `  ${p.pid} ${p.command}`).join('\n')}`);
    }
    if (touched.length > 0) {
      const message = `the real home's Engram, Claude Code or Codex folders changed during the test run:\n${touched.map((path) => `  ${path}`).join('\n')}`;
      // Only CI is sure nothing else on the machine touched them; locally, say so without failing the run.
      if (process.env.CI) problems.push(message);
      else process.stderr.write(`[engram tests] warning: ${message}\n`);
    }
    if (problems.length > 0) {
      // vitest reports an error thrown here ("error during close") but still exits 0: set the code ourselves.
      process.exitCode = 1;
      throw new Error(problems.join('\n'));
    }
  };
}
