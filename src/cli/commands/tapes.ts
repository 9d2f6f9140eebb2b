import type { Command } from 'commander';
import { EngramError } from '../../core/index.js';
import {
  collectGarbage,
  HarnessSchema,
  ingestSessions,
  listTapes,
  readTape,
  readTapeText,
  recordTranscript,
  resolveTape,
  summarizeTape,
  tapeLocation,
  type Harness,
  type IngestReport,
  type RecordResult,
} from '../../services/index.js';
import { integerOption, readStdin } from '../_args.js';
import type { Action } from '../action.js';

function parseAgent(value: string | undefined): Harness | undefined {
  if (value === undefined) return undefined;
  const parsed = HarnessSchema.safeParse(value);
  if (!parsed.success) throw new EngramError('USAGE', `--agent must be claude or codex, got '${value}'`);
  return parsed.data;
}

function renderIngest(report: IngestReport): string {
  const lines = [
    `${report.tapes_written} tape(s) written, ${report.tapes_existing} already present → ${report.tapes_dir}${report.opted_in ? '' : ' (repository not opted in: tapes stay in the Engram home)'}`,
    ...report.sources.map(
      (source) =>
        `  ${source.status.padEnd(9)} ${source.harness} ${source.path}${source.new_lines ? ` +${source.new_lines} lines` : ''}${source.tape_id ? ` → ${source.tape_id.slice(0, 12)}` : ''}${source.error ? ` (${source.error.code}: ${source.error.message})` : ''}`,
    ),
  ];
  if (report.sources.length === 0) lines.push('  no sessions of this repository found');
  return lines.join('\n');
}

function renderRecord(result: RecordResult): string {
  return result.tapes
    .map((tape) => `${tape.written ? 'recorded' : 'already recorded'} ${tape.tape_id} (${tape.harness} session ${tape.session_id}, ${tape.events} events, coverage ${tape.coverage.grade})`)
    .join('\n');
}

/** ingest, record, tapes, show, view, gc. */
export function registerTapeCommands(program: Command, action: Action): void {
  program
    .command('ingest')
    .description("turn this repository's new agent session logs into tapes (incremental; a second run adds nothing)")
    .option('--agent <agent>', 'only claude or codex sessions')
    .option('--file <path>', 'ingest this transcript only')
    .option('--strict', 'refuse transcripts from agent versions the adapters do not support')
    .action(
      action(async (context, flags: { agent?: string; file?: string; strict?: boolean }) => {
        const agent = parseAgent(flags.agent);
        const report = await ingestSessions({
          cwd: context.io.cwd,
          env: context.env(),
          strict: flags.strict ?? false,
          ...(agent ? { agent } : {}),
          ...(flags.file !== undefined ? { file: flags.file } : {}),
        });
        return { result: report, pretty: () => renderIngest(report) };
      }),
    );

  program
    .command('record')
    .description('record a transcript read from stdin as a tape')
    .option('--stdin', 'read the transcript from stdin (required)')
    .option('--agent <agent>', 'claude or codex (detected when absent)')
    .option('--strict', 'refuse an agent version the adapters do not support')
    .action(
      action(async (context, flags: { stdin?: boolean; agent?: string; strict?: boolean }) => {
        if (!flags.stdin) throw new EngramError('USAGE', 'record reads a transcript from stdin: pass --stdin');
        const agent = parseAgent(flags.agent);
        const text = await readStdin(context.io.stdin);
        if (text.trim() === '') throw new EngramError('INVALID_INPUT', 'stdin is empty: pipe a Claude Code or Codex transcript');
        const result = await recordTranscript({ text, cwd: context.io.cwd, home: context.env().home, strict: flags.strict ?? false, ...(agent ? { harness: agent } : {}) });
        return { result, pretty: () => renderRecord(result) };
      }),
    );

  program
    .command('tapes')
    .description("list this repository's tapes (metadata only)")
    .action(
      action((context) => {
        const location = tapeLocation(context.io.cwd, context.env().home);
        const tapes = listTapes(location.tapes_dir)
          .map(summarizeTape)
          .sort((a, b) => ((a.time ?? '') < (b.time ?? '') ? -1 : (a.time ?? '') > (b.time ?? '') ? 1 : a.tape_id < b.tape_id ? -1 : 1));
        return {
          result: tapes,
          pretty: () =>
            tapes.length === 0
              ? `no tapes in ${location.tapes_dir}`
              : tapes
                  .map((tape) => `${tape.tape_id.slice(0, 12)}  ${tape.time ?? '-'}  ${tape.agent}${tape.subagent ? `/${tape.subagent}` : ''}  ${tape.model ?? '-'}  ${tape.events} events  ${tape.size} B  ${tape.coverage ?? '-'}`)
                  .join('\n'),
        };
      }),
    );

  program
    .command('show')
    .description("a tape's events (JSON), or its JSONL with --raw")
    .argument('<tape>', 'tape id or a prefix of at least 8 characters')
    .option('--raw', 'print the tape JSONL as stored')
    .action(
      action((context, ref: string, flags: { raw?: boolean }) => {
        const file = resolveTape(tapeLocation(context.io.cwd, context.env().home).tapes_dir, ref);
        if (flags.raw) {
          context.io.stdout.write(readTapeText(file.path));
          return { result: undefined, pretty: () => '' };
        }
        const tape = readTape(file.path);
        return {
          result: { tape_id: tape.tape_id, path: tape.path, events: tape.events },
          pretty: () => tape.events.map((event, offset) => `${offset}\t${JSON.stringify(event)}`).join('\n'),
        };
      }),
    );

  program
    .command('view')
    .description('the events around one event offset of a tape')
    .argument('<tape>', 'tape id or a prefix of at least 8 characters')
    .requiredOption('--at <offset>', 'event offset (0 is the meta event)', integerOption('--at'))
    .option('--before <n>', 'events before the offset', integerOption('--before'), 10)
    .option('--after <n>', 'events after the offset', integerOption('--after'), 10)
    .action(
      action((context, ref: string, flags: { at: number; before: number; after: number }) => {
        const tape = readTape(resolveTape(tapeLocation(context.io.cwd, context.env().home).tapes_dir, ref).path);
        if (flags.at >= tape.events.length) {
          throw new EngramError('NOT_FOUND', `tape ${tape.tape_id.slice(0, 12)} has ${tape.events.length} events: no offset ${flags.at}`);
        }
        const from = Math.max(0, flags.at - flags.before);
        const to = Math.min(tape.events.length - 1, flags.at + flags.after);
        const events = tape.events.slice(from, to + 1).map((event, i) => ({ offset: from + i, event }));
        const result = { tape_id: tape.tape_id, at: flags.at, from, to, total: tape.events.length, events };
        return { result, pretty: () => events.map(({ offset, event }) => `${offset === flags.at ? '>' : ' '}${offset}\t${JSON.stringify(event)}`).join('\n') };
      }),
    );

  program
    .command('gc')
    .description('remove temp files left by interrupted tape writes (never a tape)')
    .action(
      action((context) => {
        const location = tapeLocation(context.io.cwd, context.env().home);
        const report = collectGarbage(location, context.io.now());
        return {
          result: { ...report, tapes_dir: location.tapes_dir, cache_dir: location.cache_dir },
          pretty: () => (report.removed.length === 0 ? 'nothing to remove' : report.removed.map((path) => `removed ${path}`).join('\n')),
        };
      }),
    );
}
