import type { Command } from 'commander';
import * as z from 'zod';
import { EngramError, formatIssues } from '../../core/index.js';
import {
  compactProject,
  correctEntry,
  createFoldAgent,
  describeIds,
  explainConcept,
  foldProject,
  initProject,
  lintProject,
  projectStatus,
  readDocEntry,
  reviewChunk,
  runProject,
  type AgentFactory,
  type DispatchEvent,
  type InitMode,
  type KnowledgeEnv,
  type RunEvent,
} from '../../services/index.js';
import type { CliContext } from '../context.js';
import type { Action } from '../action.js';

const DateSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD')
  .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)), 'not a calendar date');
const ChunkSchema = z.coerce.number().int().min(1);

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new EngramError('USAGE', `invalid ${what}: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

/** The fold agent through Engram's LLM client (command mode), its calls counted in the home's store. */
const agentFactory = (context: CliContext): AgentFactory => (config) => createFoldAgent(context.settings(), config, { store: context.store(), log: context.log() });

const knowledgeEnv = (context: CliContext): KnowledgeEnv => {
  const env = context.env();
  return { home: env.home, claudeConfigDir: env.claudeConfigDir, codexHome: env.codexHome, userHome: env.userHome };
};

/** One progress line per dispatch event, on stderr (stdout stays one JSON result, or the event stream of `run`). */
function dispatchLine(event: DispatchEvent): string {
  const chunk = `chunk ${String(event.chunk).padStart(3, '0')} (${event.kind})`;
  switch (event.state) {
    case 'dispatched':
      return `${chunk}: ${event.items} item(s), ${event.chars} chars, ids ${describeIds(event.reserved ?? []) || 'none'} → dispatched`;
    case 'agent':
      return `${chunk}: fold agent running${event.attempt ? ` (retry ${event.attempt})` : ''}…`;
    case 'retry':
    case 'validated':
      return `${chunk}: agent done in ${Math.round((event.ms ?? 0) / 1000)} s, lint ${event.violations ? `${event.violations} violation(s)` : 'clean'}${event.error ? ` (agent: ${event.error})` : ''}`;
    case 'committed':
      return `${chunk}: committed; briefing ${event.briefing}`;
    case 'held':
      return `${chunk}: HELD for review (diff larger than expected): engram docs accept|reject ${event.chunk}`;
    case 'failed':
      return `${chunk}: FAILED: ${event.error ?? `${event.violations} violation(s)`}`;
    default:
      return `${chunk}: ${event.state}`;
  }
}

/** Aborts on SIGINT/SIGTERM (the process manager stopping `engram run`); returns a disposer. */
function stopSignal(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

/** docs lint|status|init|show|explain|accept|reject|compact|correct, fold, run. */
export function registerDocsCommands(program: Command, action: Action): void {
  const pretty = () => program.opts<{ pretty?: boolean }>().pretty === true;
  const docs = program.command('docs').description('living knowledge docs: concepts, claims, workflows, timeline (docs/KNOWLEDGE.md)');

  docs
    .command('lint')
    .description('check the docs against their schema (exit 1 on violations)')
    .action(
      action((context) => {
        const report = lintProject({ cwd: context.io.cwd });
        return {
          result: report,
          exitCode: report.ok ? 0 : 1,
          pretty: () =>
            [
              `${report.ok ? 'ok' : `${report.violations.length} violation(s)`}: ${report.files} docs, ${report.entries} entries, ${report.chars} chars, ${report.ms} ms`,
              ...report.violations.map((v) => `${v.file}:${v.line}: [${v.rule}] ${v.message}\n    fix: ${v.hint}`),
            ].join('\n'),
        };
      }),
    );

  docs
    .command('status')
    .description('buffer, drift, next ids, last dispatches and their states')
    .option('--limit <n>', 'dispatches to list', '10')
    .action(
      action((context, flags: { limit: string }) => {
        const report = projectStatus({ cwd: context.io.cwd, limit: parse(ChunkSchema, flags.limit, '--limit') });
        return {
          result: report,
          pretty: () =>
            [
              `knowledge server: ${report.server.running ? `running (pid ${report.server.pid})` : 'not running'}; briefing in ${report.briefing.file}: ${report.briefing.present ? 'yes' : 'no'}`,
              `buffer: ${report.buffer.items} item(s), ${report.buffer.chars} chars ${JSON.stringify(report.buffer.by_source)}`,
              `drift: ${report.drift.orphans} orphaned concepts, ${report.drift.contested} contested, ${report.drift.stale} stale, ${report.drift.workflows} repeated requests`,
              `next ids: ${report.ids.next.C} ${report.ids.next.E} ${report.ids.next.W}; last poll ${report.last_poll_at ?? 'never'}${report.backoff_until ? `; agent backoff until ${report.backoff_until}` : ''}`,
              ...(report.needs_review.length ? [`needs review: chunk ${report.needs_review.join(', ')} (engram docs accept|reject <chunk>)`] : []),
              ...report.dispatches.map((d) => `  chunk ${d.id} ${d.kind} ${d.state}${d.retries ? ` (${d.retries} retr.)` : ''} ${d.items} item(s) ${d.created_at}${d.error ? ` — ${d.error}` : ''}`),
            ].join('\n'),
        };
      }),
    );

  docs
    .command('init')
    .description('opt this repository in (.engram/config.yaml, the six docs, briefing markers) and fill the docs')
    .option('--from-today', 'path B: seed from the repository as it is today')
    .option('--from-date <date>', 'path A: seed in a worktree at that date, then fold forward to today')
    .option('--adopt', 'path C: adopt existing (v2) docs: backfill ids, graveyards, workflows; no model needed')
    .option('--continue-from <date>', 'with --adopt: where the earlier fold stopped (default: the docs\' last commit)')
    .action(
      action(async (context, flags: { fromToday?: boolean; fromDate?: string; adopt?: boolean; continueFrom?: string }) => {
        const chosen = [flags.fromToday, flags.fromDate !== undefined, flags.adopt].filter(Boolean).length;
        if (chosen > 1) throw new EngramError('USAGE', 'give one of --from-today, --from-date <date>, --adopt');
        const mode: InitMode = flags.fromToday
          ? { path: 'today' }
          : flags.fromDate !== undefined
            ? { path: 'date', date: parse(DateSchema, flags.fromDate, '--from-date') }
            : flags.adopt
              ? { path: 'adopt', ...(flags.continueFrom ? { continueFrom: parse(DateSchema, flags.continueFrom, '--continue-from') } : {}) }
              : { path: 'none' };
        const stop = stopSignal();
        try {
          const report = await initProject({
            cwd: context.io.cwd,
            mode,
            agent: agentFactory(context),
            env: knowledgeEnv(context),
            now: context.io.now,
            signal: stop.signal,
            onEvent: (event) => context.io.stderr.write(`${dispatchLine(event)}\n`),
          });
          return {
            result: report,
            pretty: () =>
              [
                `knowledge docs set up in ${report.root} (${report.mode})`,
                ...report.created.map((path) => `  created ${path}`),
                ...(report.seed ? [`  seed chunk ${report.seed.id}: ${report.seed.state}`] : []),
                ...report.fold.map((chunk) => `  fold chunk ${chunk.id}: ${chunk.state}`),
                ...(report.adopt ? [`  adopted: ${report.adopt.assigned.length} ids assigned, ${report.adopt.workflows.length} workflows extracted, ${report.adopt.graveyarded.length} entries to graveyards; originals in ${report.adopt.backup}`] : []),
                `  next ids: C${report.ids.C} E${report.ids.E} W${report.ids.W}${report.continuation_date ? `; continuation date ${report.continuation_date}` : ''}`,
                report.mode === 'adopt' ? '  next: engram docs lint, then engram fold, then engram run' : '  next: engram run (keep it running, e.g. in tmux or a service)',
              ].join('\n'),
          };
        } finally {
          stop.dispose();
        }
      }),
    );

  docs
    .command('show')
    .description('one entry by id (C###, E###, W###), with its graveyard history')
    .argument('<id>', 'stable id')
    .action(
      action((context, id: string) => {
        const entry = readDocEntry({ cwd: context.io.cwd }, id);
        return {
          result: entry,
          pretty: () => [`${entry.file}:${entry.line}`, entry.text, ...entry.graveyard.map((block) => `\n${block.file}:${block.line}\n${block.text}`)].join('\n'),
        };
      }),
    );

  docs
    .command('explain')
    .description("follow a concept's Code: pointers into engram explain (the sessions behind that code)")
    .argument('<id>', 'concept id (C###)')
    .option('--full', 'transcript windows, not just touch metadata')
    .action(
      action((context, id: string, flags: { full?: boolean }) => {
        const result = explainConcept({ cwd: context.io.cwd, home: context.env().home }, id, { brief: !flags.full });
        return {
          result,
          pretty: () =>
            [
              `${result.id} ${result.name}`,
              ...result.pointers.map((pointer) =>
                [
                  `  ${pointer.text}: ${pointer.found ? pointer.locations.map((l) => `${l.file}:${l.line}`).slice(0, 3).join(', ') : 'NOT FOUND in the repository'}`,
                  ...pointer.explained.map((span) => `    ${span.file}:${span.start}-${span.end}: ${span.response.total} tape(s)${span.response.results.slice(0, 3).map((r) => ` ${r.tape_id.slice(0, 12)} (${r.session.agent} ${r.session.id})`).join(',')}`),
                ].join('\n'),
              ),
            ].join('\n'),
        };
      }),
    );

  docs
    .command('accept')
    .description('accept a chunk held by the diff-size guard: lint, regenerate the briefing, commit')
    .argument('<chunk>', 'chunk number')
    .action(
      action((context, chunk: string) => {
        const result = reviewChunk({ cwd: context.io.cwd, id: parse(ChunkSchema, chunk, 'chunk'), decision: 'accept', now: context.io.now });
        return { result, pretty: () => `chunk ${result.id}: ${result.state}` };
      }),
    );

  docs
    .command('reject')
    .description('reject a held or failed chunk: restore the docs as they were before it')
    .argument('<chunk>', 'chunk number')
    .option('--requeue', 'put its items back in the buffer (default: drop them)')
    .action(
      action((context, chunk: string, flags: { requeue?: boolean }) => {
        const result = reviewChunk({ cwd: context.io.cwd, id: parse(ChunkSchema, chunk, 'chunk'), decision: 'reject', requeue: flags.requeue ?? false, now: context.io.now });
        return { result, pretty: () => `chunk ${result.id}: ${result.state}${flags.requeue ? ' (items back in the buffer)' : ''}` };
      }),
    );

  docs
    .command('compact')
    .description('move dead/refuted entries still in full form to their graveyards; collapse old timeline phases when it is too long')
    .action(
      action((context) => {
        const result = compactProject({ cwd: context.io.cwd, now: context.io.now });
        return { result, pretty: () => `moved to graveyards: ${result.moved.join(', ') || 'none'}; timeline phases collapsed: ${result.timeline.length}` };
      }),
    );

  docs
    .command('correct')
    .description('append a CORRECTION block to a graveyard entry (graveyards are append-only) and update its stub')
    .argument('<id>', 'C### or E###')
    .requiredOption('--to <status>', 'DEAD or EVOLVED (concepts), REFUTED (claims)')
    .option('--successor <id>', 'what it evolved into')
    .option('--note <text>', 'why')
    .action(
      action((context, id: string, flags: { to: string; successor?: string; note?: string }) => {
        const result = correctEntry({ cwd: context.io.cwd, id, to: flags.to, ...(flags.successor ? { successor: flags.successor } : {}), ...(flags.note ? { note: flags.note } : {}), now: context.io.now });
        return { result, pretty: () => `${result.block}${result.stub ? `\nstub: ${result.stub}` : ''}` };
      }),
    );

  program
    .command('fold')
    .description('fold history since a date into the knowledge docs, chronologically (after --adopt, or to catch up)')
    .option('--from <date>', 'start date YYYY-MM-DD (default: the continuation date)')
    .action(
      action(async (context, flags: { from?: string }) => {
        const stop = stopSignal();
        try {
          const result = await foldProject({
            cwd: context.io.cwd,
            ...(flags.from ? { from: parse(DateSchema, flags.from, '--from') } : {}),
            agent: agentFactory(context),
            env: knowledgeEnv(context),
            now: context.io.now,
            signal: stop.signal,
            onEvent: (event) => context.io.stderr.write(`${dispatchLine(event)}\n`),
          });
          return { result, pretty: () => `folded from ${result.from}: ${result.chunks.map((c) => `chunk ${c.id} ${c.state}`).join(', ') || 'nothing new'}` };
        } finally {
          stop.dispose();
        }
      }),
    );

  program
    .command('run')
    .description('the knowledge server: watch git, doc folders and sessions, fold changes into the docs (foreground; Ctrl-C stops)')
    .option('--once', 'poll once, dispatch what is buffered, and exit')
    .option('--interval <seconds>', 'poll interval (default: dispatch.poll_seconds)')
    .action(
      action(async (context, flags: { once?: boolean; interval?: string }) => {
        const interval = flags.interval === undefined ? undefined : parse(z.coerce.number().min(0.1).max(86_400), flags.interval, '--interval');
        const stop = stopSignal();
        const print = (event: RunEvent) => {
          if (pretty()) {
            const line =
              event.type === 'dispatch'
                ? dispatchLine(event)
                : event.type === 'started'
                  ? `engram run: ${event.root}, agent ${event.agent}${event.watching.length ? `, watching ${event.watching.join(', ')}` : ''}${event.recovered ? `, recovered ${event.recovered} dispatch(es)` : ''}`
                  : event.type === 'poll'
                    ? event.decision.dispatch || event.commits || event.sessions
                      ? `poll: ${event.commits} commit(s), ${event.sessions} session update(s), ${event.drift} drift item(s) → ${event.decision.reason}${event.decision.detail ? ` (${event.decision.detail})` : ''}`
                      : null
                    : event.type === 'error'
                      ? `error: ${event.message}`
                      : `stopped after ${event.dispatches} dispatch(es)`;
            if (line) context.io.stderr.write(`${line}\n`);
          } else {
            context.io.stdout.write(`${JSON.stringify(event)}\n`);
          }
        };
        try {
          const result = await runProject({
            cwd: context.io.cwd,
            agent: agentFactory(context),
            env: knowledgeEnv(context),
            now: context.io.now,
            signal: stop.signal,
            ...(flags.once ? { once: true } : {}),
            ...(interval ? { pollSeconds: interval } : {}),
            onEvent: print,
          });
          return { result: pretty() ? result : undefined, pretty: () => `engram run stopped: ${result.dispatches} dispatch(es)` };
        } finally {
          stop.dispose();
        }
      }),
    );
}
