/**
 * The `engram` command-line interface (bundled to dist/cli.mjs; bin/engram runs it).
 * @example engram add "Run migrations with --dry-run first" --category development/database --tags sql
 * @module
 */
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  now: () => new Date(),
});
