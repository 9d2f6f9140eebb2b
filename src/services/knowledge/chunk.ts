import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { basename, relative, resolve } from 'node:path';
import { redactText } from '../../core/index.js';
import type { KnowledgeConfig } from './config.js';
import type { DocSet } from './docset.js';
import { gitOutput } from './_git.js';
import { formatId, idNumber, type IdRequest } from './ids.js';
import { DOC_ROLES, type DocRole } from './parse.js';
import { condenseSession, FOLD_SENTINEL, ownPaths } from './sources.js';
import type { BufferItem } from './state.js';
import { CHUNK, RESERVE } from './tuning.js';

/**
 * Chunk building (seed 002, "Dispatch mechanics" 1–2 and "Scheduling Priority"): pure CPU. The budget is what the
 * context limit leaves after the living docs and the instructions; items are taken by priority (drift triage, then
 * new knowledge in chronological order, then workflow synthesis) until it is spent; ids are reserved for the new
 * entries the items may create; and one self-contained input file says everything the fold agent needs.
 */

/** Room for items: the context limit minus the docs the agent reads and the instructions, capped per chunk. */
export function chunkBudget(config: KnowledgeConfig, docsChars: number): number {
  const remaining = config.budget.context_limit_chars - docsChars - config.budget.instructions_overhead;
  return Math.max(0, Math.min(config.budget.max_chunk_chars, remaining));
}

/** Seed priority: 1 drift triage, 2 new knowledge, 3 workflow changes. */
export const priorityOf = (item: Pick<BufferItem, 'source' | 'drift_type'>): 1 | 2 | 3 =>
  item.source === 'drift' ? (item.drift_type === 'workflow' ? 3 : 1) : 2;

/** Picks the items of the next chunk: by priority, then date; an item too big for what is left waits (or is cut when alone). */
export function selectItems(items: readonly BufferItem[], budget: number): { chosen: BufferItem[]; chars: number } {
  const ordered = [...items].sort((a, b) => priorityOf(a) - priorityOf(b) || a.date.localeCompare(b.date) || a.id - b.id);
  const chosen: BufferItem[] = [];
  let chars = 0;
  for (const item of ordered) {
    if (chars + item.chars <= budget) {
      chosen.push(item);
      chars += item.chars;
    } else if (chosen.length === 0 && budget > 0) {
      // One item larger than a whole chunk: it goes alone, its text cut to the budget when rendered.
      chosen.push(item);
      chars = budget;
      break;
    }
  }
  return { chosen, chars };
}

/** How many ids each kind the chosen items may need. */
export function idRequest(items: readonly BufferItem[], kind: 'fold' | 'seed'): IdRequest {
  if (kind === 'seed') return { ...RESERVE.seed };
  let C = 0;
  let E = 0;
  let W = 0;
  let sessions = 0;
  for (const item of items) {
    if (item.source === 'git') C += RESERVE.conceptPerCommit;
    else if (item.source === 'doc' || item.source === 'issue') {
      C += RESERVE.conceptPerFile;
      E += RESERVE.claimPerFile;
    } else if (item.source === 'session' && item.kind === 'session') {
      E += RESERVE.claimPerSession;
      sessions++;
    } else if (item.drift_type === 'workflow') W += 1;
  }
  W += Math.floor(sessions / RESERVE.workflowPerSessions);
  const clamp = (value: number, prefix: 'C' | 'E' | 'W') => Math.max(RESERVE.min[prefix], Math.min(RESERVE.max[prefix], value));
  return { C: clamp(C, 'C'), E: clamp(E, 'E'), W: clamp(W, 'W') };
}

/** Growth the chunk should produce; the diff-size guard holds anything over twice this. */
export function expectedGrowth(reservedCount: number, itemCount: number): number {
  return Math.max(CHUNK.growthFloor, CHUNK.growthBase + reservedCount * CHUNK.growthPerId + itemCount * CHUNK.growthPerItem);
}

/** Reads up to `max` characters of a file. */
function readHead(path: string, max: number): string | null {
  try {
    const size = statSync(path).size;
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.alloc(Math.min(size, max * 4));
      const read = readSync(fd, buffer, 0, buffer.length, 0);
      const text = buffer.subarray(0, read).toString('utf8');
      return text.length > max ? `${text.slice(0, max)}\n… (cut at ${max} characters)` : text;
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}\n… (cut at ${max} characters)` : text);

/** The text one item contributes to the chunk. `repoRoot` is where git and the files are read. */
export function renderItem(item: BufferItem, repoRoot: string, config: KnowledgeConfig, max: number): string {
  if (item.chars === 0) return ''; // a transcript range with nothing to read: carried only to move its cursor
  const when = item.date.slice(0, 10);
  switch (item.source) {
    case 'git': {
      const excluded = [...ownPaths(config)].map((path) => `:(exclude)${path}`);
      const show = gitOutput(repoRoot, ['show', '--no-color', '--format=commit %H%nDate: %aI%n%n%B', '--stat', '--patch', item.ref, '--', '.', ':(exclude).engram', ...excluded]);
      const subject = String(item.detail.subject ?? '');
      return `### Commit ${item.ref.slice(0, 10)} (${when}): ${subject}\n\n\`\`\`diff\n${cut(show ?? '(the commit is no longer in the repository)', Math.min(max, CHUNK.commitDiffChars))}\n\`\`\``;
    }
    case 'doc':
    case 'issue': {
      const label = item.source === 'doc' ? 'Doc' : 'Issue';
      if (item.kind === 'removed') return `### ${label} removed: ${item.path} (${when})`;
      const at = typeof item.detail.commit === 'string' ? item.detail.commit : null;
      const text = at ? gitOutput(repoRoot, ['show', `${at}:${item.path}`]) : readHead(resolve(repoRoot, item.path!), Math.min(max, CHUNK.fileChars));
      const pass = item.detail.pass ? ` — ${String(item.detail.pass)}` : '';
      return `### ${label} ${item.kind === 'created' ? 'created' : 'changed'}: ${item.path} (${when}${pass})\n\n${cut(text ?? '(unreadable)', Math.min(max, CHUNK.fileChars))}`;
    }
    case 'session': {
      const from = Number(item.detail.from ?? 0);
      const to = Number(item.detail.to ?? 0);
      let text = '(the transcript is no longer readable)';
      try {
        const fd = openSync(item.path!, 'r');
        try {
          const buffer = Buffer.alloc(Math.max(0, to - from));
          readSync(fd, buffer, 0, buffer.length, from);
          const harness = item.detail.harness === 'codex' ? 'codex' : 'claude';
          const condensed = condenseSession(buffer.toString('utf8'), harness);
          if (condensed.text.includes(FOLD_SENTINEL)) return '';
          text = condensed.text;
        } finally {
          closeSync(fd);
        }
      } catch {
        // Rotated or removed: say so.
      }
      return `### Session ${basename(item.path ?? '')} (${when}, ${String(item.detail.harness ?? '')})\n\n${cut(text, max)}`;
    }
    case 'drift':
      return `### Drift (${item.drift_type}): ${String(item.detail.summary ?? item.ref)}\n\n${String(item.detail.text ?? '')}`;
  }
}

/** Everything the input file is made of. */
export interface ChunkInput {
  number: number;
  kind: 'fold' | 'seed';
  docs: DocSet;
  /** The root docs are shown relative to (where the agent runs). */
  workRoot: string;
  reserved: readonly string[];
  items: readonly BufferItem[];
  /** Rendered item texts, in order. */
  rendered: readonly string[];
  config: KnowledgeConfig;
  /** For a fold-forward chunk: the period it covers. */
  period?: { from: string; to: string } | null;
  /** Extra instructions (the seed's onboarding read). */
  preface?: string;
}

const ROLE_LABEL: Record<DocRole, string> = {
  concepts: 'Concept registry (C###)',
  epistemic: 'Epistemic state (E###)',
  workflows: 'Workflow registry (W###)',
  timeline: 'Timeline',
  conceptGraveyard: 'Concept graveyard (append-only)',
  epistemicGraveyard: 'Epistemic graveyard (append-only)',
};

/** Groups `C013, C014, C015` into `C013–C015`. */
export function describeIds(ids: readonly string[]): string {
  const out: string[] = [];
  for (const prefix of ['C', 'E', 'W'] as const) {
    const numbers = ids.filter((id) => id[0] === prefix).map(idNumber).sort((a, b) => a - b);
    let start = numbers[0];
    for (let i = 0; i < numbers.length; i++) {
      if (numbers[i + 1] !== numbers[i]! + 1) {
        out.push(start === numbers[i] ? formatId(prefix, start!) : `${formatId(prefix, start!)}–${formatId(prefix, numbers[i]!)}`);
        start = numbers[i + 1];
      }
    }
  }
  return out.join(', ');
}

/** The schema, as the agent must write it; kept beside the linter's rules so the two cannot drift apart. */
export const SCHEMA_TEXT = `Entry forms (one "##" heading per entry; "###" and below are free):
- Concept, FULL: "## C042: name (ACTIVE)" or "(ACTIVE — HAS DEBT)"; required "- **Code:** \`path/file.ext\`, \`Symbol.method()\`"; optional Issues:, Aliases:, Relationship:, Rationale:, Debt:.
- Concept, STUB: "## C042: name (DEAD) → concept_graveyard.md#C042" (or EVOLVED): the heading line only; the full entry is appended to the concept graveyard.
- Claim, FULL: "## E007: name (believed|contested|unverified)"; required **Evidence:** (or **History:**), a chronological chain; optional **Position:**, **Related concepts:** (by id), **Agent guidance:** (one sentence).
- Claim, STUB: "## E001: name (refuted) → epistemic_graveyard.md#E001"; the full evidence chain goes to the epistemic graveyard.
- Workflow, FULL: "## W007: name (CURRENT)"; required **Context:** and **Current method:** or **Trigger for change:**; optional Supersedes:, Lesson:, Repetitions detected:, Debt:.
- Workflow, STUB: "## W003: name (SUPERSEDED) → W007" (or MERGED → W###).
- Timeline: "## Phase: name (2025-01 – 2025-02)": every phase has a date range; phases in chronological order; narrative, referencing ids.
- Graveyards are append-only: never edit or remove earlier text. To fix a misclassification append "## C012 CORRECTION (YYYY-MM-DD)" with a line "Reclassified: DEAD → EVOLVED → C089". The latest block for an id is authoritative; make the living stub say the same.
Rules: liveness (concepts: ACTIVE/DEAD/EVOLVED, from the code) and validity (claims: believed/contested/unverified/refuted, from evidence) never mix — a number someone measured is a claim, the code that computes it is a concept. Every id you mention must exist. Keep entries short (pointers and one-line facts); no meta-commentary about this fold.`;

/** The chunk input file (markdown). */
export function renderChunk(input: ChunkInput): string {
  const { config, docs } = input;
  const number = String(input.number).padStart(3, '0');
  const lines: string[] = [
    `# Engram knowledge fold — chunk ${number}`,
    `<!-- ${FOLD_SENTINEL} chunk ${input.number} -->`,
    '',
    'You maintain this project\'s living knowledge docs: what exists (concepts), what we believe (claims), how we work',
    '(workflows) and what happened (timeline). Read the docs below, then fold the new items of this chunk into them',
    'with surgical edits made with your file tools. Edit only these six files.',
    '',
  ];
  if (input.preface) lines.push(input.preface, '');
  if (input.period) {
    lines.push(
      `This chunk covers ${input.period.from} to ${input.period.to}. Judge what exists from the items of this period; the`,
      'working tree may already hold later code.',
      '',
    );
  }
  lines.push('## Living docs and graveyards (read them, edit them in place)', '');
  for (const role of DOC_ROLES) {
    const path = relative(input.workRoot, docs.paths[role]);
    const size = docs.texts[role]?.length;
    lines.push(`- ${ROLE_LABEL[role]}: \`${path}\`${size === undefined ? ' (missing: create it)' : ` (${size} characters)`}`);
  }
  lines.push('', '## New ID assignments for this chunk', '');
  if (input.reserved.length === 0) lines.push('None: this chunk creates no new entries.');
  for (const id of input.reserved) {
    const what = id[0] === 'C' ? 'new concept' : id[0] === 'E' ? 'new claim' : 'new workflow';
    lines.push(`- ${id}: (${what} — assign when you create the entry)`);
  }
  if (input.reserved.length > 0) {
    lines.push('', `Use only these ids (${describeIds(input.reserved)}) for new entries, in order, and never invent one; leave the rest unused.`);
  }
  lines.push('', '## Schema', '', SCHEMA_TEXT, '');
  const triage = input.items.filter((item) => item.source === 'drift' && item.drift_type !== 'workflow');
  if (triage.length > 0) lines.push('## Drift to resolve first (priority 1)', '', 'Decide each: update the pointer, or mark the concept DEAD/EVOLVED (move it to the graveyard, leave the stub); resolve or re-evidence the claim.', '');
  let index = 0;
  let heading = false;
  for (const item of input.items) {
    const text = input.rendered[index++] ?? '';
    if (text === '') continue;
    if (item.source !== 'drift' && !heading) {
      lines.push(`## New items (${input.items.filter((other) => other.source !== 'drift').length}, oldest first)`, '');
      heading = true;
    }
    if (item.source === 'drift' && item.drift_type === 'workflow') lines.push('## Workflow synthesis (priority 3)', '');
    lines.push(redactText(text), '');
  }
  lines.push('## When you are done', '', 'The server lints the docs (schema, ids, cross-references, append-only graveyards, growth) and sends back any violation with its fix. Say "done" in one line.');
  return `${lines.join('\n')}\n`;
}

/** The prompt on the fold command's stdin: short, pointing at the self-contained input file. */
export function foldPrompt(number: number, inputFile: string): string {
  return `${FOLD_SENTINEL} chunk ${number}] Read the file ${inputFile} and update the 4 living docs and the graveyard files based on the new content, as it instructs. Edit the files in place with your file tools; do not edit any other file.`;
}

/** The correction prompt after a lint failure (seed: "re-dispatch with correction prompt"). */
export function retryPrompt(number: number, attempt: number, inputFile: string, retryFile: string): string {
  return `${FOLD_SENTINEL} chunk ${number}, retry ${attempt}] Your edits for ${inputFile} broke the docs' schema. Read ${retryFile}, which lists each violation with its fix, and correct the docs in place. Do not edit any other file.`;
}

/** The correction file: violations with their hints, and where the docs as they were before the chunk are. */
export function renderRetry(number: number, attempt: number, violations: ReadonlyArray<{ file: string; line: number; rule: string; message: string; hint: string }>, beforeDir: string): string {
  return [
    `# Chunk ${String(number).padStart(3, '0')}: corrections (attempt ${attempt})`,
    '',
    'The linter found these problems in the docs after your edit. Fix every one; keep the new content of the chunk.',
    `The docs as they were before this chunk are in \`${beforeDir}\`: restore anything removed by mistake from there.`,
    '',
    ...violations.map((v) => `- ${v.file}:${v.line} [${v.rule}] ${v.message} — fix: ${v.hint}`),
    '',
  ].join('\n');
}
