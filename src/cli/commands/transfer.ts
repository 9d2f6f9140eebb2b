import { closeSync, openSync, renameSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { EngramError } from '../../core/index.js';
import { embedNewEngrams, exportEngrams, importEngrams, type CatchUpReport } from '../../services/index.js';
import { readInputFile, readStdin } from '../_args.js';
import { progressBar } from '../progress.js';
import { renderFields } from '../render.js';
import type { Action } from '../program.js';

/** export, import. */
export function registerTransferCommands(program: Command, action: Action): void {
  program
    .command('export')
    .description('write every engram with its learning state as JSON lines (stdout, or --output FILE)')
    .option('-o, --output <file>', 'write to this file (atomically) instead of stdout')
    .option('--project <name>', 'only this project')
    .option('--include-deleted', 'include soft-deleted engrams')
    .action(
      action((context, flags: { output?: string; project?: string; includeDeleted?: boolean }) => {
        const store = context.store();
        const options = {
          includeDeleted: flags.includeDeleted ?? false,
          ...(flags.project !== undefined ? { project: flags.project } : {}),
        };
        if (!flags.output) {
          exportEngrams(store, (line) => context.io.stdout.write(`${line}\n`), options);
          return { result: undefined, pretty: () => '' };
        }
        const target = resolve(context.io.cwd, flags.output);
        const temporary = `${target}.${process.pid}.tmp`;
        let count: number;
        try {
          const fd = openSync(temporary, 'w', 0o600);
          try {
            ({ count } = exportEngrams(store, (line) => writeSync(fd, `${line}\n`), options));
          } finally {
            closeSync(fd);
          }
          renameSync(temporary, target);
        } catch (error) {
          if (error instanceof EngramError) throw error;
          throw new EngramError('IO', `could not write ${target}: ${(error as Error).message}`, { cause: error });
        }
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
