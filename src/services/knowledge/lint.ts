import { basename } from 'node:path';
import { authoritativeStatus } from './graveyard.js';
import { DOC_ROLES, fieldHasContent, findField, ROLE_PREFIX, type DocRole, type Entry, type IdPrefix, type ParsedDoc } from './parse.js';

/**
 * The schema linter (seed 002, "Schema Linter + Invariant Checks"). It runs after every fold dispatch, and on demand
 * (`engram docs lint`). Each violation names the file, the line, the rule and a one-line fix; the fold agent gets
 * them verbatim in its correction prompt. Pure: the caller reads the files and supplies the baseline.
 */

/** Every rule, with the fix hint shown beside each violation. */
export const LINT_RULES = {
  'doc-missing': 'create the file (engram docs init creates all six) or fix its path in .engram/config.yaml',
  'doc-not-utf8': 'save the file as UTF-8',
  'stray-heading': 'every "##" heading must be an entry "## C001: name (STATUS)"; fold other text into an entry or use "###"',
  'wrong-doc': 'move the entry to its home doc: C### concepts, E### claims, W### workflows; the timeline has phases only',
  'status-invalid': 'use a status of this doc type (concepts ACTIVE/DEAD/EVOLVED, claims believed/contested/unverified/refuted, workflows CURRENT/SUPERSEDED/MERGED)',
  'stub-missing-arrow': 'a DEAD/EVOLVED/SUPERSEDED/MERGED/refuted entry is a one-line stub: "## C012: name (DEAD) → concept_graveyard.md#C012"',
  'stub-bad-target': 'point the stub at its graveyard entry ("→ concept_graveyard.md#C012") or, for a workflow, at the W### that replaced it',
  'stub-has-body': 'move the full entry to the graveyard (append) and leave only the heading line with its arrow',
  'stub-target-missing': 'append the full entry to the graveyard, or point the arrow at an entry that exists',
  'stub-status-mismatch': 'the latest graveyard block for this id is authoritative: make the stub say the same status',
  'full-has-arrow': 'an ACTIVE/CURRENT/believed/contested/unverified entry has no arrow; remove "→ …" or change the status',
  'missing-field': 'add the required field (concepts: Code:; claims: Evidence: or History:; workflows: Context: and Trigger: or Current method:)',
  'empty-field': 'give the field a value',
  'guidance-too-long': 'cut Agent guidance to one actionable sentence',
  'entry-too-long': 'compact the entry: keep pointers and one-line facts, move history to the graveyard or the timeline',
  'duplicate-id': 'keep one entry per id; merge the two, and use a CORRECTION block in graveyards',
  'unresolved-reference': 'reference only ids that exist in their home doc (or its graveyard), or create the entry with an id reserved for this chunk',
  'graveyard-form': 'graveyard entries are "## C012: name (DEAD|EVOLVED)" / "## E001: name (REFUTED)" or "## C012 CORRECTION (YYYY-MM-DD)" blocks',
  'correction-without-entry': 'a CORRECTION block follows the entry it corrects; append the entry first',
  'graveyard-edited': 'graveyards are append-only: restore the earlier text and append a "## <id> CORRECTION (YYYY-MM-DD)" block instead',
  'timeline-date-range': 'give the phase a date range: "## Phase: Name (2024-Q4)" or "(2024-10 – 2024-12)"',
  'timeline-order': 'order phases chronologically, oldest first',
  'unreserved-id': 'use only the ids listed under "New ID assignments for this chunk"; never invent one',
  'entry-removed': 'restore the entry; an entry leaves the living doc only as a one-line stub pointing to its graveyard',
  'diff-size': 'the change is more than twice the expected growth: a person reviews it (engram docs accept|reject)',
} as const;

export type LintRule = keyof typeof LINT_RULES;

/** One problem. `hold` (the diff-size guard) stops a dispatch for a person instead of retrying it. */
export interface Violation {
  file: string;
  line: number;
  rule: LintRule;
  message: string;
  hint: string;
  severity: 'error' | 'hold';
}

/** What a dispatch adds to the checks: the ids reserved for it, what existed before, the growth expected. */
export interface ChunkContext {
  /** Ids the server reserved for this chunk; any other new id is `unreserved-id`. */
  reserved: ReadonlySet<string>;
  /** Ids defined in any doc before the dispatch. */
  knownBefore: ReadonlySet<string>;
  /** Ids defined in the living docs before the dispatch (each must still be there, full or as a stub). */
  livingBefore: ReadonlyMap<string, DocRole>;
  /** Changed characters (lines added + removed) over all six docs since the dispatch began. */
  diffChars?: number;
  /** Growth the chunk should produce; a diff over twice this is held for a person. */
  expectedGrowth?: number;
}

/** Everything one lint run looks at. */
export interface LintInput {
  docs: Partial<Record<DocRole, ParsedDoc>>;
  /** Problems found while reading (missing, not UTF-8), passed through. */
  readProblems?: Violation[];
  /** Graveyard text at the baseline (the last commit, or the dispatch's start): the current text must extend it. */
  graveyardBaseline?: Partial<Record<'conceptGraveyard' | 'epistemicGraveyard', string>>;
  chunk?: ChunkContext;
  maxEntryLines: number;
  /** Display paths of the six docs in DOC_ROLES order, so problems with unreadable docs sort with the rest. */
  fileOrder?: readonly string[];
}

/** FULL and STUB statuses per living doc; graveyard statuses per graveyard. */
const STATUSES: Record<'concepts' | 'epistemic' | 'workflows', { full: readonly string[]; stub: readonly string[] }> = {
  concepts: { full: ['ACTIVE'], stub: ['DEAD', 'EVOLVED'] },
  epistemic: { full: ['BELIEVED', 'CONTESTED', 'UNVERIFIED'], stub: ['REFUTED'] },
  workflows: { full: ['CURRENT'], stub: ['SUPERSEDED', 'MERGED'] },
};
const GRAVEYARD_STATUSES: Record<'conceptGraveyard' | 'epistemicGraveyard', readonly string[]> = {
  conceptGraveyard: ['DEAD', 'EVOLVED'],
  epistemicGraveyard: ['REFUTED'],
};
/** Where an id's full entry may live. */
const HOMES: Record<IdPrefix, DocRole[]> = {
  C: ['concepts', 'conceptGraveyard'],
  E: ['epistemic', 'epistemicGraveyard'],
  W: ['workflows'],
};
const GRAVEYARD_OF: Partial<Record<DocRole, 'conceptGraveyard' | 'epistemicGraveyard'>> = {
  concepts: 'conceptGraveyard',
  epistemic: 'epistemicGraveyard',
};
/** Guidance is one sentence; the seed's own example is two short ones, so the cap is on length. */
export const GUIDANCE_MAX_CHARS = 240;

const isLiving = (role: DocRole): role is 'concepts' | 'epistemic' | 'workflows' => role === 'concepts' || role === 'epistemic' || role === 'workflows';

/** Lints the docs. Violations come sorted by file order, then line. */
export function lintDocs(input: LintInput): Violation[] {
  const out: Violation[] = [...(input.readProblems ?? [])];
  const add = (file: string, line: number, rule: LintRule, message: string, severity: Violation['severity'] = 'error'): void => {
    out.push({ file, line, rule, message, hint: LINT_RULES[rule], severity });
  };
  const docs = input.docs;
  // Which ids each role defines (correction blocks do not define).
  const defined = new Map<DocRole, Map<string, Entry>>();
  for (const role of DOC_ROLES) {
    const doc = docs[role];
    if (!doc) continue;
    const ids = new Map<string, Entry>();
    for (const entry of doc.entries) {
      if (entry.correction !== null) continue;
      const seen = ids.get(entry.id);
      if (seen) add(doc.file, entry.line, 'duplicate-id', `${entry.id} is defined again (first at line ${seen.line})`);
      else ids.set(entry.id, entry);
    }
    defined.set(role, ids);
  }
  // A reference into a doc that could not be read is not judged: the read problem is the violation.
  const isDefined = (id: string): boolean => HOMES[id[0] as IdPrefix].some((role) => !docs[role] || defined.get(role)?.has(id));
  const authoritative = new Map<DocRole, Map<string, string>>();
  for (const role of ['conceptGraveyard', 'epistemicGraveyard'] as const) {
    if (docs[role]) authoritative.set(role, authoritativeStatus(docs[role]!));
  }

  // An id defined in two living docs (a C-entry copied into the claims doc) is a duplicate too.
  const livingOwner = new Map<string, string>();
  for (const role of DOC_ROLES) {
    const doc = docs[role];
    if (!doc || !(isLiving(role) || role === 'timeline')) continue;
    for (const entry of defined.get(role)?.values() ?? []) {
      const owner = livingOwner.get(entry.id);
      if (owner) add(doc.file, entry.line, 'duplicate-id', `${entry.id} is also defined in ${owner}`);
      else livingOwner.set(entry.id, doc.file);
    }
  }

  for (const role of DOC_ROLES) {
    const doc = docs[role];
    if (!doc) continue;
    for (const stray of doc.stray) add(doc.file, stray.line, 'stray-heading', `"${stray.text.slice(0, 80)}" is not an entry`);
    if (role === 'timeline') {
      lintTimeline(doc, add);
      for (const entry of doc.entries) add(doc.file, entry.line, 'wrong-doc', `${entry.id} is an entry; the timeline holds phases only`);
    } else if (isLiving(role)) {
      for (const entry of doc.entries) lintLivingEntry(doc, role, entry, input, authoritative, defined, add);
    } else {
      lintGraveyard(doc, role, add);
    }
    for (const reference of doc.references) {
      if (!isDefined(reference.id)) add(doc.file, reference.line, 'unresolved-reference', `${reference.id} is not defined in ${homeName(reference.id, docs)}`);
    }
  }

  for (const role of ['conceptGraveyard', 'epistemicGraveyard'] as const) {
    const baseline = input.graveyardBaseline?.[role];
    const doc = docs[role];
    if (baseline !== undefined && doc) lintAppendOnly(doc, baseline, add);
  }
  if (input.chunk) lintChunk(input.chunk, docs, defined, add);

  const order = new Map((input.fileOrder ?? DOC_ROLES.map((role) => docs[role]?.file ?? role)).map((file, index) => [file, index]));
  return out.sort((a, b) => (order.get(a.file) ?? 99) - (order.get(b.file) ?? 99) || a.line - b.line || a.rule.localeCompare(b.rule));
}

type Add = (file: string, line: number, rule: LintRule, message: string, severity?: Violation['severity']) => void;

function homeName(id: string, docs: LintInput['docs']): string {
  return HOMES[id[0] as IdPrefix].map((role) => (docs[role] ? basename(docs[role]!.file) : role)).join(' or ');
}

function lintLivingEntry(
  doc: ParsedDoc,
  role: 'concepts' | 'epistemic' | 'workflows',
  entry: Entry,
  input: LintInput,
  authoritative: Map<DocRole, Map<string, string>>,
  defined: Map<DocRole, Map<string, Entry>>,
  add: Add,
): void {
  const where = (line: number) => [doc.file, line] as const;
  if (entry.correction !== null) {
    add(...where(entry.line), 'stray-heading', `CORRECTION blocks belong in graveyards, not in ${basename(doc.file)}`);
    return;
  }
  if (entry.prefix !== ROLE_PREFIX[role]) {
    add(...where(entry.line), 'wrong-doc', `${entry.id} is a ${kindOf(entry.prefix)}; ${basename(doc.file)} holds ${kindOf(ROLE_PREFIX[role]!)}s`);
    return;
  }
  const statuses = STATUSES[role];
  const full = statuses.full.includes(entry.statusKey);
  const stub = statuses.stub.includes(entry.statusKey);
  if (!full && !stub) {
    add(...where(entry.line), 'status-invalid', `${entry.id} has status "${entry.status}"; a ${kindOf(entry.prefix)} is ${[...statuses.full, ...statuses.stub].join(' / ')}`);
    return;
  }
  const graveyard = GRAVEYARD_OF[role];
  const latest = graveyard ? authoritative.get(graveyard)?.get(entry.id) : undefined;
  if (latest !== undefined && latest !== entry.statusKey) {
    add(...where(entry.line), 'stub-status-mismatch', `${entry.id} says ${entry.status} but its latest graveyard block says ${latest}`);
  }
  if (stub) {
    if (entry.arrow === null || entry.arrow === '') {
      add(...where(entry.line), 'stub-missing-arrow', `${entry.id} is ${entry.status} but has no "→ target"`);
    } else if (graveyard) {
      const graveyardDoc = input.docs[graveyard];
      const [file, anchor] = entry.arrow.split('#');
      const expected = graveyardDoc ? basename(graveyardDoc.file) : undefined;
      if (anchor !== entry.id || (expected !== undefined && basename(file!.trim()) !== expected)) {
        add(...where(entry.line), 'stub-bad-target', `${entry.id} points to "${entry.arrow}", expected ${expected ?? 'its graveyard'}#${entry.id}`);
      } else if (graveyardDoc && !defined.get(graveyard)?.has(entry.id)) {
        add(...where(entry.line), 'stub-target-missing', `${entry.id} points to ${expected}#${entry.id}, which has no entry for it`);
      }
    } else {
      const target = /^(W\d{3,})\b/.exec(entry.arrow)?.[1];
      if (!target || target === entry.id) add(...where(entry.line), 'stub-bad-target', `${entry.id} is ${entry.status} and must point to the workflow that replaced it (→ W###)`);
      else if (!defined.get('workflows')?.has(target)) add(...where(entry.line), 'stub-target-missing', `${entry.id} points to ${target}, which does not exist`);
    }
    if (entry.bodyLines > 0) add(...where(entry.line + 1), 'stub-has-body', `${entry.id} is ${entry.status} and keeps ${entry.bodyLines} line(s) of body in the living doc`);
    return;
  }
  if (entry.arrow !== null) add(...where(entry.line), 'full-has-arrow', `${entry.id} is ${entry.status} but points elsewhere ("→ ${entry.arrow}")`);
  const required: Array<{ names: string[]; label: string }> =
    role === 'concepts'
      ? [{ names: ['Code'], label: 'Code:' }]
      : role === 'epistemic'
        ? [{ names: ['Evidence', 'History'], label: 'Evidence: or History:' }]
        : [
            { names: ['Context'], label: 'Context:' },
            { names: ['Trigger', 'Current method'], label: 'Trigger: or Current method:' },
          ];
  for (const requirement of required) {
    const fields = requirement.names.map((name) => findField(entry, name, { prefix: name === 'Trigger' })).filter((field) => field !== undefined);
    if (fields.length === 0) add(...where(entry.line), 'missing-field', `${entry.id} (${entry.status}) has no ${requirement.label}`);
    else if (!fields.some(fieldHasContent)) add(doc.file, fields[0]!.line, 'empty-field', `${entry.id}'s ${fields[0]!.name}: is empty`);
  }
  const guidance = findField(entry, 'Agent guidance');
  if (guidance) {
    const text = [guidance.value, ...guidance.continuation].join(' ');
    if (text.length > GUIDANCE_MAX_CHARS) add(doc.file, guidance.line, 'guidance-too-long', `${entry.id}'s Agent guidance has ${text.length} characters (at most ${GUIDANCE_MAX_CHARS})`);
  }
  if (entry.bodyLines > input.maxEntryLines) {
    add(...where(entry.line), 'entry-too-long', `${entry.id} has ${entry.bodyLines} lines (at most ${input.maxEntryLines}, thresholds.max_entry_lines)`);
  }
}

const kindOf = (prefix: IdPrefix): string => (prefix === 'C' ? 'concept' : prefix === 'E' ? 'claim' : 'workflow');

function lintGraveyard(doc: ParsedDoc, role: DocRole, add: Add): void {
  const allowed = GRAVEYARD_STATUSES[role as 'conceptGraveyard' | 'epistemicGraveyard'];
  const seen = new Set<string>();
  for (const entry of doc.entries) {
    if (entry.prefix !== ROLE_PREFIX[role]) {
      add(doc.file, entry.line, 'wrong-doc', `${entry.id} is a ${kindOf(entry.prefix)}; ${basename(doc.file)} holds ${kindOf(ROLE_PREFIX[role]!)}s`);
      continue;
    }
    if (entry.correction !== null) {
      if (!seen.has(entry.id)) add(doc.file, entry.line, 'correction-without-entry', `${entry.id} CORRECTION comes before any ${entry.id} entry`);
      continue;
    }
    seen.add(entry.id);
    if (!allowed.includes(entry.statusKey)) add(doc.file, entry.line, 'graveyard-form', `${entry.id} has status "${entry.status}"; this graveyard holds ${allowed.join(' / ')} entries`);
  }
}

function lintTimeline(doc: ParsedDoc, add: Add): void {
  let previous: { start: string; line: number } | null = null;
  for (const phase of doc.phases) {
    if (phase.start === null) {
      add(doc.file, phase.line, 'timeline-date-range', phase.range ? `"${phase.range}" is not a date range` : `phase "${phase.title}" has no date range`);
      continue;
    }
    if (previous && phase.start < previous.start) {
      add(doc.file, phase.line, 'timeline-order', `phase "${phase.title}" (${phase.range}) starts before the phase at line ${previous.line}`);
    }
    previous = { start: phase.start, line: phase.line };
  }
}

/** The earlier text must be a prefix of the current one (trailing blank lines aside). */
function lintAppendOnly(doc: ParsedDoc, baseline: string, add: Add): void {
  const before = baseline.replace(/\s+$/, '').split(/\r?\n/);
  if (before.length === 1 && before[0] === '') return;
  const now = doc.lines;
  for (let index = 0; index < before.length; index++) {
    if (now[index] !== before[index]) {
      const what = index >= now.length ? 'was removed' : 'was changed';
      add(doc.file, index + 1, 'graveyard-edited', `line ${index + 1} ${what} ("${(before[index] ?? '').slice(0, 60)}")`);
      return;
    }
  }
}

function lintChunk(chunk: ChunkContext, docs: LintInput['docs'], defined: Map<DocRole, Map<string, Entry>>, add: Add): void {
  for (const role of DOC_ROLES) {
    const doc = docs[role];
    if (!doc) continue;
    for (const entry of defined.get(role)?.values() ?? []) {
      if (!chunk.knownBefore.has(entry.id) && !chunk.reserved.has(entry.id)) {
        add(doc.file, entry.line, 'unreserved-id', `${entry.id} is new but was not reserved for this chunk`);
      }
    }
  }
  for (const [id, role] of chunk.livingBefore) {
    const doc = docs[role];
    if (doc && !defined.get(role)?.has(id)) add(doc.file, 1, 'entry-removed', `${id} was in ${basename(doc.file)} before this chunk and is gone`);
  }
  if (chunk.diffChars !== undefined && chunk.expectedGrowth !== undefined && chunk.diffChars > 2 * chunk.expectedGrowth) {
    const file = docs.concepts?.file ?? 'living docs';
    add(file, 1, 'diff-size', `the docs changed by ${chunk.diffChars} characters, more than twice the ${chunk.expectedGrowth} expected`, 'hold');
  }
}

/**
 * Changed characters between two texts: lines present in one and not the other (as multisets), summed. Linear,
 * unlike a real diff, and close enough to catch a wholesale rewrite or a duplication.
 */
export function lineDiffChars(before: string, after: string): number {
  const counts = new Map<string, number>();
  for (const line of before.split('\n')) counts.set(line, (counts.get(line) ?? 0) + 1);
  let added = 0;
  for (const line of after.split('\n')) {
    const left = counts.get(line) ?? 0;
    if (left > 0) counts.set(line, left - 1);
    else added += line.length + 1;
  }
  let removed = 0;
  for (const [line, left] of counts) removed += left * (line.length + 1);
  return added + removed;
}
