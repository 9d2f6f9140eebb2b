import { Option, type Command } from 'commander';
import { LEARNED_BY, normalizeProject, type LearnedBy } from '../../core/index.js';
import {
  addEngram,
  CLI_USER,
  deleteEngram,
  deprecateEngram,
  getEngram,
  listEngrams,
  llmVerdicts,
  pinEngram,
  updateEngram,
  type EngramPatch,
  type GovernancePolicy,
} from '../../services/index.js';
// The human gate is imported directly: it is not in the services barrel (docs/GOVERNANCE.md).
import { approveEngrams } from '../../services/gate/index.js';
import { integerOption, parseJsonOption, parseRef, parseStatuses } from '../_args.js';
import type { CliContext } from '../context.js';
import { conflictNote, redactionNote, renderEngram, renderEngramList, undoNote } from '../render.js';
import type { Action } from '../action.js';

interface AddFlags {
  title?: string;
  content?: string;
  category?: string;
  tags?: string;
  project?: string;
  scope?: 'project' | 'personal';
  topicKey?: string;
  prerequisites?: string;
  kind?: string;
  pin?: boolean;
}

interface UpdateFlags extends Omit<AddFlags, 'pin' | 'project'> {
  project?: string | false;
  text?: string;
  addTags?: string;
  removeTags?: string;
}

const scopeOption = (): Option => new Option('--scope <scope>', 'project or personal').choices(['project', 'personal']);

/** LLM verdicts for a text's closest active engrams, when an LLM is configured and conflict checks may use it. */
async function verdictsFor(context: CliContext, policy: GovernancePolicy, text: string | undefined, project: string | null, id?: number) {
  if (text === undefined || policy.conflictLlm === 'off') return undefined;
  const llm = context.llm();
  if (llm.provider === 'none') return undefined;
  const verdicts = await llmVerdicts(context.store(), { text, project, ...(id !== undefined ? { id } : {}) }, llm);
  return verdicts.size ? verdicts : undefined;
}

/** add, get, list, update, deprecate, delete, pin, unpin. */
export function registerEngramCommands(program: Command, action: Action): void {
  program
    .command('add')
    .description('store an engram (secrets and <private> spans are removed first)')
    .argument('<text>', 'the lesson, one to three sentences')
    .option('--title <title>', 'short label')
    .option('--content <text>', 'longer detail, shown on request and never injected whole')
    .option('--category <path>', 'category path such as development/frontend', 'general')
    .option('--tags <list>', 'comma-separated tags')
    .option('--project <name>', 'the project it belongs to (default: none, a personal engram)')
    .addOption(scopeOption())
    .option('--topic-key <key>', 'a later add with the same key revises this engram instead of adding another')
    .option('--prerequisites <json>', 'JSON: {"os":[],"repos":[],"paths":[],"mcp_servers":[],"tags":[]}')
    .option('--kind <kind>', 'what sort of memory it is', 'lesson')
    .option('--pin', 'pin it: shown at every session start where its prerequisites hold')
    .action(
      action(async (context, text: string, flags: AddFlags) => {
        const policy = context.governance();
        let project: string | null = null;
        try {
          project = normalizeProject(flags.project);
        } catch {
          // addEngram reports the bad project name.
        }
        const verdicts = await verdictsFor(context, policy, text, project);
        const result = addEngram(
          context.store(),
          {
            text,
            title: flags.title,
            content: flags.content,
            category: flags.category,
            tags: flags.tags,
            project: flags.project,
            ...(flags.scope ? { scope: flags.scope } : {}),
            topic_key: flags.topicKey,
            ...(flags.prerequisites ? { prerequisites: parseJsonOption('--prerequisites', flags.prerequisites) } : {}),
            ...(flags.kind ? { kind: flags.kind } : {}),
            pinned: flags.pin ?? false,
          },
          { now: context.io.now, actor: CLI_USER, policy, ...(verdicts ? { verdicts } : {}) },
        );
        return {
          result,
          pretty: () => {
            const head =
              result.status === 'created'
                ? result.engram.status === 'active'
                  ? 'created'
                  : `created, waiting for review: ${result.engram.status_reason ?? 'pending'}`
                : result.status === 'revised'
                  ? 'revised (same topic key)'
                  : `already stored (seen ${result.engram.duplicate_count + 1} times)${result.engram.status !== 'active' ? `; it is ${result.engram.status}` : ''}`;
            return `${head}\n${renderEngram(result.engram)}${conflictNote(result.conflicts)}${redactionNote(result.redacted)}${undoNote(result.undo_token)}`;
          },
        };
      }),
    );

  program
    .command('get')
    .description('show one engram')
    .argument('<id>', 'engram id or uid')
    .option('--include-deleted', 'also find soft-deleted engrams')
    .action(
      action((context, id: string, flags: { includeDeleted?: boolean }) => {
        const engram = getEngram(context.store(), parseRef(id), { includeDeleted: flags.includeDeleted ?? false });
        return { result: engram, pretty: () => renderEngram(engram) };
      }),
    );

  program
    .command('list')
    .description('list engrams (active ones unless --status says otherwise)')
    .option('--category <path>', 'this category and everything below it')
    .option('--tags <list>', 'only engrams that have all of these tags')
    .option('--project <name>', 'only this project')
    .option('--no-project', 'only engrams without a project')
    .addOption(scopeOption())
    .option('--pinned', 'only pinned engrams')
    .addOption(new Option('--deprecated', 'only deprecated engrams').conflicts('includeDeprecated'))
    .option('--include-deprecated', 'deprecated engrams too')
    .option('--include-deleted', 'soft-deleted engrams too')
    .option('--status <list>', 'review states: pending, active, rejected, deprecated (comma-separated) or all')
    .addOption(new Option('--learned-by <who>', 'only engrams learned this way').choices([...LEARNED_BY]))
    .option('--code-gone', 'only engrams whose code is gone (liveness)')
    .option('--limit <n>', 'page size (1–10000)', integerOption('--limit', 1), 50)
    .option('--offset <n>', 'skip this many', integerOption('--offset'), 0)
    .action(
      action(
        (
          context,
          flags: {
            category?: string;
            tags?: string;
            project?: string | false;
            scope?: 'project' | 'personal';
            pinned?: boolean;
            deprecated?: boolean;
            includeDeprecated?: boolean;
            includeDeleted?: boolean;
            status?: string;
            learnedBy?: LearnedBy;
            codeGone?: boolean;
            limit: number;
            offset: number;
          },
        ) => {
          const page = listEngrams(context.store(), {
            ...(flags.status !== undefined ? { statuses: parseStatuses(flags.status) } : {}),
            ...(flags.learnedBy ? { learnedBy: [flags.learnedBy] } : {}),
            ...(flags.codeGone ? { liveness: ['gone'] as const } : {}),
            ...(flags.category ? { category: flags.category } : {}),
            ...(flags.tags ? { tags: flags.tags } : {}),
            ...(flags.project === false ? { project: null } : flags.project ? { project: flags.project } : {}),
            ...(flags.scope ? { scope: flags.scope } : {}),
            ...(flags.pinned ? { pinned: true } : {}),
            deprecated: flags.deprecated ? 'only' : flags.includeDeprecated ? 'include' : 'exclude',
            includeDeleted: flags.includeDeleted ?? false,
            limit: flags.limit,
            offset: flags.offset,
          });
          return { result: page, pretty: () => renderEngramList(page) };
        },
      ),
    );

  program
    .command('update')
    .description('change an engram; only the fields you give change')
    .argument('<id>', 'engram id or uid')
    .option('--text <text>', 'new text')
    .option('--title <title>', "new title ('' clears it)")
    .option('--content <text>', "new detail ('' clears it)")
    .option('--category <path>', 'new category')
    .option('--tags <list>', 'replace the tags')
    .option('--add-tags <list>', 'add these tags')
    .option('--remove-tags <list>', 'remove these tags')
    .option('--project <name>', 'move to this project')
    .option('--no-project', 'make it a personal engram')
    .addOption(scopeOption())
    .option('--topic-key <key>', "new topic key ('' clears it)")
    .option('--prerequisites <json>', "new prerequisites JSON ('null' clears them)")
    .option('--kind <kind>', 'new kind')
    .action(
      action(async (context, id: string, flags: UpdateFlags) => {
        const patch: EngramPatch = {
          ...(flags.text !== undefined ? { text: flags.text } : {}),
          ...(flags.title !== undefined ? { title: flags.title === '' ? null : flags.title } : {}),
          ...(flags.content !== undefined ? { content: flags.content === '' ? null : flags.content } : {}),
          ...(flags.category !== undefined ? { category: flags.category } : {}),
          ...(flags.tags !== undefined ? { tags: flags.tags } : {}),
          ...(flags.addTags !== undefined ? { add_tags: flags.addTags } : {}),
          ...(flags.removeTags !== undefined ? { remove_tags: flags.removeTags } : {}),
          ...(flags.project === false ? { project: null } : flags.project !== undefined ? { project: flags.project } : {}),
          ...(flags.scope !== undefined ? { scope: flags.scope } : {}),
          ...(flags.topicKey !== undefined ? { topic_key: flags.topicKey === '' ? null : flags.topicKey } : {}),
          ...(flags.prerequisites !== undefined
            ? { prerequisites: parseJsonOption('--prerequisites', flags.prerequisites) }
            : {}),
          ...(flags.kind !== undefined ? { kind: flags.kind } : {}),
        };
        const policy = context.governance();
        const ref = parseRef(id);
        const current = flags.text !== undefined ? getEngram(context.store(), ref) : undefined;
        const verdicts = current ? await verdictsFor(context, policy, flags.text, current.project, current.id) : undefined;
        const result = updateEngram(context.store(), ref, patch, { now: context.io.now, actor: CLI_USER, policy, ...(verdicts ? { verdicts } : {}) });
        return {
          result,
          pretty: () =>
            `${result.status === 'updated' ? `updated ${result.changed.join(', ')}` : 'nothing changed'}${result.engram.status === 'pending' && result.conflicts.length ? ' — it waits for review again' : ''}\n${renderEngram(result.engram)}${conflictNote(result.conflicts)}${redactionNote(result.redacted)}${undoNote(result.undo_token)}`,
        };
      }),
    );

  program
    .command('deprecate')
    .description('keep an engram but never recall it again (--undo makes it active again, as engram approve does)')
    .argument('<id>', 'engram id or uid')
    .option('--reason <text>', 'why it is wrong or obsolete')
    .option('--undo', 'make it active again')
    .action(
      action((context, id: string, flags: { reason?: string; undo?: boolean }) => {
        if (flags.undo) {
          // Making an engram active is the gate's decision: a person at the command line takes it here.
          const approved = approveEngrams(context.store(), [parseRef(id)], { now: context.io.now, policy: context.governance(), reason: 'no longer deprecated' });
          const engram = getEngram(context.store(), parseRef(id));
          const result = { status: approved.decisions[0]?.action === 'unchanged' ? 'unchanged' : 'updated', engram, undo_token: approved.undo_token };
          return { result, pretty: () => `${result.status === 'updated' ? 'reactivated' : 'nothing changed'}\n${renderEngram(engram)}${undoNote(result.undo_token)}` };
        }
        const result = deprecateEngram(context.store(), parseRef(id), {
          ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
          now: context.io.now,
          actor: CLI_USER,
        });
        return {
          result,
          pretty: () => `${result.status === 'updated' ? 'deprecated' : 'nothing changed'}\n${renderEngram(result.engram)}${undoNote(result.undo_token)}`,
        };
      }),
    );

  program
    .command('delete')
    .description('delete an engram: hidden everywhere (soft), or removed with its statistics (--hard)')
    .argument('<id>', 'engram id or uid')
    .option('--hard', 'remove the row and its learning state for good')
    .action(
      action((context, id: string, flags: { hard?: boolean }) => {
        const result = deleteEngram(context.store(), parseRef(id), { hard: flags.hard ?? false, now: context.io.now, actor: CLI_USER });
        return {
          result,
          pretty: () =>
            `${result.changed ? `${result.mode === 'hard' ? 'permanently deleted' : 'deleted'} #${result.id}` : `#${result.id} was already deleted`}${undoNote(result.undo_token)}`,
        };
      }),
    );

  for (const [name, pinned] of [
    ['pin', true],
    ['unpin', false],
  ] as const) {
    program
      .command(name)
      .description(pinned ? 'pin an engram: shown at every session start where its prerequisites hold' : 'unpin an engram')
      .argument('<id>', 'engram id or uid')
      .action(
        action((context, id: string) => {
          const result = pinEngram(context.store(), parseRef(id), pinned, { now: context.io.now, actor: CLI_USER });
          return {
            result,
            pretty: () => `${result.status === 'updated' ? (pinned ? 'pinned' : 'unpinned') : 'nothing changed'}\n${renderEngram(result.engram)}${undoNote(result.undo_token)}`,
          };
        }),
      );
  }
}
