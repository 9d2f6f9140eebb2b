import * as z from 'zod';
import { EngramError, normalizeProject, type Store } from '../../core/index.js';
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

/**
 * Moves every engram, session and prompt of one project to another name, in one transaction (the Go engram's
 * project migration). Only the exact name given moves; {@link mergeProjects} gathers every spelling.
 */
export function migrateProject(store: Store, input: MigrateProjectInput): MigrateProjectResult {
  const from = input.old_project.trim();
  const to = normalizeProject(input.new_project);
  if (from === '' || to === null) throw new EngramError('INVALID_INPUT', 'old_project and new_project are required');
  if (from === to) return { status: 'skipped', reason: 'names are identical' };
  return store.write(() => {
    const moved = store.observations.renameProject(from, to);
    if (moved.observations + moved.sessions + moved.prompts === 0) return { status: 'skipped', reason: 'no records found' };
    return { status: 'migrated', old_project: from, new_project: to, ...moved };
  });
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
}

/**
 * Merges project-name drift (`mem_merge_projects`): every stored spelling of each source name (and of the target
 * itself, so "Engram" and "engram" become one) moves to the target, in one transaction. The target is the name given
 * in the Go engram's lower-case form, unless it is the caller's own repository, whose spelling the hooks use.
 */
export function mergeProjects(store: Store, input: MergeProjectsInput, options: { preferred?: string | null } = {}): MergeProjectsResult {
  const sources = (Array.isArray(input.from) ? input.from : input.from.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (sources.length === 0) throw new EngramError('INVALID_INPUT', "at least one source project name is required in 'from'");
  if (input.to.trim() === '') throw new EngramError('INVALID_INPUT', "'to' is required: the project name to merge into");
  return store.write(() => {
    // The name asked for, in the Go engram's form — or the caller's repository's spelling when it is that project.
    const key = goProjectKey(input.to);
    const canonical = normalizeProject(options.preferred && goProjectKey(options.preferred) === key ? options.preferred : key) as string;
    const keys = new Set([...sources, canonical].map(goProjectKey));
    const result: MergeProjectsResult = { canonical, sources_merged: [], observations_updated: 0, sessions_updated: 0, prompts_updated: 0 };
    for (const name of store.observations.projectNames()) {
      if (name === canonical || !keys.has(goProjectKey(name))) continue;
      const moved = store.observations.renameProject(name, canonical);
      result.sources_merged.push(name);
      result.observations_updated += moved.observations;
      result.sessions_updated += moved.sessions;
      result.prompts_updated += moved.prompts;
    }
    result.sources_merged.sort();
    return result;
  });
}
