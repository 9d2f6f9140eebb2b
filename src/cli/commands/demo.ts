import type { Command } from 'commander';
import { runDemo, type DemoReport } from '../../services/index.js';
import type { Action } from '../action.js';

/** The report for people: one line per hook, then what it injected. */
function render(report: DemoReport): string {
  const lines = [
    `engram demo: a scripted Claude Code session through the real hooks, in a throwaway home with ${report.engrams} example memories`,
    `  project folder: ${report.project}${report.kept ? ` (kept; home ${report.home})` : ' (removed afterwards)'}`,
    `  background server: ${report.server ? `warm in ${report.server.warm_ms ?? '?'} ms, embeddings: ${report.server.model ?? 'none (BM25 only)'}` : 'did not start'}`,
    '',
  ];
  for (const step of report.steps) {
    const head = `${step.event.padEnd(18)} ${step.detail}`;
    const path = (step.answered_by ?? '-').padEnd(10);
    const injected = step.injected.length ? `injected ${step.injected.map((item) => `EG#${item.id}`).join(', ')}` : 'nothing injected';
    lines.push(`${String(step.ms).padStart(5)} ms  ${path} ${head}`);
    lines.push(`                     → ${injected}${step.context_chars ? ` (${step.context_chars} chars)` : ''}`);
    for (const item of step.injected) lines.push(`                       EG#${item.id} ${item.line}`);
  }
  const server = report.steps.filter((step) => step.answered_by === 'server');
  if (server.length) {
    const sorted = server.map((step) => step.ms).sort((a, b) => a - b);
    lines.push('', `  hooks answered by the warm server: ${server.length}, median ${sorted[Math.floor(sorted.length / 2)]} ms per hook process`);
  }
  return lines.join('\n');
}

/** demo. */
export function registerDemoCommands(program: Command, action: Action): void {
  program
    .command('demo')
    .description('replay a scripted agent session through the real hooks in a throwaway home and show what each injected')
    .option('--keep', 'keep the throwaway home and project folder to look at afterwards')
    .action(
      action(async (context, flags: { keep?: boolean }) => {
        const report = await runDemo({ installRoot: context.installRoot, keep: flags.keep ?? false, env: context.io.env });
        return { result: report, pretty: () => render(report) };
      }),
    );
}
