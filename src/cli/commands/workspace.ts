import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { initRepo, installGitHooks } from '../../services/index.js';
import type { Action } from '../action.js';

/** init. */
export function registerWorkspaceCommands(program: Command, action: Action): void {
  program
    .command('init')
    .description('opt this repository in: create .engram/ (committed) and .engram-cache/ (ignored by git)')
    .option('--path <dir>', 'the repository (default: the current folder)')
    .option('--git-hooks', 'also install the git hooks: tapes staged on commit, index rebuilt and shared engrams imported (engram sync --import) after merge and checkout')
    .action(
      action((context, flags: { path?: string; gitHooks?: boolean }) => {
        const initialized = initRepo({ cwd: resolve(context.io.cwd, flags.path ?? '.') });
        const hooks = flags.gitHooks ? installGitHooks({ cwd: initialized.root, engram: join(context.installRoot, 'bin', 'engram') }) : null;
        const result = { ...initialized, git_hooks: hooks?.hooks.map((hook) => ({ hook: hook.hook, action: hook.action })) ?? null };
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
            for (const hook of result.git_hooks ?? []) lines.push(`  git hook ${hook.hook}: ${hook.action}`);
            return lines.join('\n');
          },
        };
      }),
    );
}
