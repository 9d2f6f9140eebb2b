import * as z from 'zod';
import { EngramError, normalizeProject, type ProjectRename, type Store } from '../../core/index.js';
import { audited, syncJournal, type Actor, type ChangeSet } from '../governance/index.js';
import { goProjectKey } from './rules.js';

/**
 * The project name to store or filter by, for a name given through the Go engram's API. Names compare the way the Go
 * engram compares them (case-insensitive, `--` and `__` collapsed: "Engram", "engram" and "ENGRAM" are one project),
 * but the spelling kept is the one the hooks use: the caller's repository name when it is that project, else the
 * spelling already in the store, else the Go engram's lower-case form. So an observation saved with `project:
 * "MyApp"` in the repository MyApp is injected by the hooks there, which know the project as "MyApp". Empty is null.
 */
export function canonicalProject(store: Store, raw: string | null | undefined, preferred?: string | null): string | null {
  const key = goProjectKey(raw);
  if (key === '') return null;
  if (preferred && goProjectKey(preferred) === key) return normalizeProject(preferred);
  const existing = store.observations.projectNames().filter((name) => goProjectKey(name) === key);
  // Several spellings of one project (drift from before): the repository's, else the lower-case one, else the first.
  const chosen = existing.find((name) => name === key) ?? existing.sort()[0] ?? key;
  return normalizeProject(chosen);
}

/** The Go engram's warning when a name was changed: clients show it to the agent. */
export function projectWarning(raw: string | null | undefined, project: string | null): string | null {
  const given = (raw ?? '').trim();
  if (given === '' || given === project) return null;
  return `⚠️ Project name normalized: ${JSON.stringify(given)} → ${JSON.stringify(project)}`;
}

export const MigrateProjectSchema = z.strictObject({ old_project: z.string(), new_project: z.string() });
export type MigrateProjectInput = z.infer<typeof MigrateProjectSchema>;

/** `POST /projects/migrate`'s answer: what moved, or why nothing did. */
export type MigrateProjectResult =
  | { status: 'migrated'; old_project: string; new_project: string; observations: number; sessions: number; prompts: number }
  | { status: 'skipped'; reason: 'names are identical' | 'no records found' };

/** Who renames projects, and when. */
export interface RenameContext {
  /** Recorded on the audit row (services/governance): the agent through MCP, a person through the CLI or viewer. */
  actor: Actor;
  now?: () => Date;
}

/**
 * Renames one stored project name, tracking every row it moves (engrams — soft-deleted ones too —, sessions, prompts)
 * on the change set, so the audit row holds their images and `engram undo` can move them back exactly.
 */
function renameTracked(store: Store, changes: ChangeSet, from: string, to: string): ProjectRename {
  const rows = store.observations.projectRows(from);
  for (const id of rows.engrams) changes.engram(id);
  for (const id of rows.sessions) changes.track('sessions', { id });
  for (const id of rows.prompts) changes.track('user_prompts', { id });
  return store.observations.renameProject(from, to);
}

/**
 * Moves every engram, session and prompt of one project to another name, in one transaction and one audited
 * operation (the Go engram's project migration). Only the exact name given moves; {@link mergeProjects} gathers
 * every spelling.
 */
export function migrateProject(store: Store, input: MigrateProjectInput, context: RenameContext): MigrateProjectResult & { undo_token: string | null } {
  const from = input.old_project.trim();
  const to = normalizeProject(input.new_project);
  if (from === '' || to === null) throw new EngramError('INVALID_INPUT', 'old_project and new_project are required');
  if (from === to) return { status: 'skipped', reason: 'names are identical', undo_token: null };
  const { result, entry } = audited(
    store,
    { actor: context.actor, op: 'migrate-project', reason: `${from} → ${to}` },
    (changes): MigrateProjectResult => {
      const moved = renameTracked(store, changes, from, to);
      if (moved.observations + moved.sessions + moved.prompts === 0) return { status: 'skipped', reason: 'no records found' };
      return { status: 'migrated', old_project: from, new_project: to, ...moved };
    },
    (context.now ?? (() => new Date()))().toISOString(),
  );
  if (entry) syncJournal(store);
  return { ...result, undo_token: entry?.token ?? null };
}

export const MergeProjectsSchema = z.strictObject({
  /** Comma-separated names, or a list. */
  from: z.union([z.string(), z.array(z.string())]),
  to: z.string(),
});
export type MergeProjectsInput = z.infer<typeof MergeProjectsSchema>;

/** What {@link mergeProjects} moved. */
export interface MergeProjectsResult {
  canonical: string;
  /** The stored spellings that were moved into `canonical`. */
  sources_merged: string[];
  observations_updated: number;
  sessions_updated: number;
  prompts_updated: number;
  /** `engram undo <token>` moves everything back; null when nothing moved. */
  undo_token: string | null;
}

/**
 * Merges project-name drift (`mem_merge_projects`): every stored spelling of each source name (and of the target
 * itself, so "Engram" and "engram" become one) moves to the target, in one transaction and one audited operation of
 * the context's actor (undone whole by `engram undo`). The target is the name given in the Go engram's lower-case
 * form, unless it is the caller's own repository, whose spelling the hooks use.
 */
export function mergeProjects(store: Store, input: MergeProjectsInput, context: RenameContext & { preferred?: string | null }): MergeProjectsResult {
  const sources = (Array.isArray(input.from) ? input.from : input.from.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (sources.length === 0) throw new EngramError('INVALID_INPUT', "at least one source project name is required in 'from'");
  if (input.to.trim() === '') throw new EngramError('INVALID_INPUT', "'to' is required: the project name to merge into");
  const { result, entry } = audited(
    store,
    (outcome: Omit<MergeProjectsResult, 'undo_token'>) => ({
      actor: context.actor,
      op: 'merge-projects',
      reason: `${outcome.sources_merged.join(', ')} → ${outcome.canonical}`,
    }),
    (changes) => {
      // The name asked for, in the Go engram's form — or the caller's repository's spelling when it is that project.
      const key = goProjectKey(input.to);
      const canonical = normalizeProject(context.preferred && goProjectKey(context.preferred) === key ? context.preferred : key) as string;
      const keys = new Set([...sources, canonical].map(goProjectKey));
      const merged: Omit<MergeProjectsResult, 'undo_token'> = { canonical, sources_merged: [], observations_updated: 0, sessions_updated: 0, prompts_updated: 0 };
      for (const name of store.observations.projectNames()) {
        if (name === canonical || !keys.has(goProjectKey(name))) continue;
        const moved = renameTracked(store, changes, name, canonical);
        merged.sources_merged.push(name);
        merged.observations_updated += moved.observations;
        merged.sessions_updated += moved.sessions;
        merged.prompts_updated += moved.prompts;
      }
      merged.sources_merged.sort();
      return merged;
    },
    (context.now ?? (() => new Date()))().toISOString(),
  );
  if (entry) syncJournal(store);
  return { ...result, undo_token: entry?.token ?? null };
}
