import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Codex CLI the fake-openai runner pins (../shared/tools/fake-openai/run-codex.sh). */
const CODEX_VERSION = '0.169.0';

/**
 * Installs the pinned Codex CLI into the cache run-codex.sh uses, once, before test files run in parallel: three
 * files drive the real Codex, and on a cold machine each would otherwise start its own `npm install` into the same
 * folder at the same time. A failure (no registry) is left to those tests, which say what is missing.
 */
function ensureCodexCli(root: string): void {
  if (!existsSync(join(root, '..', 'shared', 'tools', 'fake-openai', 'run-codex.sh')) || process.env.CODEX_BIN) return;
  const cache = join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? homedir(), '.cache'), `engram-test-codex-${CODEX_VERSION}`);
  if (existsSync(join(cache, 'node_modules', '.bin', 'codex'))) return;
  try {
    mkdirSync(cache, { recursive: true });
    execFileSync('npm', ['init', '-y'], { cwd: cache, stdio: 'ignore' });
    execFileSync('npm', ['install', '--no-audit', '--no-fund', `@openai/codex@${CODEX_VERSION}`], { cwd: cache, stdio: 'ignore', timeout: 600_000 });
  } catch {
    // The tests that need it report it.
  }
}

/** Builds dist/ before any test runs (e2e tests spawn the bundles), and fetches the Codex CLI they drive. */
export default function setup(): void {
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  ensureCodexCli(root);
}
