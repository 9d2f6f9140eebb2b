import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DocPaths } from './config.js';
import { writeFileAtomic } from './_atomic.js';
import { lineDiffChars } from './lint.js';
import { DOC_ROLES, type DocRole } from './parse.js';

/**
 * The docs as they were when a dispatch began, kept in `.engram/fold/chunk_NNN/before/` (git-ignored): the baseline
 * of the chunk's lint (ids before, append-only graveyards, growth), what a failed or rejected chunk is restored
 * from, and what a crash-recovered dispatch is compared with.
 */

export const FOLD_DIR = join('.engram', 'fold');

/** `.engram/fold/chunk_007` under the repository root. */
export const chunkDir = (root: string, number: number): string => join(root, FOLD_DIR, `chunk_${String(number).padStart(3, '0')}`);
/** `.engram/fold/chunk_007_input.md` relative to a root. */
export const chunkInputName = (number: number): string => join(FOLD_DIR, `chunk_${String(number).padStart(3, '0')}_input.md`);

/** A snapshot: each role's text, or null when the file did not exist. */
export type Snapshot = Record<DocRole, string | null>;

const readOrNull = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

/** Reads the current docs. */
export function currentDocs(paths: DocPaths): Snapshot {
  return Object.fromEntries(DOC_ROLES.map((role) => [role, readOrNull(paths[role])])) as Snapshot;
}

/** Saves the docs into `<dir>/<name>/` (one file per role and a manifest of what was absent). */
export function saveSnapshot(dir: string, name: string, docs: Snapshot): string {
  const target = join(dir, name);
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  for (const role of DOC_ROLES) if (docs[role] !== null) writeFileSync(join(target, `${role}.md`), docs[role]!);
  writeFileSync(join(target, 'manifest.json'), `${JSON.stringify(Object.fromEntries(DOC_ROLES.map((role) => [role, docs[role] !== null])))}\n`);
  return target;
}

/** Loads a snapshot saved by saveSnapshot, or null when it is not there (a crash before it was complete). */
export function loadSnapshot(dir: string): Snapshot | null {
  const manifest = readOrNull(join(dir, 'manifest.json'));
  if (manifest === null) return null;
  const present = JSON.parse(manifest) as Record<DocRole, boolean>;
  const out = {} as Snapshot;
  for (const role of DOC_ROLES) {
    out[role] = present[role] ? readOrNull(join(dir, `${role}.md`)) : null;
    if (present[role] && out[role] === null) return null;
  }
  return out;
}

/** Writes a snapshot back over the docs (atomically per file); docs absent in it are removed. */
export function restoreSnapshot(paths: DocPaths, snapshot: Snapshot): void {
  for (const role of DOC_ROLES) {
    if (snapshot[role] === null) rmSync(paths[role], { force: true });
    else if (readOrNull(paths[role]) !== snapshot[role]) writeFileAtomic(paths[role], snapshot[role]!);
  }
}

/** True when any doc differs from the snapshot. */
export const docsChanged = (before: Snapshot, after: Snapshot): boolean => DOC_ROLES.some((role) => before[role] !== after[role]);

/** Changed characters over all docs. */
export const snapshotDiff = (before: Snapshot, after: Snapshot): number =>
  DOC_ROLES.reduce((sum, role) => sum + lineDiffChars(before[role] ?? '', after[role] ?? ''), 0);
