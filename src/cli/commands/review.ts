import { Option, type Command } from 'commander';
import { EngramError } from '../../core/index.js';
import {
  ACTOR_KINDS,
  checkLiveness,
  engramHistory,
  listAudit,
  listConflicts,
  llmVerdicts,
  reviewQueue,
  verifyJournal,
  whyEngram,
  type ActorKind,
  type AuditEntry,
  type ConflictVerdict,
  type HistoryStep,
  type ReviewItem,
  type ReviewReason,
} from '../../services/index.js';
// The human gate is imported directly: it is deliberately not in the services barrel (docs/GOVERNANCE.md).
import { approveEngrams, forgetEngrams, rejectEngrams, undoOperation, type DecisionResult } from '../../services/gate/index.js';
import { integerOption, parseRef } from '../_args.js';
import { undoNote } from '../render.js';
import type { Action } from '../action.js';

const REASONS: readonly ReviewReason[] = ['pending', 'conflict', 'stale', 'code-gone'];
const cut = (text: string, limit = 160): string => (text.length > limit ? `${text.slice(0, limit - 1)}…` : text);

function renderItem(item: ReviewItem): string {
  const { engram } = item;
  const lines = [
    `#${engram.id} [${item.reasons.join(', ')}] ${engram.text}`,
    `  ${engram.kind} · tier ${engram.tier ?? '–'} · learned by ${engram.learned_by} · ${engram.status}${engram.status_reason ? ` (${engram.status_reason})` : ''}${
      engram.project ? ` · ${engram.project}` : ''
    }`,
  ];
  if (item.reasons.includes('stale') && item.stale_after) lines.push(`  stale since ${item.stale_after.slice(0, 10)}: approve to confirm it still holds`);
  if (item.reasons.includes('code-gone')) lines.push('  the code it names was deleted: approve to keep showing it, reject to retire it');
  for (const source of item.evidence.slice(0, 2)) {
    if (source.quote) lines.push(`  evidence: "${cut(source.quote)}"`);
    if (source.session_id) lines.push(`    session ${source.session_id}${source.tape_id ? ` · tape ${source.tape_id.slice(0, 16)} events ${source.event_from}–${source.event_to}` : ''}`);
  }
  for (const conflict of item.conflicts.filter((c) => c.status === 'open')) {
    lines.push(`  contradicts #${conflict.other_id} (${conflict.other_status ?? 'gone'}): ${cut(conflict.other_text)}`, `    ${conflict.reason} [${conflict.method}]`);
  }
  for (const near of item.near_duplicates) lines.push(`  near-duplicate #${near.id} (${near.status}, ${near.similarity}): ${cut(near.text)}`);
  return lines.join('\n');
}

function renderDecisions(result: DecisionResult): string {
  const lines = result.decisions.map(
    (decision) =>
      `#${decision.id} ${decision.action}${decision.from !== decision.to ? ` (${decision.from} → ${decision.to})` : ''}${
        decision.superseded.length ? `; retired #${decision.superseded.join(', #')}` : ''
      }: ${cut(decision.text, 100)}`,
  );
  return `${lines.join('\n')}${undoNote(result.undo_token)}`;
}

function renderEntry(entry: AuditEntry): string {
  return `${entry.at}  ${entry.token}  ${entry.actor}/${entry.via}  ${entry.op}${entry.engram_ids.length ? ` #${entry.engram_ids.join(' #')}` : ''}${entry.reason ? `  — ${cut(entry.reason, 100)}` : ''}`;
}

function renderStep(step: HistoryStep): string {
  const fields = Object.entries(step.fields)
    .filter(([column]) => !['updated_at', 'last_seen_at', 'revision_count'].includes(column))
    .map(([column, value]) => `${column}: ${cut(JSON.stringify(value.before), 60)} → ${cut(JSON.stringify(value.after), 60)}`);
  return [
    `${step.at}  ${step.op} by ${step.actor}/${step.via}  ${step.token}${step.undone_by ? `  (undone by ${step.undone_by})` : ''}${step.reason ? `  — ${cut(step.reason, 100)}` : ''}`,
    ...fields.map((field) => `    ${field}`),
  ].join('\n');
}

/** review, approve, reject, forget, undo, history, audit, conflicts, why, liveness. */
export function registerReviewCommands(program: Command, action: Action): void {
  program
    .command('review')
    .description('what waits for a person: pending engrams (with evidence, conflicts, near-duplicates), stale ones, ones whose code is gone')
    .addOption(new Option('--reason <reason>', 'only this kind of item').choices([...REASONS]))
    .option('--project <name>', 'only this project (and personal engrams)')
    .option('--limit <n>', 'items shown (1–1000)', integerOption('--limit', 1), 50)
    .action(
      action((context, flags: { reason?: ReviewReason; project?: string; limit: number }) => {
        const queue = reviewQueue(context.store(), {
          policy: context.governance(),
          now: context.io.now(),
          limit: flags.limit,
          ...(flags.reason ? { reasons: [flags.reason] } : {}),
          ...(flags.project ? { project: flags.project } : {}),
        });
        return {
          result: queue,
          pretty: () =>
            queue.total === 0
              ? 'Nothing to review.'
              : `${queue.items.map(renderItem).join('\n\n')}\n\n${queue.total} to review (${Object.entries(queue.counts)
                  .filter(([, n]) => n > 0)
                  .map(([reason, n]) => `${n} ${reason}`)
                  .join(', ')}). Decide with: engram approve ID… | engram reject ID… [--reason] | engram forget ID…`,
        };
      }),
    );

  program
    .command('approve')
    .description('make engrams active (a stale one: confirm it; one whose code is gone: keep showing it)')
    .argument('<ids...>', 'engram ids or uids')
    .option('--supersede', 'when it contradicts an active engram, retire that one')
    .option('--keep-both', 'when it contradicts an active engram, keep both')
    .option('--reason <text>', 'why, for the audit trail')
    .action(
      action(async (context, ids: string[], flags: { supersede?: boolean; keepBoth?: boolean; reason?: string }) => {
        const store = context.store();
        const policy = context.governance();
        const refs = ids.map(parseRef);
        // With an LLM configured, its verdicts on the closest active engrams are asked before the transaction.
        let verdicts: Map<number, ConflictVerdict> | undefined;
        if (policy.conflictLlm !== 'off' && context.llm().provider !== 'none' && refs.length === 1) {
          const engram = store.engrams.get(typeof refs[0] === 'number' ? refs[0] : (store.engrams.getByUid(refs[0] as string)?.id ?? -1));
          if (engram && engram.status !== 'active') verdicts = await llmVerdicts(store, { text: engram.text, project: engram.project, id: engram.id }, context.llm());
        }
        const result = approveEngrams(store, refs, {
          now: context.io.now,
          policy,
          ...(flags.supersede ? { supersede: true } : {}),
          ...(flags.keepBoth ? { keepBoth: true } : {}),
          ...(flags.reason ? { reason: flags.reason } : {}),
          ...(verdicts?.size ? { verdicts } : {}),
        });
        return { result, pretty: () => renderDecisions(result) };
      }),
    );

  program
    .command('reject')
    .description('refuse pending engrams (kept as rejected, so they are not learned again) or retire active ones')
    .argument('<ids...>', 'engram ids or uids')
    .option('--reason <text>', 'why')
    .action(
      action((context, ids: string[], flags: { reason?: string }) => {
        const result = rejectEngrams(context.store(), ids.map(parseRef), { now: context.io.now, ...(flags.reason ? { reason: flags.reason } : {}) });
        return { result, pretty: () => renderDecisions(result) };
      }),
    );

  program
    .command('forget')
    .description('remove engrams with their learning state (engram undo brings them back)')
    .argument('<ids...>', 'engram ids or uids')
    .option('--reason <text>', 'why')
    .action(
      action((context, ids: string[], flags: { reason?: string }) => {
        const result = forgetEngrams(context.store(), ids.map(parseRef), { now: context.io.now, ...(flags.reason ? { reason: flags.reason } : {}) });
        return { result, pretty: () => renderDecisions(result) };
      }),
    );

  program
    .command('undo')
    .description("reverse an operation exactly: the one with TOKEN, or your latest (refused when a later change depends on it)")
    .argument('[token]', 'the undo token a command printed (engram audit lists them)')
    .action(
      action((context, token: string | undefined) => {
        const result = undoOperation(context.store(), token, { now: context.io.now });
        return {
          result,
          pretty: () =>
            `undid ${result.undid.map((item) => `${item.op}${item.engram_ids.length ? ` of #${item.engram_ids.join(', #')}` : ''} (${item.token})`).join(', ')}: ${result.rows} row(s) restored${
              result.kept.length ? `; left as they are (changed since): ${result.kept.map((item) => item.columns.join('/')).join(', ')}` : ''
            }${undoNote(result.undo_token)}`,
        };
      }),
    );

  program
    .command('history')
    .description("an engram's life from the audit trail: who changed what, when, and the undo tokens")
    .argument('<id>', 'engram id or uid (a forgotten engram by id)')
    .action(
      action((context, id: string) => {
        const history = engramHistory(context.store(), parseRef(id));
        return {
          result: history,
          pretty: () => `#${history.id}${history.engram ? ` ${history.engram.text}` : ' (forgotten)'}\n${history.steps.map(renderStep).join('\n')}`,
        };
      }),
    );

  program
    .command('audit')
    .description('the audit trail, newest first; --verify checks audit.jsonl against the store')
    .option('--limit <n>', 'entries shown', integerOption('--limit', 1), 50)
    .addOption(new Option('--actor <who>', 'only this actor').choices([...ACTOR_KINDS]))
    .option('--verify', 'compare audit.jsonl with the audit rows line by line and check the hash chain')
    .action(
      action((context, flags: { limit: number; actor?: ActorKind; verify?: boolean }) => {
        if (flags.verify) {
          const report = verifyJournal(context.store());
          return {
            result: report,
            exitCode: report.ok ? 0 : 1,
            pretty: () =>
              report.ok
                ? `audit.jsonl matches the store: ${report.rows} entries, chain intact`
                : `audit.jsonl has ${report.problems.length} problem(s):\n${report.problems.map((problem) => `  ${problem.message}`).join('\n')}`,
          };
        }
        const entries = listAudit(context.store(), { limit: flags.limit, ...(flags.actor ? { actors: [flags.actor] } : {}) });
        return { result: entries, pretty: () => (entries.length ? entries.map(renderEntry).join('\n') : 'No audited operations yet.') };
      }),
    );

  program
    .command('conflicts')
    .description('engrams that contradict each other: open ones (or --all)')
    .option('--all', 'resolved ones too')
    .action(
      action((context, flags: { all?: boolean }) => {
        const conflicts = listConflicts(context.store(), { all: flags.all ?? false });
        return {
          result: conflicts,
          pretty: () =>
            conflicts.length
              ? conflicts
                  .map(
                    (c) =>
                      `#${c.engram_id} (${c.engram_status ?? 'gone'}) ${cut(c.engram_text)}\n  vs #${c.other_id} (${c.other_status ?? 'gone'}) ${cut(c.other_text)}\n  ${c.reason} [${c.method}]${
                        c.status === 'resolved' ? ` — resolved: ${c.resolution}` : ''
                      }`,
                  )
                  .join('\n\n')
              : 'No open conflicts.',
        };
      }),
    );

  program
    .command('why')
    .description('where an engram came from: the session, the moment in its tape, the files touched then, and its history')
    .argument('<id>', 'engram id or uid')
    .action(
      action((context, id: string) => {
        const report = whyEngram(context.store(), parseRef(id), { home: context.settings().paths.home });
        return {
          result: report,
          pretty: () => {
            const lines = [`#${report.id} ${report.engram?.text ?? '(forgotten)'}`, `  ${report.summary}`];
            for (const source of report.sources) {
              lines.push('', `session ${source.session_id ?? '?'}${source.tape_id ? ` · tape ${source.tape_id.slice(0, 16)} · events ${source.event_from}–${source.event_to}` : ''}`);
              if (source.quote) lines.push(`  evidence: "${cut(source.quote, 300)}"`);
              if (!source.tape_found && source.tape_id) lines.push('  (the tape is not in this folder’s tape location)');
              for (const event of source.moment) lines.push(`  [${event.offset}] ${event.text}`);
              if (source.files.length) lines.push(`  files then: ${source.files.map((file) => `${file.kind} ${file.file}${file.start ? `:${file.start}-${file.end}` : ''}`).join(', ')}`);
              if (source.spans.length) lines.push(`  about code: ${source.spans.map((span) => `${span.file}:${span.start}-${span.end}`).join(', ')}`);
            }
            if (report.liveness.state === 'gone') lines.push('', `code gone since ${report.liveness.at ?? '?'}`);
            lines.push('', 'history:', ...report.history.map(renderStep));
            return lines.join('\n');
          },
        };
      }),
    );

  program
    .command('liveness')
    .description("check whether the code engrams name still exists (from this repository's tapes: lineage and tombstones)")
    .option('--all', 'every repository engrams were learned in, not only this one')
    .action(
      action((context, flags: { all?: boolean }) => {
        if (!flags.all && !context.io.cwd) throw new EngramError('USAGE', 'run it inside a repository, or pass --all');
        const report = checkLiveness(context.store(), {
          home: context.settings().paths.home,
          ...(flags.all ? {} : { cwd: context.io.cwd }),
          now: context.io.now,
          actor: { by: 'system', via: 'cli' },
        });
        return {
          result: report,
          pretty: () =>
            `${report.checked} engram(s) naming code checked; ${report.gone.length} now code-gone${
              report.gone.length ? ` (#${report.gone.map((item) => item.id).join(', #')}: they leave injection until you approve or reject them)` : ''
            }; ${report.revived.length} revived${undoNote(report.undo_token)}`,
        };
      }),
    );
}
