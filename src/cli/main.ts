/**
 * The `engram` command-line interface (bundled to dist/cli.mjs; bin/engram runs it).
 * @example engram add "Run migrations with --dry-run first" --category development/database --tags sql
 * @module
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
if (argv[0] === 'mcp') {
  // The MCP server loads only what it needs (no commander, no command modules): an agent waits for it to start.
  const here = dirname(fileURLToPath(import.meta.url));
  // The folder of this bundle: a plugin install's runtime folder (bin/engram found it), or a checkout built in place.
  const runtimeDir = here.endsWith('/src/cli') ? dirname(dirname(here)) : dirname(here);
  const { runMcp } = await import('../mcp/main.js');
  process.exitCode = await runMcp(argv.slice(1), { runtimeDir, env: process.env, cwd: process.cwd() });
} else {
  const { runCli } = await import('./program.js');
  process.exitCode = await runCli(argv, {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    now: () => new Date(),
  });
}
