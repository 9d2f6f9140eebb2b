import type { Command } from 'commander';
import { findRepo } from '../../core/index.js';
import { CLI_USER, disableContext, recallContextText, syncContext } from '../../services/index.js';
import { integerOption } from '../_args.js';
import { undoNote } from '../render.js';
import type { Action } from '../action.js';

interface SyncFlags {
  file?: string[];
  projectOnly?: boolean;
  budget?: number;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** context sync | off | show: reviewed memories as a marked block in AGENTS.md / CLAUDE.md for agents without hooks. */
export function registerContextCommands(program: Command, action: Action): void {
  const context = program
    .command('context')
    .description('keep a block of reviewed memories in AGENTS.md, CLAUDE.md, … for agents without hooks (opt-in per repository)');

  context
    .command('sync')
    .description('write the block between <!-- engram:begin --> and <!-- engram:end --> (atomically; nothing outside the markers changes)')
    .option('--file <path>', 'a context file to keep current (repeatable); names it for this repository from now on', collect)
    .option('--project-only', "leave personal engrams out (the file is committed and others read it)")
    .option('--budget <chars>', 'characters the block may take (default: governance.context_chars)', integerOption('--budget', 500))
    .action(
      action((cli, flags: SyncFlags) => {
        const report = syncContext(cli.store(), {
          home: cli.settings().paths.home,
          cwd: cli.io.cwd,
          policy: cli.governance(),
          now: cli.io.now,
          actor: CLI_USER,
          ...(flags.file?.length ? { files: flags.file } : {}),
          ...(flags.projectOnly ? { projectOnly: true } : {}),
          ...(flags.budget !== undefined ? { budget: flags.budget } : {}),
        });
        return {
          result: report,
          pretty: () =>
            report.files
              .map(
                (file) =>
                  `${file.file}: ${file.status === 'written' ? `wrote ${file.ids.length} memories` : 'already current'}${file.dropped.length ? ` (${file.dropped.length} left out for the budget)` : ''}${undoNote(file.undo_token)}`,
              )
              .join('\n'),
        };
      }),
    );

  context
    .command('off')
    .description('stop keeping context files of this repository current (the block stays unless --remove)')
    .option('--file <path>', 'only this file (repeatable)', collect)
    .option('--remove', 'also take the block out of the file')
    .action(
      action((cli, flags: { file?: string[]; remove?: boolean }) => {
        const result = disableContext(cli.store(), {
          home: cli.settings().paths.home,
          cwd: cli.io.cwd,
          actor: CLI_USER,
          now: cli.io.now,
          ...(flags.file?.length ? { files: flags.file } : {}),
          ...(flags.remove ? { removeBlock: true } : {}),
        });
        return { result, pretty: () => `no longer kept current: ${result.disabled.join(', ') || 'nothing'}${result.removed.length ? `; block removed from ${result.removed.join(', ')}` : ''}` };
      }),
    );

  context
    .command('show')
    .description('print the block this repository would get (what MCP serves as memory://recall), writing nothing')
    .option('--project-only', 'leave personal engrams out')
    .option('--budget <chars>', 'characters it may take', integerOption('--budget', 500))
    .action(
      action((cli, flags: { projectOnly?: boolean; budget?: number }) => {
        const text = recallContextText(cli.store(), {
          project: findRepo(cli.io.cwd)?.name ?? null,
          policy: cli.governance(),
          now: cli.io.now(),
          ...(flags.projectOnly ? { projectOnly: true } : {}),
          ...(flags.budget !== undefined ? { budget: flags.budget } : {}),
        });
        return { result: text, pretty: () => text.text };
      }),
    );
}
