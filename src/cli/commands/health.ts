import type { Command } from 'commander';
import { runDoctor, storeStatus } from '../../services/index.js';
import { renderFields } from '../render.js';
import type { Action } from '../action.js';

const MARK = { ok: 'ok  ', degraded: 'warn', error: 'FAIL', skipped: 'skip' } as const;

/** status, doctor. */
export function registerHealthCommands(program: Command, action: Action): void {
  program
    .command('status')
    .description('what is stored and where')
    .action(
      action((context) => {
        const report = storeStatus(context.store(), context.settings(), { installRoot: context.installRoot, vars: context.io.env });
        return { result: report, pretty: () => renderFields({ ...report }) };
      }),
    );

  program
    .command('doctor')
    .description('what works, what is degraded and why (exit 1 when something is broken)')
    .action(
      action(async (context) => {
        const report = await runDoctor(context.env(), { installRoot: context.installRoot, now: context.io.now, cwd: context.io.cwd, vars: context.io.env });
        return {
          result: report,
          exitCode: report.status === 'error' ? 1 : 0,
          pretty: () =>
            [
              `engram doctor: ${report.status}`,
              ...report.checks.map(
                (check) => `  ${MARK[check.status]}  ${check.name}: ${check.detail}${check.fix ? `\n        fix: ${check.fix}` : ''}`,
              ),
            ].join('\n'),
        };
      }),
    );
}
