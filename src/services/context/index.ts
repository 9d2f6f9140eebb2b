/**
 * Context files for agents without hooks: the reviewed memories a session would start with, as one marked block in
 * AGENTS.md / CLAUDE.md / …, rewritten atomically and only between its markers; the same text is what the MCP server
 * serves as the `memory://recall` resource. A repository opts in per file (`engram context sync --file AGENTS.md`);
 * the opt-in is kept in `$ENGRAM_HOME/context.json`, so nothing but the named file is written in the repository.
 * @module
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import * as z from 'zod';
import { EngramError, findRepo, writeFileAtomic, type Engram, type Store } from '../../core/index.js';
import {
  API_USER,
  freshness,
  governancePolicy,
  injectable,
  syncJournal,
  writeAuditEntry,
  type Actor,
  type GovernancePolicy,
} from '../governance/index.js';

export const BLOCK_BEGIN = '<!-- engram:begin';
export const BLOCK_END = '<!-- engram:end -->';
const BEGIN_PATTERN = /<!-- engram:begin(?: hash=([0-9a-f]{16}))? -->/g;
const END_PATTERN = /<!-- engram:end -->/g;

/** The text a session starts with, within a budget. */
export interface ContextText {
  text: string;
  /** Engrams in it, in order. */
  ids: number[];
  /** Engrams left out for the budget. */
  dropped: number[];
}

/** What goes in the block: where, how much, and whether personal engrams may be written into a repository file. */
export interface ContextOptions {
  /** The repository's project name (its engrams are included); null: pinned personal engrams only. */
  project: string | null;
  /** Characters the block may take. @default policy.contextChars (config.json governance.context_chars) */
  budget?: number;
  policy?: GovernancePolicy;
  now?: Date;
  /** Leave personal (project-less) engrams out: the file is shared with others (committed). @default false */
  projectOnly?: boolean;
}

const HEADING = '## Memories from Engram';
const NOTE = '_Reviewed memories, written by `engram context sync`; change them with `engram`, not here: this block is rewritten._';

/**
 * Active engrams a session in `project` starts with — pinned ones (this project's or personal), then the project's
 * most useful — that may be injected (fresh or pinned, code not gone), as Markdown within the budget.
 */
export function recallContextText(store: Store, options: ContextOptions): ContextText {
  const policy = options.policy ?? governancePolicy();
  const budget = options.budget ?? policy.contextChars;
  const fresh = freshness(policy, options.now ?? new Date());
  const visible = (engram: Engram): boolean =>
    injectable(engram, fresh) && (engram.project === options.project || (engram.project === null && !options.projectOnly));
  const picked = store.read(() => {
    const pinned = store.engrams.mostUseful({ pinned: true }, 200).filter(visible);
    const project = options.project ? store.engrams.mostUseful({ project: options.project, pinned: false }, 200).filter(visible) : [];
    return [...pinned, ...project];
  });
  const head = `${HEADING}\n\n${NOTE}\n\n`;
  let text = head;
  const ids: number[] = [];
  const dropped: number[] = [];
  for (const engram of picked) {
    const line = `- ${engram.text.replace(/\s*\n\s*/g, ' ')} (EG#${engram.id})\n`;
    if (text.length + line.length > budget) {
      dropped.push(engram.id);
      continue;
    }
    text += line;
    ids.push(engram.id);
  }
  if (ids.length === 0) text += '_No reviewed memories for this repository yet._\n';
  return { text, ids, dropped };
}

const hashOf = (inner: string): string => createHash('sha256').update(inner).digest('hex').slice(0, 16);

/** The block as it is written: markers around the text, the begin marker carrying the text's hash. */
export function renderBlock(inner: string): string {
  return `${BLOCK_BEGIN} hash=${hashOf(inner)} -->\n${inner}${BLOCK_END}`;
}

const lineOf = (text: string, index: number): number => text.slice(0, index).split('\n').length;

/** Finds the block in a file's text; throws INVALID_INPUT (naming lines) for unbalanced markers or a hand-edited block. */
export function parseBlock(text: string, file: string): { start: number; end: number; inner: string } | null {
  const begins = [...text.matchAll(BEGIN_PATTERN)];
  const ends = [...text.matchAll(END_PATTERN)];
  const loose = (text.match(/<!--\s*engram:(begin|end)/g) ?? []).length;
  if (begins.length === 0 && ends.length === 0 && loose === 0) return null;
  if (begins.length !== 1 || ends.length !== 1 || loose !== 2) {
    const where = [...begins.map((m) => `begin at line ${lineOf(text, m.index)}`), ...ends.map((m) => `end at line ${lineOf(text, m.index)}`)].join(', ');
    throw new EngramError(
      'INVALID_INPUT',
      `${file} has unbalanced engram markers (${begins.length} begin, ${ends.length} end${where ? `: ${where}` : ''}${loose !== begins.length + ends.length ? ', and a damaged one' : ''}); fix or remove them by hand, then run again — the file was left as it was`,
    );
  }
  const begin = begins[0] as RegExpMatchArray;
  const end = ends[0] as RegExpMatchArray;
  if ((end.index as number) < (begin.index as number)) {
    throw new EngramError('INVALID_INPUT', `${file}: the engram end marker (line ${lineOf(text, end.index as number)}) comes before the begin marker; fix by hand — the file was left as it was`);
  }
  const innerStart = (begin.index as number) + begin[0].length + 1;
  const inner = text.slice(innerStart, end.index as number);
  if (begin[1] === undefined || hashOf(inner) !== begin[1]) {
    throw new EngramError(
      'INVALID_INPUT',
      `the engram block in ${file} (lines ${lineOf(text, begin.index as number)}–${lineOf(text, end.index as number)}) was edited by hand; move your text outside the markers (or delete the block) and run again — the file was left as it was`,
    );
  }
  return { start: begin.index as number, end: (end.index as number) + end[0].length, inner };
}

/** The file's text with the block set to `inner` (added at the end when absent; removed when `inner` is null). */
export function withBlock(text: string, file: string, inner: string | null): { text: string; before: string | null } {
  const found = parseBlock(text, file);
  if (inner === null) {
    if (!found) return { text, before: null };
    const after = text.slice(0, found.start).replace(/\n+$/, '\n') + text.slice(found.end).replace(/^\n/, '');
    return { text: after, before: found.inner };
  }
  if (found) return { text: text.slice(0, found.start) + renderBlock(inner) + text.slice(found.end), before: found.inner };
  const separator = text === '' ? '' : text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n';
  return { text: `${text}${separator}${renderBlock(inner)}\n`, before: null };
}

/** Opt-ins: per repository root, the context files Engram keeps current. */
const OptInsSchema = z.strictObject({
  repos: z.record(z.string(), z.strictObject({ files: z.array(z.string().min(1)), project_only: z.boolean().default(false) })).default({}),
});
type OptIns = z.infer<typeof OptInsSchema>;

const optInPath = (home: string): string => join(home, 'context.json');

function readOptIns(home: string): OptIns {
  const path = optInPath(home);
  if (!existsSync(path)) return { repos: {} };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new EngramError('CONFIG_INVALID', `${path} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = OptInsSchema.safeParse(raw);
  if (!parsed.success) throw new EngramError('CONFIG_INVALID', `${path} is invalid: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  return parsed.data;
}

/** The repository a folder belongs to: its root and project name. */
function repository(cwd: string): { root: string; project: string | null } {
  const repo = findRepo(cwd);
  return { root: repo?.root ?? resolve(cwd), project: repo?.name ?? null };
}

/** A context file named relative to the repository root; refused when it would leave the repository. */
function contextFile(root: string, cwd: string, file: string): { path: string; name: string } {
  const path = resolve(cwd, file);
  const name = relative(root, path);
  if (name === '' || name.startsWith('..') || isAbsolute(name)) throw new EngramError('INVALID_INPUT', `${file} is not inside the repository at ${root}`);
  return { path, name };
}

/** What one file's sync did. */
export interface FileSync {
  file: string;
  /** `written`, `unchanged` (the block already said this). */
  status: 'written' | 'unchanged';
  ids: number[];
  dropped: number[];
  undo_token: string | null;
}

/** Result of {@link syncContext}. */
export interface ContextSyncReport {
  root: string;
  project: string | null;
  files: FileSync[];
}

/**
 * Writes the block into the named files (recording the opt-in), or into the files this repository opted in before.
 * Each file is checked before anything is written — unbalanced markers or a hand-edited block stop the whole sync with
 * the file left as it was — and written atomically (temp file, fsync, rename), one audited operation per file.
 */
export function syncContext(
  store: Store,
  options: { home: string; cwd: string; files?: readonly string[]; projectOnly?: boolean; budget?: number; policy?: GovernancePolicy; now?: () => Date; actor?: Actor },
): ContextSyncReport {
  const { root, project } = repository(options.cwd);
  const optIns = readOptIns(options.home);
  const known = optIns.repos[root];
  const names = options.files?.length ? options.files.map((file) => contextFile(root, options.cwd, file).name) : (known?.files ?? []);
  if (names.length === 0) {
    throw new EngramError('INVALID_INPUT', `no context file is enabled for ${root}: run engram context sync --file AGENTS.md (or CLAUDE.md) to opt this repository in`);
  }
  const projectOnly = options.projectOnly ?? known?.project_only ?? false;
  const now = (options.now ?? (() => new Date()))();
  const content = recallContextText(store, {
    project,
    projectOnly,
    now,
    ...(options.budget !== undefined ? { budget: options.budget } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
  });
  // Check every file before writing any.
  const planned = [...new Set(names)].map((name) => {
    const path = join(root, name);
    const current = existsSync(path) ? readFileSync(path, 'utf8') : '';
    const next = withBlock(current, name, content.text);
    return { name, path, current, next };
  });
  const files: FileSync[] = [];
  for (const { name, path, current, next } of planned) {
    if (next.text === current) {
      files.push({ file: name, status: 'unchanged', ids: content.ids, dropped: content.dropped, undo_token: null });
      continue;
    }
    const at = now.toISOString();
    // The audit row and the file together: the file is renamed into place inside the transaction, so a failed write
    // rolls the row back, and a row that commits describes a file that was written.
    const entry = store.write(() => {
      const written = writeAuditEntry(
        store,
        { actor: options.actor ?? API_USER, op: 'context-sync', detail: { file_block: { file: path, before: next.before, after: content.text }, ids: content.ids } },
        [],
        content.ids,
        at,
      );
      writeFileAtomic(path, next.text);
      return written;
    });
    files.push({ file: name, status: 'written', ids: content.ids, dropped: content.dropped, undo_token: entry?.token ?? null });
  }
  syncJournal(store);
  // Remember the opt-in (after the writes succeeded).
  const merged = [...new Set([...(known?.files ?? []), ...names])].sort();
  if (!known || merged.length !== known.files.length || known.project_only !== projectOnly) {
    optIns.repos[root] = { files: merged, project_only: projectOnly };
    writeFileAtomic(optInPath(options.home), `${JSON.stringify(optIns, null, 2)}\n`, { mode: 0o600 });
  }
  return { root, project, files };
}

/** Stops keeping files of a repository current (the block stays unless `removeBlock`, which takes it out atomically). */
export function disableContext(store: Store, options: { home: string; cwd: string; files?: readonly string[]; removeBlock?: boolean; actor?: Actor; now?: () => Date }): { root: string; disabled: string[]; removed: string[] } {
  const { root } = repository(options.cwd);
  const optIns = readOptIns(options.home);
  const known = optIns.repos[root]?.files ?? [];
  const names = options.files?.length ? options.files.map((file) => contextFile(root, options.cwd, file).name) : known;
  const removed: string[] = [];
  if (options.removeBlock) {
    for (const name of names) {
      const path = join(root, name);
      if (!existsSync(path)) continue;
      const current = readFileSync(path, 'utf8');
      const next = withBlock(current, name, null);
      if (next.before === null) continue;
      store.write(() => {
        writeAuditEntry(store, { actor: options.actor ?? API_USER, op: 'context-remove', detail: { file_block: { file: path, before: next.before, after: null } } }, [], [], (options.now ?? (() => new Date()))().toISOString());
        writeFileAtomic(path, next.text);
      });
      removed.push(name);
    }
    syncJournal(store);
  }
  const left = known.filter((name) => !names.includes(name));
  if (left.length) optIns.repos[root] = { files: left, project_only: optIns.repos[root]?.project_only ?? false };
  else delete optIns.repos[root];
  if (known.length) writeFileAtomic(optInPath(options.home), `${JSON.stringify(optIns, null, 2)}\n`, { mode: 0o600 });
  return { root, disabled: names.filter((name) => known.includes(name)), removed };
}

/** Files a repository opted in (for the session-end job, which keeps them current). */
export function contextFilesOf(home: string, cwd: string): string[] {
  try {
    return readOptIns(home).repos[repository(cwd).root]?.files ?? [];
  } catch {
    return [];
  }
}

/** Puts a block back as an audit entry's `file_block` says (undo): refuses when the block changed since. */
export function restoreBlock(block: { file: string; before: string | null; after: string | null }): void {
  const current = existsSync(block.file) ? readFileSync(block.file, 'utf8') : '';
  const found = parseBlock(current, block.file);
  const now = found ? found.inner : null;
  if (now !== block.after) {
    throw new EngramError('INVALID_INPUT', `the engram block in ${block.file} changed since (another sync or a removal); run engram context sync instead`);
  }
  writeFileAtomic(block.file, withBlock(current, block.file, block.before).text);
}
