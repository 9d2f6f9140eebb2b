import { Option, type Command } from 'commander';
import * as z from 'zod';
import { EngramError, formatIssues } from '../../core/index.js';
import { explainInFolder, INDEX_PROFILE_NAMES, rebuildFolderIndex, type ExplainResponse, type IndexProfile } from '../../services/index.js';
import type { Action } from '../action.js';

/** `<file>:<start>-<end>` (or `<file>:<line>`), 1-based inclusive; the file may itself contain colons. */
const SpanTargetSchema = z
  .string()
  .regex(/^(.+):(\d+)(?:-(\d+))?$/, 'expected <file>:<start>-<end>, e.g. src/auth.ts:42-60')
  .transform((value) => {
    const [, file, start, end] = /^(.+):(\d+)(?:-(\d+))?$/.exec(value)!;
    return { file: file!, start: Number(start), end: Number(end ?? start) };
  })
  .refine((span) => span.start >= 1 && span.end >= span.start, 'lines are 1-based and start ≤ end');

const ExplainFlagsSchema = z
  .object({
    before: z.coerce.number().int().min(0).max(10_000).optional(),
    after: z.coerce.number().int().min(0).max(10_000).optional(),
    brief: z.boolean().optional(),
    minConfidence: z.coerce.number().min(0).max(1).optional(),
    all: z.boolean().optional(),
    expandUntil: z.coerce.number().int().min(1).optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
    profile: z.enum(INDEX_PROFILE_NAMES as [IndexProfile, ...IndexProfile[]]).optional(),
  })
  .strict();

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new EngramError('USAGE', `invalid ${what}: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

function renderExplain(response: ExplainResponse): string {
  const lines = [`${response.span.file}:${response.span.start}-${response.span.end} — ${response.total} tape(s)`];
  for (const result of response.results) {
    const crossing = result.continuation ? ` (continues into ${result.continuation.continues_into.slice(0, 12)}, ${result.continuation.signal})` : '';
    lines.push(`${result.tape_id.slice(0, 12)}  ${result.via}${crossing}  depth ${result.depth}  conf ${result.confidence.toFixed(2)}  ${result.session.agent} ${result.session.id}`);
    for (const touch of result.touches) lines.push(`  @${touch.offset} ${touch.kind} ${touch.file ?? ''} ${touch.part} ${touch.confidence.toFixed(2)} ${touch.time ?? ''}`);
    for (const window of result.windows) {
      lines.push(`  events ${window.from}-${window.to}:`);
      for (const [i, event] of (window.events ?? []).entries()) lines.push(`    ${window.from + i} ${JSON.stringify(event).slice(0, 200)}`);
    }
  }
  const cut = response.truncated;
  if (cut.fanout || cut.edges || cut.depth || cut.limit) lines.push(`truncated: ${JSON.stringify(cut)}`);
  return lines.join('\n');
}

/** explain, index rebuild. */
export function registerExplainCommands(program: Command, action: Action): void {
  program
    .command('explain')
    .description('the tapes that wrote, edited, read or discussed a span of code, with transcript windows')
    .argument('<span>', '<file>:<start>-<end>, lines 1-based inclusive')
    .option('--before <n>', 'events before each touch')
    .option('--after <n>', 'events after each touch')
    .option('--brief', 'touch metadata only (tape, offset, confidence), no transcript')
    .option('--min-confidence <x>', 'lineage and continuation edges below this are not followed (default 0.5)')
    .option('--all', 'also follow low-confidence and location-only edges')
    .option('--expand-until <n>', 'widen the span until at most n tapes match')
    .option('--limit <n>', 'tapes to return (default 10)')
    .addOption(new Option('--profile <name>', 'index profile').choices(INDEX_PROFILE_NAMES))
    .action(
      action((context, spanArgument: string, rawFlags: Record<string, unknown>) => {
        const target = parse(SpanTargetSchema, spanArgument, 'span');
        const { profile, ...flags } = parse(ExplainFlagsSchema, rawFlags, 'explain options');
        const options = Object.fromEntries(Object.entries(flags).filter(([, value]) => value !== undefined));
        const response = explainInFolder({ cwd: context.io.cwd, home: context.env().home, ...(profile ? { profile } : {}) }, target, options);
        return { result: response, pretty: () => renderExplain(response) };
      }),
    );

  const index = program.command('index').description('the evidence index derived from tapes');
  index
    .command('rebuild')
    .description('rebuild the evidence index of this folder from its tapes')
    .addOption(new Option('--profile <name>', 'index profile').choices(INDEX_PROFILE_NAMES).default('default'))
    .action(
      action((context, flags: { profile: IndexProfile }) => {
        const report = rebuildFolderIndex({ cwd: context.io.cwd, home: context.env().home, profile: flags.profile });
        return {
          result: report,
          pretty: () =>
            `${report.tapes} tape(s) → ${report.path} (${report.profile}): ${report.fingerprints} fingerprints, ${report.edges} edges, ` +
            `${report.tombstones} tombstones (+${report.carried_tombstones} kept), ${report.continuations} continuations, ${report.bytes} bytes, ${report.ms} ms`,
        };
      }),
    );
}
