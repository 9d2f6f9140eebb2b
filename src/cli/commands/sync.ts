import { resolve } from 'node:path';
import type { Command } from 'commander';
import { EngramError } from '../../core/index.js';
import { receiveChanges, shareChanges, syncRepository, syncStatus } from '../../services/index.js';
import { renderFields } from '../render.js';
import type { Action } from '../action.js';

/**
 * `engram sync`: the project's memory through git, in the Go engram's `.engram/chunks/` + `manifest.json` layout.
 * Plain `engram sync` imports what a pull brought, then writes what changed here as one new chunk (commit it);
 * `--import` only reads (the git hooks run it after a merge or checkout); `--status` counts without writing.
 * Only a repository opted in with `engram init` is written to.
 */
export function registerSyncCommands(program: Command, action: Action): void {
  program
    .command('sync')
    .description("share this repository's project memory through git: .engram/chunks/*.jsonl.gz + manifest.json (the Go engram's layout; commit them)")
    .option('--import', 'only apply chunks a pull brought (what the git hooks run); writes nothing into the repository')
    .option('--export', 'only write what changed here as a new chunk')
    .option('--status', 'local, remote and pending counts; writes nothing')
    .option('--path <dir>', 'the repository (default: the current folder)')
    .option('--prompts', "also share this project's user prompts (default: sync.prompts in config.json, off)")
    .action(
      action((context, flags: { import?: boolean; export?: boolean; status?: boolean; path?: string; prompts?: boolean }) => {
        const chosen = [flags.import, flags.export, flags.status].filter(Boolean).length;
        if (chosen > 1) throw new EngramError('USAGE', 'give at most one of --import, --export and --status');
        const repo = syncRepository(resolve(context.io.cwd, flags.path ?? '.'));
        const store = context.store();
        if (flags.status) {
          const result = syncStatus(store, repo);
          return {
            result,
            pretty: () =>
              [
                `${result.project} (${result.repo})`,
                `  local:   ${result.local.observations} engrams, ${result.local.sessions} sessions, ${result.local.prompts} prompts`,
                `  remote:  ${result.remote.chunks} chunks, ${result.remote.observations} engrams, ${result.remote.sessions} sessions, ${result.remote.prompts} prompts`,
                `  pending: ${result.pending.import} chunks to import, ${result.pending.export} engram changes to export`,
                ...result.rejected.map((chunk) => `  rejected chunk ${chunk.id}: ${chunk.error ?? ''}`),
              ].join('\n'),
          };
        }
        const now = context.io.now();
        const imported = flags.export ? null : receiveChanges(store, repo, { now, actor: { by: 'sync', via: 'cli' }, policy: context.governance() });
        const exported = flags.import ? null : shareChanges(store, repo, { now, prompts: flags.prompts ?? context.settings().config.sync.prompts });
        const result = { repo: repo.root, project: repo.project, imported, exported };
        return {
          result,
          pretty: () =>
            [
              `${repo.project} (${repo.root})`,
              ...(imported ? [`  imported: ${renderFields({ ...imported, chunks_rejected: imported.chunks_rejected.map((c) => `${c.id}: ${c.error}`).join('; ') || 'none' }).replace(/\n/g, '\n    ')}`] : []),
              ...(exported
                ? [
                    exported.is_empty
                      ? '  exported: nothing changed since the last sync'
                      : `  exported: chunk ${exported.chunk_id} (${exported.observations} engrams, ${exported.sessions} sessions, ${exported.prompts} prompts${exported.redacted ? `, ${exported.redacted} strings redacted` : ''}); commit .engram/`,
                  ]
                : []),
            ].join('\n'),
        };
      }),
    );
}
