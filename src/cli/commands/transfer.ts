import { resolve } from 'node:path';
import type { Command } from 'commander';
import { writeFileAtomicWith } from '../../core/index.js';
import { CLI_USER, embedNewEngrams, exportEngrams, importEngrams, type CatchUpReport } from '../../services/index.js';
import { parseStatuses, readInputFile, readStdin } from '../_args.js';
import { progressBar } from '../progress.js';
import { renderFields } from '../render.js';
import type { Action } from '../program.js';

/** export, import. */
export function registerTransferCommands(program: Command, action: Action): void {
  program
    .command('export')
    .description('write active engrams with their learning state as JSON lines (stdout, or --output FILE); --status all for a backup')
    .option('-o, --output <file>', 'write to this file (atomically) instead of stdout')
    .option('--project <name>', 'only this project')
    .option('--include-deleted', 'include soft-deleted engrams')
    .option('--status <list>', 'review states to export (default active): pending, active, rejected, deprecated or all')
    .action(
      action((context, flags: { output?: string; project?: string; includeDeleted?: boolean; status?: string }) => {
        const store = context.store();
        const options = {
          includeDeleted: flags.includeDeleted ?? false,
          ...(flags.project !== undefined ? { project: flags.project } : {}),
          ...(flags.status !== undefined ? { statuses: parseStatuses(flags.status) } : {}),
        };
        if (!flags.output) {
          exportEngrams(store, (line) => context.io.stdout.write(`${line}\n`), options);
          return { result: undefined, pretty: () => '' };
        }
        const target = resolve(context.io.cwd, flags.output);
        // Temp file, fsync, rename: a reader (or a crash) sees the old export or the new one, never half of one.
        const { count } = writeFileAtomicWith(target, (write) => exportEngrams(store, (line) => write(`${line}\n`), options), { mode: 0o600 });
        const result = { exported: count, file: target };
        return { result, pretty: () => `exported ${count} engrams to ${target}` };
      }),
    );

  program
    .command('import')
    .description('read engrams from JSON lines: an export, or minimal {"text", "category"?, "tags"?} lines')
    .argument('[file]', "file to read ('-' or nothing: stdin)")
    .option('--dry-run', 'validate and count, write nothing')
    .option('--no-embed', 'store only; embed later with engram reindex')
    .action(
      action(async (context, file: string | undefined, flags: { dryRun?: boolean; embed: boolean }) => {
        const text = file === undefined || file === '-' ? await readStdin(context.io.stdin) : readInputFile(context.io.cwd, file);
        const store = context.store();
        const saving = progressBar(context.io, 'importing');
        let report;
        try {
          report = importEngrams(store, text.split('\n'), {
            dryRun: flags.dryRun ?? false,
            now: context.io.now,
            actor: CLI_USER,
            policy: context.governance(),
            onProgress: (done, total) => saving.update(done, total),
          });
        } finally {
          saving.stop();
        }
        // New engrams are embedded now, in batches, so the first search after an import does not pay for it.
        let embedded: CatchUpReport = { vectors: null, note: null };
        if (!report.dry_run && flags.embed) {
          const bar = progressBar(context.io, 'embedding');
          embedded = await embedNewEngrams(store, () => context.searchEngine().embedder(), {
            batchSize: context.settings().config.embed.batch_size,
            onProgress: (count, total) => bar.update(count, total),
            onError: (error) => context.log().warn('embedding after import failed', { error }),
            now: context.io.now,
          }).finally(() => bar.stop());
        }
        const result = { ...report, ...embedded };
        return { result, pretty: () => renderFields({ ...result }) };
      }),
    );
}
