import type { Command } from 'commander';
import { resolve } from 'node:path';
import { initRepo } from '../../services/index.js';
import type { Action } from '../program.js';

/** init. */
export function registerWorkspaceCommands(program: Command, action: Action): void {
  program
    .command('init')
    .description('opt this repository in: create .engram/ (committed) and .engram-cache/ (ignored by git)')
    .option('--path <dir>', 'the repository (default: the current folder)')
    .action(
      action((context, flags: { path?: string }) => {
        const result = initRepo({ cwd: resolve(context.io.cwd, flags.path ?? '.') });
        return {
          result,
          pretty: () => {
            const lines = [
              result.already_initialized ? `${result.root} was already opted in` : `opted in ${result.root}`,
              ...result.created.map((path) => `  created ${path}`),
              result.gitignore === 'present'
                ? '  .gitignore already ignores .engram-cache/'
                : `  ${result.gitignore === 'created' ? 'created .gitignore with' : 'added to .gitignore:'} .engram-cache/`,
            ];
            if (!result.git) lines.push('  note: this folder is not inside a git repository');
            return lines.join('\n');
          },
        };
      }),
    );
}
