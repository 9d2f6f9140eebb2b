import type { Command } from 'commander';
import { join } from 'node:path';
import { createLlmClient, detectEnvironment, EngramError } from '../../core/index.js';
import { evaluatePending, evaluationStatus, recordFeedback, type EvaluationReport, type FeedbackResult } from '../../services/index.js';
import { parseRef } from '../_args.js';
import type { Action } from '../program.js';

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

/** feedback, eval status, eval run. */
export function registerLearnCommands(program: Command, action: Action): void {
  const evaluation = program.command('eval').description('the judgement of shown engrams after each session');
  evaluation
    .command('status')
    .description('sessions by evaluation state, or one session with its judgements')
    .option('--session <id>', 'one session')
    .action(
      action((context, flags: { session?: string }) => {
        const result = evaluationStatus(context.store(), flags.session);
        return {
          result,
          pretty: () =>
            [
              Object.entries(result.counts).map(([status, n]) => `${status}: ${n}`).join(' · '),
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
    .command('feedback')
    .description('say whether an engram helped here; counts double in its learned relevance for this environment')
    .argument('<id>', 'engram id or uid')
    .option('--useful', 'it helped')
    .option('--not-useful', 'it did not help, or was wrong here')
    .option('--reason <text>', 'why (shown back; not stored yet)')
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
