import type { Command } from 'commander';
import { basename, join } from 'node:path';
import { createLlmClient, detectEnvironment, EngramError, readTranscript } from '../../core/index.js';
import {
  evaluatePending,
  evaluationStatus,
  extractSessions,
  momentSource,
  recordFeedback,
  sessionSource,
  tapesOfSession,
  type EvaluationReport,
  type ExtractionReport,
  type ExtractionSource,
  type FeedbackResult,
} from '../../services/index.js';
import type { CliContext } from '../context.js';
import { parseRef } from '../_args.js';
import type { Action } from '../action.js';

/** What feedback changed, for people. */
function renderFeedback(result: FeedbackResult): string {
  const lines = [
    `#${result.engram_id} marked ${result.useful ? 'useful' : 'not useful'}${result.reason ? `: ${result.reason}` : ''}`,
    `environment: ${result.tags.join(', ') || 'no tags'}${result.repo ? ` · repo ${result.repo}` : ''}`,
    result.matched ? 'counted as a match' : 'not counted as a match',
    ...result.relevance.map(
      (change) => `  ${change.tag}: ${change.before === null ? 'new' : change.before.toFixed(3)} → ${change.after.toFixed(3)}`,
    ),
  ];
  if (result.pin) lines.push(`${result.pin.action}: ${result.pin.detail}`);
  return lines.join('\n');
}

/** Evaluation reports, for people. */
function renderEvaluations(reports: EvaluationReport[]): string {
  if (reports.length === 0) return 'no session is waiting for evaluation';
  return reports
    .map((report) =>
      [
        `${report.session_id}: ${report.outcome}${report.error ? ` (${report.error})` : ''}`,
        ...report.judged.map((j) => `  EG#${j.engram_id}: ${j.score === null ? 'no judgement' : `score ${j.score}`}${j.pin ? ` · ${j.pin}` : ''}`),
      ].join('\n'),
    )
    .join('\n');
}

/** Extraction reports, for people. */
function renderExtractions(reports: ExtractionReport[]): string {
  if (reports.length === 0) return 'no session to extract from';
  return reports
    .map((report) =>
      [
        `${report.session_id}: ${report.outcome}${report.dry_run ? ' (dry run)' : ''} · lines ${report.lines.from}–${report.lines.to} of ${report.lines.total} · ${report.chunks} chunk(s)${report.error ? ` (${report.error})` : ''}`,
        ...report.lessons.map(
          (lesson) => `  ${lesson.action}${lesson.engram_id !== null ? ` EG#${lesson.engram_id}` : ''} [${lesson.category}] ${lesson.text}`,
        ),
        ...report.rejected.map((rejected) => `  rejected: ${rejected.reason}${rejected.text ? ` — ${rejected.text}` : ''}`),
      ].join('\n'),
    )
    .join('\n');
}

/** The environment of a folder as extraction uses it (tags and MCP servers), detected as hooks detect it. */
function describeFolder(context: CliContext, cwd: string): { tags: string[]; mcpServers: string[]; repo: string | null } {
  const settings = context.settings();
  const found = detectEnvironment({ cwd, agent: 'unknown', env: settings.env, rules: settings.config.tags, cacheDir: join(settings.paths.cache, 'env') });
  return { tags: found.tags, mcpServers: found.mcpServers, repo: found.repo };
}

/** A transcript file given by path, as an extraction source: its session id and folder from its own lines. */
function transcriptSource(context: CliContext, path: string): ExtractionSource {
  let transcript;
  try {
    transcript = readTranscript(path);
  } catch (error) {
    throw new EngramError('NOT_FOUND', `cannot read transcript ${path}`, { cause: error });
  }
  if (transcript.events.length === 0) throw new EngramError('INVALID_INPUT', `${path} holds no Claude Code or Codex conversation`);
  const sessionId = transcript.sessionId ?? basename(path).replace(/\.jsonl$/, '');
  const cwd = transcript.cwd;
  const environment = cwd ? describeFolder(context, cwd) : null;
  // A transcript from another machine names a folder that is not here: its last segment is the project name.
  const repo = environment?.repo ?? (cwd ? basename(cwd) : null);
  return { sessionId, transcriptPath: path, repo, cwd, envTags: environment?.tags ?? [], mcpServers: environment?.mcpServers ?? [] };
}

/** feedback, eval status, eval run, extract. */
export function registerLearnCommands(program: Command, action: Action): void {
  const evaluation = program.command('eval').description('the judgement of shown engrams after each session');
  evaluation
    .command('status')
    .description('sessions by evaluation state, or one session with its judgements')
    .option('--session <id>', 'one session')
    .action(
      action((context, flags: { session?: string }) => {
        const store = context.store();
        const result = {
          ...evaluationStatus(store, flags.session),
          extractions: store.extractions.counts(),
          ...(flags.session ? { extraction: store.extractions.get(flags.session) ?? null } : {}),
        };
        return {
          result,
          pretty: () =>
            [
              `evaluation: ${Object.entries(result.counts).map(([status, n]) => `${status}: ${n}`).join(' · ')}`,
              `extraction: ${Object.entries(result.extractions).map(([status, n]) => `${status}: ${n}`).join(' · ')}`,
              ...('session' in result && result.session
                ? [
                    `${result.session.session_id}: ${result.session.eval_status} after ${result.session.eval_attempts} attempt(s)${result.session.eval_error ? ` (${result.session.eval_error})` : ''}`,
                    ...(result.judgements ?? []).map((j) => `  EG#${j.engram_id}: ${j.score === null ? 'no judgement' : `score ${j.score}`} by ${j.judged_by}${j.evidence ? ` — "${j.evidence}"` : ''}`),
                  ]
                : []),
            ].join('\n'),
        };
      }),
    );
  evaluation
    .command('run')
    .description('evaluate now the sessions still waiting (or one), with the configured LLM')
    .option('--session <id>', 'one session')
    .action(
      action(async (context, flags: { session?: string }) => {
        const store = context.store();
        const llm = createLlmClient(context.settings(), { store });
        const reports = await evaluatePending(store, { llm, ...(flags.session ? { sessionId: flags.session } : {}) });
        return { result: { llm: llm.describe, reports }, pretty: () => `LLM: ${llm.describe}\n${renderEvaluations(reports)}` };
      }),
    );

  program
    .command('extract')
    .description('learn lessons (engrams) from sessions with the configured LLM; each session is read once, resumed ones only for what is new')
    .option('--session <id>', 'one session the hooks recorded')
    .option('--since <date>', 'every recorded session active since this date (ISO 8601, e.g. 2026-11-01)')
    .option('--transcript <path>', 'a Claude Code or Codex transcript file')
    .option('--limit <n>', 'at most this many sessions with --since', '50')
    .option('--dry-run', 'show what would be learned and merged; write nothing')
    .action(
      action(async (context, flags: { session?: string; since?: string; transcript?: string; limit: string; dryRun?: boolean }) => {
        const given = [flags.session, flags.since, flags.transcript].filter((flag) => flag !== undefined).length;
        if (given !== 1) throw new EngramError('USAGE', 'give exactly one of --session, --since and --transcript');
        const limit = Number(flags.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new EngramError('USAGE', `--limit must be a positive whole number, not '${flags.limit}'`);
        const store = context.store();
        const describe = (cwd: string) => describeFolder(context, cwd);
        let sources: ExtractionSource[];
        if (flags.transcript !== undefined) {
          sources = [transcriptSource(context, flags.transcript)];
        } else if (flags.session !== undefined) {
          const source = sessionSource(store, flags.session, describe);
          if (!source) throw new EngramError('NOT_FOUND', `no recorded session '${flags.session}' with a transcript (use --transcript PATH for a file)`);
          sources = [source];
        } else {
          const since = Date.parse(flags.since as string);
          if (Number.isNaN(since)) throw new EngramError('USAGE', `--since must be a date such as 2026-11-01, not '${flags.since}'`);
          sources = store.sessions
            .activeSince(new Date(since).toISOString(), limit)
            .map((session) => sessionSource(store, session.id, describe))
            .filter((source): source is ExtractionSource => source !== null);
        }
        const llm = createLlmClient(context.settings(), { store });
        const embedder = (await context.searchEngine().embedder()).embedder;
        const home = context.settings().paths.home;
        const reports: ExtractionReport[] = [];
        // One session at a time, each with the moments of its own tapes (when the session was recorded as tapes).
        for (const source of sources) {
          const tapes = source.cwd ? tapesOfSession(source.cwd, home, source.sessionId) : [];
          reports.push(
            ...(await extractSessions(store, [source], {
              llm,
              embedder,
              dryRun: flags.dryRun === true,
              now: context.io.now,
              policy: context.governance(),
              actor: { by: 'harvest', via: 'cli' },
              ...(tapes.length
                ? { provenance: (quote: string, text: string) => momentSource(tapes, quote, text, { sessionId: source.sessionId, cwd: source.cwd }) }
                : {}),
            })),
          );
        }
        return { result: { llm: llm.describe, reports }, pretty: () => `LLM: ${llm.describe}\n${renderExtractions(reports)}` };
      }),
    );

  program
    .command('feedback')
    .description('say whether an engram helped here; counts double in its learned relevance for this environment')
    .argument('<id>', 'engram id or uid')
    .option('--useful', 'it helped')
    .option('--not-useful', 'it did not help, or was wrong here')
    .option('--reason <text>', 'why (stored with the judgement)')
    .action(
      action((context, id: string, flags: { useful?: boolean; notUseful?: boolean; reason?: string }) => {
        if (Boolean(flags.useful) === Boolean(flags.notUseful)) {
          throw new EngramError('USAGE', 'give exactly one of --useful and --not-useful');
        }
        const ref = parseRef(id);
        const settings = context.settings();
        // The environment the feedback is about is the one the command runs in, detected as hooks detect it.
        const found = detectEnvironment({
          cwd: context.io.cwd,
          agent: 'unknown',
          env: settings.env,
          rules: settings.config.tags,
          cacheDir: join(settings.paths.cache, 'env'),
        });
        const result = recordFeedback(context.store(), ref, flags.useful === true, {
          ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
          tags: found.tags,
          repo: found.repo,
          now: context.io.now,
        });
        return { result, pretty: () => renderFeedback(result) };
      }),
    );
}
