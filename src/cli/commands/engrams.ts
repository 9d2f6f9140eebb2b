import { Option, type Command } from 'commander';
import {
  addEngram,
  deleteEngram,
  deprecateEngram,
  getEngram,
  listEngrams,
  pinEngram,
  updateEngram,
  type EngramPatch,
} from '../../services/index.js';
import { integerOption, parseJsonOption, parseRef } from '../_args.js';
import { redactionNote, renderEngram, renderEngramList } from '../render.js';
import type { Action } from '../program.js';

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
      action((context, text: string, flags: AddFlags) => {
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
          { now: context.io.now },
        );
        return {
          result,
          pretty: () => {
            const head =
              result.status === 'created'
                ? 'created'
                : result.status === 'revised'
                  ? 'revised (same topic key)'
                  : `already stored (seen ${result.engram.duplicate_count + 1} times)`;
            return `${head}\n${renderEngram(result.engram)}${redactionNote(result.redacted)}`;
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
    .description('list engrams (active ones by default)')
    .option('--category <path>', 'this category and everything below it')
    .option('--tags <list>', 'only engrams that have all of these tags')
    .option('--project <name>', 'only this project')
    .option('--no-project', 'only engrams without a project')
    .addOption(scopeOption())
    .option('--pinned', 'only pinned engrams')
    .addOption(new Option('--deprecated', 'only deprecated engrams').conflicts('includeDeprecated'))
    .option('--include-deprecated', 'deprecated engrams too')
    .option('--include-deleted', 'soft-deleted engrams too')
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
            limit: number;
            offset: number;
          },
        ) => {
          const page = listEngrams(context.store(), {
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
      action((context, id: string, flags: UpdateFlags) => {
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
        const result = updateEngram(context.store(), parseRef(id), patch, { now: context.io.now });
        return {
          result,
          pretty: () =>
            `${result.status === 'updated' ? `updated ${result.changed.join(', ')}` : 'nothing changed'}\n${renderEngram(result.engram)}${redactionNote(result.redacted)}`,
        };
      }),
    );

  program
    .command('deprecate')
    .description('keep an engram but never recall it again (undo with --undo)')
    .argument('<id>', 'engram id or uid')
    .option('--reason <text>', 'why it is wrong or obsolete')
    .option('--undo', 'make it active again')
    .action(
      action((context, id: string, flags: { reason?: string; undo?: boolean }) => {
        const result = deprecateEngram(context.store(), parseRef(id), {
          ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
          undo: flags.undo ?? false,
          now: context.io.now,
        });
        return {
          result,
          pretty: () => `${result.status === 'updated' ? (flags.undo ? 'reactivated' : 'deprecated') : 'nothing changed'}\n${renderEngram(result.engram)}`,
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
        const result = deleteEngram(context.store(), parseRef(id), { hard: flags.hard ?? false, now: context.io.now });
        return {
          result,
          pretty: () =>
            result.changed ? `${result.mode === 'hard' ? 'permanently deleted' : 'deleted'} #${result.id}` : `#${result.id} was already deleted`,
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
          const result = pinEngram(context.store(), parseRef(id), pinned, { now: context.io.now });
          return {
            result,
            pretty: () => `${result.status === 'updated' ? (pinned ? 'pinned' : 'unpinned') : 'nothing changed'}\n${renderEngram(result.engram)}`,
          };
        }),
      );
  }
}
