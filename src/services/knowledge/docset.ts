import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { docPaths, type DocPaths, type KnowledgeConfig } from './config.js';
import { LINT_RULES, lintDocs, type ChunkContext, type Violation } from './lint.js';
import { gitOutput } from './_git.js';
import { DOC_ROLES, parseDoc, type DocRole, type ParsedDoc } from './parse.js';

/** The six docs of a project, read and parsed, with what could not be read. */
export interface DocSet {
  /** Where the docs are read (the repository, or a bootstrap worktree). */
  root: string;
  paths: DocPaths;
  texts: Partial<Record<DocRole, string>>;
  docs: Partial<Record<DocRole, ParsedDoc>>;
  /** `doc-missing` and `doc-not-utf8` violations. */
  problems: Violation[];
}

const DECODER = new TextDecoder('utf-8', { fatal: true });

/** Byte offset of the first invalid UTF-8 sequence (only called once decoding has failed). */
function firstInvalidByte(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const byte = bytes[i]!;
    const length = byte < 0x80 ? 1 : byte >= 0xc2 && byte <= 0xdf ? 2 : byte >= 0xe0 && byte <= 0xef ? 3 : byte >= 0xf0 && byte <= 0xf4 ? 4 : 0;
    if (length === 0 || i + length > bytes.length) return i;
    for (let k = 1; k < length; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += length;
  }
  return bytes.length;
}

/** The path of a doc as violations show it: relative to the repository. */
export const displayPath = (root: string, path: string): string => relative(root, path) || path;

/** Reads one doc: its text, or a violation saying why not. */
export function readDocText(root: string, path: string): { text: string } | { problem: Violation } {
  const file = displayPath(root, path);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return {
      problem: {
        file,
        line: 1,
        rule: 'doc-missing',
        message: missing ? `${file} does not exist` : `${file} cannot be read: ${(error as Error).message}`,
        hint: LINT_RULES['doc-missing'],
        severity: 'error',
      },
    };
  }
  try {
    return { text: DECODER.decode(bytes).replace(/^\uFEFF/, '') };
  } catch {
    const offset = firstInvalidByte(bytes);
    const line = bytes.subarray(0, offset).toString('latin1').split('\n').length;
    return {
      problem: { file, line, rule: 'doc-not-utf8', message: `${file} is not UTF-8 (byte ${offset}, line ${line})`, hint: LINT_RULES['doc-not-utf8'], severity: 'error' },
    };
  }
}

/** Reads and parses the six docs under `root`. */
export function readDocSet(config: KnowledgeConfig, root: string): DocSet {
  const paths = docPaths(config, root);
  const set: DocSet = { root, paths, texts: {}, docs: {}, problems: [] };
  for (const role of DOC_ROLES) {
    const path = paths[pathKey(role)];
    const read = readDocText(root, path);
    if ('problem' in read) {
      set.problems.push(read.problem);
      continue;
    }
    set.texts[role] = read.text;
    set.docs[role] = parseDoc(role, displayPath(root, path), read.text);
  }
  return set;
}

/** DocRole → key of DocPaths. */
export const pathKey = (role: DocRole): keyof DocPaths => role;

/** Every id defined in the set, with the role that defines it (graveyard corrections excluded). */
export function definedIds(set: DocSet): Map<string, DocRole> {
  const ids = new Map<string, DocRole>();
  for (const role of DOC_ROLES) {
    for (const entry of set.docs[role]?.entries ?? []) if (entry.correction === null && !ids.has(entry.id)) ids.set(entry.id, role);
  }
  return ids;
}

/** Ids defined in the living docs (stubs included), with their doc. */
export function livingIds(set: DocSet): Map<string, DocRole> {
  const ids = new Map<string, DocRole>();
  for (const role of ['concepts', 'epistemic', 'workflows'] as const) {
    for (const entry of set.docs[role]?.entries ?? []) if (entry.correction === null) ids.set(entry.id, role);
  }
  return ids;
}

/** The graveyards as last committed (`git show HEAD:<path>`), the baseline of the append-only rule; absent outside git. */
export function committedGraveyards(set: DocSet, repoRoot: string): Partial<Record<'conceptGraveyard' | 'epistemicGraveyard', string>> {
  const baseline: Partial<Record<'conceptGraveyard' | 'epistemicGraveyard', string>> = {};
  for (const role of ['conceptGraveyard', 'epistemicGraveyard'] as const) {
    const path = relative(repoRoot, set.paths[role]);
    const text = gitOutput(repoRoot, ['show', `HEAD:${path}`]);
    if (text !== null) baseline[role] = text;
  }
  return baseline;
}

/** Lints a doc set. */
export function lintDocSet(
  set: DocSet,
  config: KnowledgeConfig,
  options: { graveyardBaseline?: Partial<Record<'conceptGraveyard' | 'epistemicGraveyard', string>>; chunk?: ChunkContext } = {},
): Violation[] {
  return lintDocs({
    docs: set.docs,
    readProblems: set.problems,
    maxEntryLines: config.thresholds.max_entry_lines,
    fileOrder: DOC_ROLES.map((role) => displayPath(set.root, set.paths[pathKey(role)])),
    ...(options.graveyardBaseline ? { graveyardBaseline: options.graveyardBaseline } : {}),
    ...(options.chunk ? { chunk: options.chunk } : {}),
  });
}
