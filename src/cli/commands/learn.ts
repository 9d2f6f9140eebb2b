import type { Command } from 'commander';
import { join } from 'node:path';
import { detectEnvironment, EngramError } from '../../core/index.js';
import { recordFeedback, type FeedbackResult } from '../../services/index.js';
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

/** feedback. */
export function registerLearnCommands(program: Command, action: Action): void {
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
