import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { EngramError, findRepo } from '../../core/index.js';
import { initRepo } from '../workspace/index.js';
import { withBriefingSection } from './briefing.js';
import { CONFIG_FILE, defaultConfigYaml, docPaths, loadKnowledgeConfig, type KnowledgeConfig } from './config.js';
import { buildDispatch, runDispatch, type DispatchContext, type DispatchOutcome } from './dispatch.js';
import { definedIds, readDocSet } from './docset.js';
import { gitOrThrow, gitOutput } from './_git.js';
import { syncCounters } from './ids.js';
import { DOC_ROLES, type DocRole } from './parse.js';
import { commitItem, headCommit, listCommits, ownPaths, pollSessions, watchedFolders } from './sources.js';
import { writeFileAtomic } from './_atomic.js';
import { enqueue, pendingItems, serverState, setServerState, type KnowledgeState, type NewItem } from './state.js';
import type { EngramEnv } from '../../core/index.js';

/**
 * Bootstrap (seed 002, "Bootstrap"): `engram docs init` is the opt-in — it writes `.engram/config.yaml`, the six
 * doc files, the briefing markers and `.engram/.gitignore` — and then one of the three paths fills the docs:
 * B `--from-today` (one seed chunk over the repository as it is), A `--from-date` (a seed chunk in an ephemeral
 * `git worktree` at that date, then a chronological fold forward to today, never touching the user's tree) and C
 * `--adopt` (adopt.ts). All end with the server's cursors at HEAD, ready for `engram run`.
 */

const TITLES: Record<DocRole, [string, string]> = {
  concepts: ['Concept Registry', 'What exists in the code, keyed by stable id (C###): ACTIVE entries with Code: pointers, DEAD/EVOLVED as one-line stubs.'],
  epistemic: ['Epistemic State', 'What we believe, keyed by stable id (E###): believed, contested, unverified; refuted claims as one-line stubs.'],
  workflows: ['Workflow Registry', 'How we work, keyed by stable id (W###): CURRENT workflows; SUPERSEDED/MERGED as one-line stubs.'],
  timeline: ['Timeline', 'What happened, phase by phase, oldest first. Narrative that references ids.'],
  conceptGraveyard: ['Concept Graveyard', 'Append-only. Full entries of DEAD and EVOLVED concepts; corrections are appended, never edited in.'],
  epistemicGraveyard: ['Epistemic Graveyard', 'Append-only. Full evidence chains of refuted claims; corrections are appended, never edited in.'],
};

/** The empty form of a doc: its title and what it holds. */
export const skeleton = (role: DocRole): string => `# ${TITLES[role][0]}\n\n${TITLES[role][1]} Maintained by \`engram run\`.\n`;

/** What git ignores inside `.engram/`: server state and chunk inputs are local (`tapes/` stays committed). */
export const ENGRAM_GITIGNORE = '# Local to this clone (engram docs / engram run)\n/knowledge.db\n/knowledge.db-*\n/fold/\n/run.lock\n';

/** What `prepareProject` wrote. */
export interface PrepareResult {
  root: string;
  config: KnowledgeConfig;
  created: string[];
  /** True when at least one doc already held entries. */
  hasEntries: boolean;
}

/** The repository root of `cwd`, or INVALID_INPUT: the knowledge server polls git. */
export function repositoryRoot(cwd: string): string {
  const repo = findRepo(cwd);
  if (!repo) throw new EngramError('INVALID_INPUT', `${cwd} is not inside a git repository; knowledge docs follow a repository's history`);
  return repo.root;
}

/** Writes what the opt-in consists of, creating only what is missing. */
export function prepareProject(root: string): PrepareResult {
  const created: string[] = [];
  const write = (path: string, text: string) => {
    if (existsSync(path)) return;
    writeFileAtomic(path, text);
    created.push(relative(root, path));
  };
  initRepo({ cwd: root });
  write(join(root, CONFIG_FILE), defaultConfigYaml({ projectMatch: basename(root) }));
  const ignore = join(root, '.engram', '.gitignore');
  const existing = existsSync(ignore) ? readFileSync(ignore, 'utf8') : '';
  if (!existing.includes('/knowledge.db')) {
    writeFileAtomic(ignore, `${existing}${existing && !existing.endsWith('\n') ? '\n' : ''}${ENGRAM_GITIGNORE}`);
    created.push(relative(root, ignore));
  }
  mkdirSync(join(root, '.engram', 'fold'), { recursive: true });
  const config = loadKnowledgeConfig(root);
  const paths = docPaths(config, root);
  for (const role of DOC_ROLES) write(paths[role], skeleton(role));
  const briefing = join(root, config.briefing.file);
  const text = existsSync(briefing) ? readFileSync(briefing, 'utf8') : '';
  const next = withBriefingSection(text, config.briefing.section);
  if (next !== text) {
    writeFileAtomic(briefing, next);
    created.push(`${config.briefing.file} (${config.briefing.section} markers)`);
  }
  const set = readDocSet(config, root);
  return { root, config, created, hasEntries: definedIds(set).size > 0 };
}

/** Files of the tree at `root` (tracked), as a bounded listing for the seed chunk. */
function fileTree(root: string, max = 400): string {
  const files = (gitOutput(root, ['ls-files']) ?? '').split('\n').filter(Boolean);
  const shown = files.slice(0, max);
  return `${shown.join('\n')}${files.length > max ? `\n… and ${files.length - max} more files` : ''}`;
}

/** The onboarding instructions of a seed chunk. */
function seedPreface(root: string, asOf: string): string {
  return [
    `This is the SEED chunk: the docs are empty. Read the repository as it is on ${asOf} — its layout, README and docs, the`,
    'main modules — like an engineer on their first day, and write the initial docs: the concepts that exist (ACTIVE, with',
    'Code: pointers to real files and symbols), the claims its docs and commits make (with their evidence), the workflows',
    'the team follows (how to build, test, review, release), and one timeline phase ending on that day. Be succinct: one',
    'entry per real construct, pointers and one-line facts rather than prose. The recent commits are the items below.',
    '',
    '### Files in the repository',
    '',
    '```',
    fileTree(root),
    '```',
  ].join('\n');
}

/** The last commits up to a revision, as items for the seed chunk. */
function recentCommitItems(root: string, config: KnowledgeConfig, until: string | null, count: number): NewItem[] {
  const commits = listCommits(root, { ...(until ? { until } : {}) }) ?? [];
  const own = ownPaths(config);
  return commits
    .slice(-count)
    .map((commit) => commitItem(commit, own))
    .filter((item): item is NewItem => item !== null)
    .map((item) => ({ ...item, kind: 'seed-commit' }));
}

/**
 * Marks the agents' sessions as read up to now (path B) or up to `before` (path A: later ones are folded): their
 * ranges become zero-size items, so `engram run` does not fold the whole history of old sessions on its first poll.
 */
export function markSessionsRead(
  root: string,
  config: KnowledgeConfig,
  state: KnowledgeState,
  env: Pick<EngramEnv, 'home' | 'claudeConfigDir' | 'codexHome' | 'userHome'>,
  now: Date,
  keepFrom: string | null,
): number {
  const items = pollSessions(root, config, env, () => 0, new Map());
  const marked = items.map((item) => (keepFrom !== null && item.date >= keepFrom ? item : { ...item, kind: 'session-read', chars: 0 }));
  enqueue(state, marked, now);
  return marked.filter((item) => item.chars === 0).length;
}

/** Runs one seed dispatch and fails loudly if it does not commit. */
async function seedOnce(context: DispatchContext, request: { workRoot?: string; asOf: string; until: string | null }): Promise<DispatchOutcome> {
  const items = recentCommitItems(request.workRoot ?? context.root, context.config, request.until, 20);
  enqueue(context.state, items, context.now());
  const refs = new Set(items.map((item) => item.ref));
  const chosen = pendingItems(context.state).filter((item) => item.source === 'git' && refs.has(item.ref));
  const dispatch = buildDispatch(context, {
    kind: 'seed',
    items: chosen,
    preface: seedPreface(request.workRoot ?? context.root, request.asOf),
    ...(request.workRoot ? { workRoot: request.workRoot } : {}),
  })!;
  const outcome = await runDispatch(context, dispatch);
  if (outcome.dispatch.state !== 'committed') {
    throw new EngramError('LLM_FAILED', `the seed chunk ${dispatch.id} ended ${outcome.dispatch.state}: ${outcome.dispatch.error ?? 'see engram docs status'}`, {
      details: { chunk: dispatch.id, state: outcome.dispatch.state, violations: outcome.violations },
    });
  }
  return outcome;
}

/** Path B: seed from the repository as it is today. */
export async function seedFromToday(context: DispatchContext, env: Parameters<typeof markSessionsRead>[3]): Promise<DispatchOutcome> {
  const head = headCommit(context.root);
  const today = context.now().toISOString().slice(0, 10);
  const outcome = await seedOnce(context, { asOf: today, until: null });
  markSessionsRead(context.root, context.config, context.state, env, context.now(), null);
  setServerState(context.state, { last_poll_commit: head, last_poll_at: context.now().toISOString(), continuation_date: today, last_scan_at: context.now().toISOString() });
  return outcome;
}

/** The commit nearest before (or at) a date, or INVALID_INPUT. */
export function commitAt(root: string, date: string): string {
  const sha = gitOutput(root, ['rev-list', '-1', `--before=${date}T23:59:59`, 'HEAD'])?.trim();
  if (!sha) throw new EngramError('INVALID_INPUT', `the repository has no commit on or before ${date}`);
  return sha;
}

/**
 * Path A: seed in an ephemeral worktree at the commit nearest `date` (the user's working tree is never touched; the
 * finished docs are copied into it), then fold forward to today in chronological chunks.
 */
export async function seedFromDate(
  context: DispatchContext,
  date: string,
  env: Parameters<typeof markSessionsRead>[3],
  onChunk?: (outcome: DispatchOutcome) => void,
): Promise<{ seed: DispatchOutcome; fold: DispatchOutcome[]; commit: string }> {
  const sha = commitAt(context.root, date);
  const parent = mkdtempSync(join(tmpdir(), 'engram-seed-'));
  const worktree = join(parent, basename(context.root));
  gitOrThrow(context.root, ['worktree', 'add', '--detach', '--quiet', worktree, sha], `cannot check out ${sha.slice(0, 10)} (${date}) in a worktree`);
  let seed: DispatchOutcome;
  try {
    const from = docPaths(context.config, context.root);
    const to = docPaths(context.config, worktree);
    for (const role of DOC_ROLES) {
      if (!existsSync(to[role])) writeFileAtomic(to[role], readFileSync(from[role], 'utf8'));
    }
    seed = await seedOnce(context, { workRoot: worktree, asOf: date, until: `${date}T23:59:59` });
  } finally {
    gitOutput(context.root, ['worktree', 'remove', '--force', worktree]);
    rmSync(parent, { recursive: true, force: true });
    gitOutput(context.root, ['worktree', 'prune']);
  }
  markSessionsRead(context.root, context.config, context.state, env, context.now(), `${date}T00:00:00.000Z`);
  const fold = await foldForward(context, { after: sha, since: date }, onChunk);
  return { seed, fold, commit: sha };
}

/** Doc and issue files created or changed since a date, each at most twice (seed: "Dual-Pass (Bootstrap Only)"). */
export function historicalFileItems(root: string, config: KnowledgeConfig, since: string): NewItem[] {
  const folders = watchedFolders(config, root).map((folder) => ({ rel: relative(root, folder.path), source: folder.source }));
  if (folders.length === 0) return [];
  const out = gitOutput(root, ['log', '--reverse', '--no-merges', '--format=%x1e%H%x1f%aI', '--name-status', `--since=${since}`, '--', ...folders.map((folder) => folder.rel)]) ?? '';
  const events = new Map<string, Array<{ sha: string; date: string; status: string }>>();
  for (const record of out.split('\x1e')) {
    const [head, ...lines] = record.split('\n');
    if (!head) continue;
    const [sha, date] = head.split('\x1f');
    for (const line of lines) {
      const [status, path] = line.split('\t');
      if (!status || !path) continue;
      events.set(path, [...(events.get(path) ?? []), { sha: sha!, date: new Date(date!).toISOString(), status: status[0]! }]);
    }
  }
  const own = ownPaths(config);
  const items: NewItem[] = [];
  for (const [path, list] of events) {
    if (own.has(path)) continue;
    const source = folders.find((folder) => path.startsWith(`${folder.rel}/`) || path === folder.rel)?.source ?? 'doc';
    const first = list[0]!;
    const last = list.at(-1)!;
    const base = { source, path, drift_type: null } as const;
    if (last.status === 'D') {
      items.push({ ...base, ref: `${path}@removed`, kind: 'removed', chars: 120, date: last.date, detail: { commit: last.sha } });
      continue;
    }
    items.push({ ...base, ref: `${path}@${first.sha}`, kind: first.status === 'A' ? 'created' : 'changed', chars: 4_000, date: first.date, detail: { commit: first.sha, pass: 'INITIAL' } });
    // The second pass only when the two dates are far enough apart to land in different chunks.
    if (last !== first && Date.parse(last.date) - Date.parse(first.date) > 7 * 86_400_000) {
      items.push({ ...base, ref: `${path}@${last.sha}`, kind: 'changed', chars: 4_000, date: last.date, detail: { commit: last.sha, pass: 'REVISIT' } });
    }
  }
  return items;
}

/**
 * Folds history forward (path A after the seed, path C's `engram fold --from DATE`): every commit, doc and issue
 * change and session since the date goes into the buffer, then chunks are dispatched oldest first until it is empty
 * or a chunk needs a person.
 */
export async function foldForward(
  context: DispatchContext,
  range: { after?: string | null; since: string },
  onChunk?: (outcome: DispatchOutcome) => void,
  env?: Parameters<typeof markSessionsRead>[3],
): Promise<DispatchOutcome[]> {
  const now = context.now();
  const own = ownPaths(context.config);
  const commits = (range.after ? listCommits(context.root, { after: range.after }) : listCommits(context.root, { since: range.since })) ?? [];
  const items: NewItem[] = [
    ...commits.map((commit) => commitItem(commit, own)).filter((item): item is NewItem => item !== null),
    ...historicalFileItems(context.root, context.config, range.since),
  ];
  enqueue(context.state, items, now);
  if (env) markSessionsRead(context.root, context.config, context.state, env, now, `${range.since}T00:00:00.000Z`);
  const head = headCommit(context.root);
  const outcomes: DispatchOutcome[] = [];
  for (;;) {
    const pending = pendingItems(context.state).filter((item) => item.source !== 'drift');
    if (!pending.some((item) => item.chars > 0)) break;
    const dates = pending.map((item) => item.date).sort();
    const dispatch = buildDispatch(context, { kind: 'fold', items: pending, period: { from: dates[0]!.slice(0, 10), to: dates.at(-1)!.slice(0, 10) } });
    if (!dispatch) break;
    const outcome = await runDispatch(context, dispatch);
    outcomes.push(outcome);
    onChunk?.(outcome);
    if (outcome.dispatch.state !== 'committed' || context.signal?.aborted) break;
  }
  if (outcomes.every((outcome) => outcome.dispatch.state === 'committed')) {
    setServerState(context.state, { last_poll_commit: head, last_poll_at: context.now().toISOString(), continuation_date: context.now().toISOString().slice(0, 10), last_scan_at: context.now().toISOString() });
  }
  return outcomes;
}

/** Sets the counters past the ids in the docs (after adoption, or docs edited by hand). */
export function syncProjectCounters(context: Pick<DispatchContext, 'root' | 'config' | 'state'>): Record<'C' | 'E' | 'W', number> {
  return syncCounters(context.state, definedIds(readDocSet(context.config, context.root)).keys());
}

/** The continuation date set by adoption or the last bootstrap, for `engram fold` without `--from`. */
export const continuationDate = (state: KnowledgeState): string | null => serverState(state).continuation_date;
