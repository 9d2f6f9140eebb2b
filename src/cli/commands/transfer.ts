import { resolve } from 'node:path';
import type { Command } from 'commander';
import { EngramError, formatIssues, writeFileAtomic, writeFileAtomicWith } from '../../core/index.js';
import {
  CLI_USER,
  embedNewEngrams,
  exportEngrams,
  exportGoData,
  GO_DB_MAX_BYTES,
  GoExportInSchema,
  importEngrams,
  importGoData,
  locateGoSource,
  readGoDatabase,
  type CatchUpReport,
  type GoExportIn,
} from '../../services/index.js';
import { withBulkEmbedder } from '../bulk-embed.js';
import type { CliContext } from '../context.js';
import { parseStatuses, readInputFile, readStdin } from '../_args.js';
import { progressBar } from '../progress.js';
import { renderFields } from '../render.js';
import type { Action } from '../action.js';

/** export, import. */
export function registerTransferCommands(program: Command, action: Action): void {
  program
    .command('export')
    .description('write active engrams with their learning state as JSON lines (stdout, or --output FILE); --status all for a backup')
    .option('-o, --output <file>', 'write to this file (atomically) instead of stdout')
    .option('--project <name>', 'only this project')
    .option('--include-deleted', 'include soft-deleted engrams')
    .option('--status <list>', 'review states to export (default active): pending, active, rejected, deprecated or all')
    .option('--go', "the Go engram's export JSON instead (its `engram export` / GET /export shape, soft-deleted rows included)")
    .action(
      action((context, flags: { output?: string; project?: string; includeDeleted?: boolean; status?: string; go?: boolean }) => {
        const store = context.store();
        if (flags.go) {
          const json = `${JSON.stringify(exportGoData(store, { ...(flags.project !== undefined ? { project: flags.project } : {}), now: context.io.now }), null, 2)}\n`;
          if (!flags.output) {
            context.io.stdout.write(json);
            return { result: undefined, pretty: () => '' };
          }
          const target = resolve(context.io.cwd, flags.output);
          writeFileAtomic(target, json, { mode: 0o600 });
          return { result: { file: target, format: 'go' }, pretty: () => `exported the Go engram's JSON to ${target}` };
        }
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
    .description('read engrams from JSON lines (an export, or minimal {"text", "category"?, "tags"?} lines), a Go engram export JSON, or with --from-go the Go engram\'s database')
    .argument('[file]', "file to read ('-' or nothing: stdin)")
    .option('--from-go [path]', "move in from the Go engram: its engram.db or export JSON (default: $ENGRAM_DATA_DIR/engram.db, else ~/.engram/engram.db, moved aside to go-engram.db first when it sits where Engram's store goes)")
    .option('--max-bytes <n>', `largest Go database to read (default ${GO_DB_MAX_BYTES})`)
    .option('--dry-run', 'validate and count, write nothing')
    .option('--no-embed', 'store only; embed later with engram reindex')
    .action(
      action(async (context, file: string | undefined, flags: { fromGo?: string | boolean; maxBytes?: string; dryRun?: boolean; embed: boolean }) => {
        if (flags.fromGo !== undefined) return importFromGo(context, typeof flags.fromGo === 'string' ? flags.fromGo : file, flags);
        const text = file === undefined || file === '-' ? await readStdin(context.io.stdin) : readInputFile(context.io.cwd, file);
        const goExport = asGoExport(text);
        if (goExport) return importGoExport(context, goExport, { source: file ?? 'stdin', moved_from: null }, flags);
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
        const embedded = !report.dry_run && flags.embed ? await embedAfterImport(context, report.created + report.updated) : { vectors: null, note: null };
        const result = { ...report, ...embedded };
        return { result, pretty: () => renderFields({ ...result }) };
      }),
    );
}

/** New engrams are embedded now, in batches (on every core for a big import), so the first search after an import
 * does not pay for it. */
async function embedAfterImport(context: CliContext, written: number): Promise<CatchUpReport> {
  const bar = progressBar(context.io, 'embedding');
  return withBulkEmbedder(context, written, async (bulk) => {
    const report = await embedNewEngrams(context.store(), bulk.load, {
      ...(bulk.batchSize ? { batchSize: bulk.batchSize } : {}),
      onProgress: (count, total) => bar.update(count, total),
      onError: (error) => context.log().warn('embedding after import failed', { error }),
      now: context.io.now,
    });
    // How many worker threads embedded (0: this thread), so a slow import can be told from one on a single core.
    return report.vectors ? { ...report, vectors: { ...report.vectors, workers: bulk.workers() } } : report;
  }).finally(() => bar.stop());
}

/** The text as a Go engram export (one JSON object with its lists), or null when it is JSON lines. */
function asGoExport(text: string): GoExportIn | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') || !/"(?:observations|sessions)"\s*:/.test(trimmed.slice(0, 100_000))) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(trimmed);
  } catch {
    return null;
  }
  if (raw === null || typeof raw !== 'object' || !('observations' in raw || 'sessions' in raw)) return null;
  const parsed = GoExportInSchema.safeParse(raw);
  if (!parsed.success) throw new EngramError('INVALID_INPUT', `not a Go engram export: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

/** `engram import --from-go [path]`: find the Go engram's data (moving its database out of the store's way), read it
 * without trusting it, import it in one transaction. */
async function importFromGo(context: CliContext, given: string | undefined, flags: { maxBytes?: string; dryRun?: boolean; embed: boolean }) {
  const maxBytes = flags.maxBytes === undefined ? GO_DB_MAX_BYTES : Number(flags.maxBytes);
  if (!Number.isInteger(maxBytes) || maxBytes <= 0) throw new EngramError('USAGE', `--max-bytes must be a positive number of bytes, got ${flags.maxBytes}`);
  const source = locateGoSource({ given, cwd: context.io.cwd, env: context.env(), storePath: context.settings().paths.db });
  let data: GoExportIn;
  if (source.kind === 'sqlite') {
    data = readGoDatabase(source.path, { maxBytes });
  } else {
    const parsed = asGoExport(readInputFile(context.io.cwd, source.path));
    if (!parsed) throw new EngramError('INVALID_INPUT', `${source.path} is neither a Go engram database nor its export JSON`);
    data = parsed;
  }
  return importGoExport(context, data, { source: source.path, moved_from: source.moved_from }, flags);
}

async function importGoExport(context: CliContext, data: GoExportIn, origin: { source: string; moved_from: string | null }, flags: { dryRun?: boolean; embed: boolean }) {
  const counts = { sessions: data.sessions.length, observations: data.observations.length, prompts: data.prompts.length };
  if (flags.dryRun) {
    const result = { ...origin, dry_run: true, found: counts };
    return { result, pretty: () => renderFields({ ...result }) };
  }
  const report = importGoData(context.store(), data, { actor: 'import', via: 'cli', now: context.io.now });
  const written = report.observations_imported + report.observations_updated;
  const embedded = flags.embed && written > 0 ? await embedAfterImport(context, written) : { vectors: null, note: null };
  const result = { ...origin, found: counts, ...report, ...embedded };
  return {
    result,
    pretty: () =>
      [
        `imported from ${origin.source}${origin.moved_from ? ` (moved there from ${origin.moved_from}, where Engram's store goes)` : ''}`,
        `  sessions ${report.sessions_imported}, observations ${report.observations_imported} (+${report.observations_updated} updated), prompts ${report.prompts_imported}, unchanged ${report.unchanged}`,
        ...(report.renumbered.length ? [`  ${report.renumbered.length} observations got new ids (their Go ids were taken): ${report.renumbered.map((r) => `${r.go_id}→${r.id}`).join(', ')}`] : []),
        ...report.skipped.map((skip) => `  skipped ${skip.kind} ${skip.id ?? ''}: ${skip.reason}`),
      ].join('\n'),
  };
}
