import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { parseTranscript, type EngramEnv } from '../../core/index.js';
import { discoverTranscripts, type SessionMatch } from '../tape/index.js';
import { docPaths, issueFolders, sessionSources, type KnowledgeConfig, type SessionSource } from './config.js';
import { gitOutput } from './_git.js';
import type { NewItem } from './state.js';
import { CHUNK } from './tuning.js';

/**
 * What feeds the buffer (seed 002, "Watch mechanism"): commits found by polling git, files of the configured doc and
 * issue folders (a watcher reports changes; a scan at start catches what changed while the server was down), and
 * the agents' session transcripts filtered by `project_match`. Everything here is cheap CPU and file reads; nothing
 * calls a model.
 */

/** The marker every fold prompt starts with: a fold agent's own session is never fed back into the docs. */
export const FOLD_SENTINEL = '[engram-fold';

/** Paths (relative to the root) the knowledge server writes itself: changes to them are not news. */
export function ownPaths(config: KnowledgeConfig): Set<string> {
  return new Set([
    ...Object.values(config.living_docs),
    ...Object.values(config.graveyard),
    config.briefing.file,
  ]);
}

const isOwn = (path: string, own: Set<string>): boolean => own.has(path) || path === '.engram' || path.startsWith('.engram/') || path.startsWith('.engram-cache/');

/** One commit as git log reports it. */
export interface CommitInfo {
  sha: string;
  date: string;
  subject: string;
  files: Array<{ path: string; added: number; deleted: number; status: 'A' | 'M' | 'D' | 'R' | string }>;
}

/** Commits in `range` (`<from>..HEAD`, or all since a date), oldest first, with their files. */
export function listCommits(root: string, selector: { after?: string | null; since?: string | null; until?: string | null }): CommitInfo[] | null {
  const args = ['log', '--reverse', '--no-merges', '--format=%x1e%H%x1f%aI%x1f%s', '--numstat', '--no-renames'];
  if (selector.since) args.push(`--since=${selector.since}`);
  if (selector.until) args.push(`--until=${selector.until}`);
  args.push(selector.after ? `${selector.after}..HEAD` : 'HEAD');
  const out = gitOutput(root, args);
  if (out === null) return null;
  const commits: CommitInfo[] = [];
  for (const record of out.split('\x1e')) {
    if (record.trim() === '') continue;
    const [head, ...rest] = record.split('\n');
    const [sha, date, subject] = head!.split('\x1f');
    const files = rest
      .filter((line) => line.includes('\t'))
      .map((line) => {
        const [added, deleted, path] = line.split('\t');
        return { path: path!, added: Number(added) || 0, deleted: Number(deleted) || 0, status: 'M' };
      });
    commits.push({ sha: sha!, date: date!, subject: subject ?? '', files });
  }
  return commits;
}

/** The current HEAD commit, or null (no commits yet, not a repository). */
export const headCommit = (root: string): string | null => gitOutput(root, ['rev-parse', '--verify', '-q', 'HEAD'])?.trim() || null;

/** A commit as a buffer item, unless it only touched the docs the server maintains. */
export function commitItem(commit: CommitInfo, own: Set<string>): NewItem | null {
  const files = commit.files.filter((file) => !isOwn(file.path, own));
  if (commit.files.length > 0 && files.length === 0) return null;
  // Estimate of what the chunk will show: header, file list and a diff capped per commit.
  const diffEstimate = Math.min(CHUNK.commitDiffChars, files.reduce((sum, file) => sum + (file.added + file.deleted) * 40, 0));
  const chars = 200 + commit.subject.length + files.length * 60 + diffEstimate;
  return {
    source: 'git',
    ref: commit.sha,
    path: null,
    kind: 'commit',
    chars,
    date: new Date(commit.date).toISOString(),
    drift_type: null,
    detail: { subject: commit.subject, files: files.map((file) => file.path).slice(0, 200) },
  };
}

/** New commits since the last poll, as items, and the commit polled up to. */
export function pollGit(root: string, config: KnowledgeConfig, lastCommit: string | null, lastPollAt: string | null): { items: NewItem[]; head: string | null } {
  const head = headCommit(root);
  if (head === null || head === lastCommit) return { items: [], head };
  // The last commit polled may be gone (a rebase, a gc): fall back to the time of the last poll (seed: git log --since).
  let commits = lastCommit ? listCommits(root, { after: lastCommit }) : null;
  if (commits === null) commits = lastPollAt ? (listCommits(root, { since: lastPollAt }) ?? []) : [];
  const own = ownPaths(config);
  return { items: commits.map((commit) => commitItem(commit, own)).filter((item): item is NewItem => item !== null), head };
}

/** The watched folders (docs and issues) as absolute paths, with their source. */
export function watchedFolders(config: KnowledgeConfig, root: string): Array<{ path: string; source: 'doc' | 'issue' }> {
  return [
    ...config.sources.docs.map((folder) => ({ path: resolve(root, folder), source: 'doc' as const })),
    ...issueFolders(config).map((folder) => ({ path: resolve(root, folder), source: 'issue' as const })),
  ];
}

/** A changed or removed file of a watched folder as an item; null for the server's own files and non-text. */
export function fileItem(root: string, config: KnowledgeConfig, source: 'doc' | 'issue', path: string, removed: boolean, now: Date): NewItem | null {
  const rel = relative(root, path).split(sep).join('/');
  if (rel.startsWith('..') || isAbsolute(rel) || isOwn(rel, ownPaths(config))) return null;
  if (/(^|\/)\.[^/]*$/.test(rel) || /\.(tmp|swp|lock)$|~$/.test(rel)) return null;
  if (removed) return { source, ref: rel, path: rel, kind: 'removed', chars: 120, date: now.toISOString(), drift_type: null, detail: {} };
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return null;
  }
  if (!stat.isFile()) return null;
  return {
    source,
    ref: rel,
    path: rel,
    kind: 'changed',
    chars: Math.min(stat.size, CHUNK.fileChars) + 120,
    date: new Date(stat.mtimeMs).toISOString(),
    drift_type: null,
    detail: { size: stat.size },
  };
}

/** Files of the watched folders changed after `since` (the catch-up scan at start). Bounded depth and count. */
export function scanFolders(root: string, config: KnowledgeConfig, since: string | null, now: Date): NewItem[] {
  const after = since ? Date.parse(since) : Number.POSITIVE_INFINITY;
  const items: NewItem[] = [];
  for (const folder of watchedFolders(config, root)) {
    const walk = (dir: string, depth: number): void => {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return;
      }
      for (const name of names) {
        if (items.length >= CHUNK.scanMaxFiles || name.startsWith('.') || name === 'node_modules') continue;
        const path = join(dir, name);
        let stat;
        try {
          stat = statSync(path);
        } catch {
          continue;
        }
        if (stat.isDirectory()) {
          if (depth < 8) walk(path, depth + 1);
        } else if (stat.mtimeMs > after) {
          const item = fileItem(root, config, folder.source, path, false, now);
          if (item) items.push(item);
        }
      }
    };
    walk(folder.path, 0);
  }
  return items;
}

/** A session source's transcripts folder: the folder of the configured history file, or the folder given. */
function agentHome(source: SessionSource, env: Pick<EngramEnv, 'claudeConfigDir' | 'codexHome' | 'userHome'>): string {
  const fallback = source.format === 'claude-code' ? env.claudeConfigDir : env.codexHome;
  if (!source.path) return fallback;
  const expanded = source.path === '~' ? env.userHome : source.path.startsWith('~/') ? join(env.userHome, source.path.slice(2)) : resolve(source.path);
  return expanded.endsWith('.jsonl') ? resolve(expanded, '..') : expanded;
}

/** The `project_match` rule: any substring in the session's folder, or (by default) inside the repository. */
function projectMatch(source: SessionSource, root: string): SessionMatch {
  const needles = source.project_match;
  if (!needles || needles.length === 0) {
    const prefix = root.replace(/[^A-Za-z0-9]/g, '-');
    return {
      cwd: (cwd) => resolve(cwd) === root || resolve(cwd).startsWith(`${root}${sep}`),
      claudeFolder: (folder) => folder === prefix || folder.startsWith(`${prefix}-`),
      claudeExactFolder: prefix,
    };
  }
  const encoded = needles.map((needle) => needle.replace(/[^A-Za-z0-9]/g, '-'));
  return {
    cwd: (cwd) => needles.some((needle) => cwd.includes(needle)),
    claudeFolder: (folder) => encoded.some((needle) => folder.includes(needle)),
  };
}

/** The text of a byte range of a file. */
function readRange(path: string, from: number, to: number): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(to - from);
    const read = readSync(fd, buffer, 0, to - from, from);
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** A session excerpt: the people's and the agent's words (no tool output), each message capped. */
export function condenseSession(text: string, format: 'claude' | 'codex'): { text: string; prompts: string[]; first: string | null; last: string | null } {
  const transcript = parseTranscript(text, format);
  const lines: string[] = [];
  const prompts: string[] = [];
  let first: string | null = null;
  let last: string | null = null;
  let used = 0;
  for (const event of transcript.events) {
    if (event.kind !== 'message' || event.meta || event.sidechain) continue;
    const body = event.text.replace(/\s+/g, ' ').trim();
    if (body === '' || body.includes('[ENGRAM]')) continue;
    first ??= event.at;
    last = event.at ?? last;
    if (event.role === 'user') prompts.push(body.slice(0, 300));
    const line = `${event.role === 'user' ? 'user' : 'agent'}: ${body.length > CHUNK.messageChars ? `${body.slice(0, CHUNK.messageChars)}…` : body}`;
    if (used + line.length > CHUNK.sessionChars) {
      lines.push('… (rest of the session not shown)');
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  return { text: lines.join('\n'), prompts, first, last };
}

/** What a session poll remembers in memory between polls: unchanged transcripts are not read again. */
export type SessionMemory = Map<string, { size: number; mtime: number; skip: boolean }>;

/**
 * New complete lines of this project's transcripts since each one's cursor, condensed, as items. A transcript whose
 * first user message is a fold prompt (the fold agent's own session) is skipped for good.
 */
export function pollSessions(
  root: string,
  config: KnowledgeConfig,
  env: Pick<EngramEnv, 'home' | 'claudeConfigDir' | 'codexHome' | 'userHome'>,
  cursorOf: (path: string) => number,
  memory: SessionMemory,
): NewItem[] {
  const items: NewItem[] = [];
  for (const source of sessionSources(config)) {
    const home = agentHome(source, env);
    const agentEnv = {
      home: env.home,
      claudeConfigDir: source.format === 'claude-code' ? home : env.claudeConfigDir,
      codexHome: source.format === 'codex' ? home : env.codexHome,
    };
    const found = discoverTranscripts({ env: agentEnv, match: projectMatch(source, root), agent: source.format === 'claude-code' ? 'claude' : 'codex' });
    for (const { path, harness } of found) {
      if (path.includes(`${sep}subagents${sep}`)) continue;
      let stat;
      try {
        stat = statSync(path);
      } catch {
        continue;
      }
      const seen = memory.get(path);
      if (seen && (seen.skip || (seen.size === stat.size && seen.mtime === stat.mtimeMs))) continue;
      const from = cursorOf(path);
      const head = readRange(path, 0, Math.min(stat.size, 64 * 1024));
      const skip = head.includes(FOLD_SENTINEL);
      memory.set(path, { size: stat.size, mtime: stat.mtimeMs, skip });
      if (skip || stat.size <= from) continue;
      const raw = readRange(path, from, stat.size);
      const end = raw.lastIndexOf('\n');
      if (end < 0) continue;
      const to = from + Buffer.byteLength(raw.slice(0, end + 1));
      const condensed = condenseSession(raw.slice(0, end + 1), harness);
      if (condensed.text === '') {
        // Nothing worth reading (hook chatter, token counts): record the range so it is not read again.
        items.push({ source: 'session', ref: `${path}#${from}-${to}`, path, kind: 'session-empty', chars: 0, date: new Date(stat.mtimeMs).toISOString(), drift_type: null, detail: { from, to, harness } });
        continue;
      }
      items.push({
        source: 'session',
        ref: `${path}#${from}-${to}`,
        path,
        kind: 'session',
        chars: condensed.text.length + 120,
        date: condensed.first ?? new Date(stat.mtimeMs).toISOString(),
        drift_type: null,
        detail: { from, to, harness, prompts: condensed.prompts.slice(0, 40), last: condensed.last },
      });
    }
  }
  return items;
}

/** Resolves a doc path given relative to the root (for the watcher's ignore rule). */
export const ownAbsolutePaths = (config: KnowledgeConfig, root: string): Set<string> =>
  new Set([...Object.values(docPaths(config, root)), resolve(root, config.briefing.file)]);
