import { Command, CommanderError } from 'commander';
import { EngramError, VERSION } from '../core/index.js';
import { registerContextCommands } from './commands/context-files.js';
import { registerDemoCommands } from './commands/demo.js';
import { registerDocsCommands } from './commands/docs.js';
import { registerEngramCommands } from './commands/engrams.js';
import { registerEnvCommands } from './commands/env.js';
import { registerExplainCommands } from './commands/explain.js';
import { registerHealthCommands } from './commands/health.js';
import { registerHooksCommands } from './commands/hooks.js';
import { registerLearnCommands } from './commands/learn.js';
import { registerMcpCommands } from './commands/mcp.js';
import { registerReviewCommands } from './commands/review.js';
import { registerSearchCommands } from './commands/search.js';
import { registerServeCommands } from './commands/serve.js';
import { registerSyncCommands } from './commands/sync.js';
import { registerTapeCommands } from './commands/tapes.js';
import { registerTransferCommands } from './commands/transfer.js';
import { registerUiCommands } from './commands/ui.js';
import { registerWorkspaceCommands } from './commands/workspace.js';
import { createCliContext, type CliContext, type CliIo } from './context.js';
import { emit, reportError } from './output.js';
import type { Action, CommandOutcome } from './action.js';

/**
 * Runs the CLI on `argv` (without `node engram`) and returns the exit code. The only place that decides exit codes;
 * commands throw EngramErrors and return results.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const pretty = argv.includes('--pretty');
  let context: CliContext | undefined;
  let exitCode = 0;

  const program = new Command('engram')
    .description('Memory across sessions for coding agents, and the reasons behind the code.')
    .version(VERSION, '-V, --version')
    .option('--json', 'JSON output (the default; for explicitness in scripts)')
    .option('--pretty', 'human-readable output instead of JSON')
    .option('--home <dir>', 'data folder (default: $ENGRAM_HOME or ~/.engram)')
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: () => {},
    });

  const action: Action =
    (handler) =>
    async (...args) => {
      const command = args.at(-1) as Command;
      const globals = command.optsWithGlobals<{ home?: string; pretty?: boolean }>();
      context = createCliContext(io, globals.home ? { home: globals.home } : {});
      const run = handler as (context: CliContext, ...rest: unknown[]) => CommandOutcome | Promise<CommandOutcome>;
      const outcome = await run(context, ...args.slice(0, -1));
      if (outcome.result !== undefined) emit(io, outcome.result, globals.pretty ?? false, outcome.pretty);
      exitCode = outcome.exitCode ?? 0;
    };

  registerEngramCommands(program, action);
  registerSearchCommands(program, action);
  registerTransferCommands(program, action);
  registerWorkspaceCommands(program, action);
  registerHealthCommands(program, action);
  registerHooksCommands(program, action);
  registerEnvCommands(program, action);
  registerDemoCommands(program, action);
  registerLearnCommands(program, action);
  registerExplainCommands(program, action);
  registerTapeCommands(program, action);
  registerDocsCommands(program, action);
  registerMcpCommands(program, action);
  registerReviewCommands(program, action);
  registerContextCommands(program, action);
  registerServeCommands(program, action);
  registerSyncCommands(program, action);
  registerUiCommands(program, action);

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(error.code)) return 0;
      const message = error.message.replace(/^error: /, '');
      return reportError(io, new EngramError('USAGE', `${message} (see engram --help)`), pretty);
    }
    return reportError(io, error, pretty);
  } finally {
    context?.close();
  }
}
