import type { Command } from 'commander';
import type { Action } from '../action.js';

/**
 * `engram mcp`: Engram as an MCP server on stdio. bin/engram → dist/cli.mjs starts it without loading the CLI
 * (src/cli/main.ts); this registration lists it in `engram --help` and runs it when the CLI is driven in-process.
 */
export function registerMcpCommands(program: Command, action: Action): void {
  program
    .command('mcp')
    .description('run Engram as an MCP server on stdio (Claude Code, Codex and other MCP clients)')
    .option('--tools <list>', 'profiles and tool names: engram, agent, admin, all (default), or names such as mem_save,engram_search')
    .action(
      action(async (context, flags: { tools?: string }) => {
        const { runMcp } = await import('../../mcp/main.js');
        const exitCode = await runMcp(flags.tools !== undefined ? [`--tools=${flags.tools}`] : [], {
          runtimeDir: context.runtimeDir,
          env: { ...context.io.env, ENGRAM_HOME: context.env().home },
          cwd: context.io.cwd,
        });
        return { result: undefined, pretty: () => '', exitCode };
      }),
    );
}
