/**
 * Reads the living docs and graveyards (seed 002, "Document Schemas") into entries: one pass over the lines, regular
 * expressions only, so that linting a megabyte of docs stays within the linter's budget (bench/knowledge-lint.mjs).
 * Nothing here judges an entry; lint.ts does.
 */

/** The six documents, by role. */
export type DocRole = 'timeline' | 'concepts' | 'epistemic' | 'workflows' | 'conceptGraveyard' | 'epistemicGraveyard';

/** Every role, in the order docs are listed and linted. */
export const DOC_ROLES: readonly DocRole[] = ['concepts', 'epistemic', 'workflows', 'timeline', 'conceptGraveyard', 'epistemicGraveyard'];

/** The id prefix whose home each role is (the timeline has none). */
export const ROLE_PREFIX: Record<DocRole, IdPrefix | null> = {
  concepts: 'C',
  epistemic: 'E',
  workflows: 'W',
  timeline: null,
  conceptGraveyard: 'C',
  epistemicGraveyard: 'E',
};

export type IdPrefix = 'C' | 'E' | 'W';

/** `C042`, `E7` is not an id: at least three digits, as the seed writes them. */
export const ID_SOURCE = '[CEW]\\d{3,}';
const ID_EXACT = new RegExp(`^${ID_SOURCE}$`);
/** True for a well-formed stable id. */
export const isStableId = (value: string): boolean => ID_EXACT.test(value);

/** One `**Name:** value` field of an entry, with the lines that continue it. */
export interface Field {
  name: string;
  /** The text after the colon on the field's own line. */
  value: string;
  /** Lines below it (bullets of an Evidence chain) before the next field. */
  continuation: string[];
  line: number;
}

/** One `## C042: name (STATUS[ — MODIFIER]) [→ target]` entry, or a graveyard `## C012 CORRECTION (date)` block. */
export interface Entry {
  id: string;
  prefix: IdPrefix;
  name: string;
  /** Status as written, e.g. `ACTIVE`, `contested`. */
  status: string;
  /** Upper-cased status for comparisons. */
  statusKey: string;
  /** `HAS DEBT`, `RATIONALE QUESTIONED`, … */
  modifier: string | null;
  /** What the arrow points at (`concept_graveyard.md#C042`, `W007`), or null. */
  arrow: string | null;
  /** 1-based line of the heading. */
  line: number;
  /** Last line of the entry (before the next `##` heading or the end). */
  endLine: number;
  fields: Field[];
  /** Non-blank lines below the heading. */
  bodyLines: number;
  /** Set for a graveyard correction block: its date. */
  correction: string | null;
}

/** A `##` heading that is not an entry of this document's kind (meta-commentary, a typo). */
export interface StrayHeading {
  line: number;
  text: string;
}

/** One timeline phase: `## Phase: Name (2024-Q4)`. */
export interface Phase {
  title: string;
  line: number;
  endLine: number;
  /** The parenthesised range as written, or null. */
  range: string | null;
  /** Start and end as comparable `YYYY-MM-DD` strings, or null when the range cannot be read. */
  start: string | null;
  end: string | null;
}

/** One id mentioned in the text (outside code spans and fences), not counting an entry's own heading id. */
export interface Reference {
  id: string;
  line: number;
}

/** A parsed document. */
export interface ParsedDoc {
  role: DocRole;
  /** Path as shown in violations (relative to the repository). */
  file: string;
  lines: string[];
  entries: Entry[];
  stray: StrayHeading[];
  phases: Phase[];
  references: Reference[];
}

const ENTRY_HEADING = new RegExp(`^##\\s+(${ID_SOURCE})\\s*:\\s*(.+?)\\s*\\(([^()]*)\\)\\s*(?:(?:→|->)\\s*(.*?))?\\s*$`);
const CORRECTION_HEADING = new RegExp(`^##\\s+(${ID_SOURCE})\\s+CORRECTION\\s*\\((\\d{4}-\\d{2}-\\d{2})\\)\\s*$`, 'i');
const H2 = /^##(?!#)\s*(.*)$/;
const FIELD_BOLD = /^\s*(?:[-*+]\s+)?\*\*([A-Za-z][A-Za-z /-]{0,40}?)\s*:\s*\*\*\s*(.*)$/;
const FIELD_PLAIN = /^\s*[-*+]\s+([A-Z][A-Za-z /-]{0,40}?):\s+(.*)$/;
const REFERENCE = new RegExp(`\\b(${ID_SOURCE})\\b`, 'g');
const FENCE = /^\s*(```|~~~)/;
const CODE_SPAN = /`[^`]*`/g;
const NON_BLANK = /\S/;
const HAS_ID = /[CEW]\d{3}/;

/** Splits `ACTIVE — HAS DEBT` into status and modifier (em dash, en dash or a spaced hyphen). */
function splitStatus(inside: string): { status: string; modifier: string | null } {
  const parts = inside.split(/\s+[—–-]\s+/);
  const status = (parts[0] ?? '').trim();
  const modifier = parts.slice(1).join(' — ').trim();
  return { status, modifier: modifier === '' ? null : modifier };
}

/** Plain field names accepted without bold (`- Code: …`): only known ones, so evidence bullets stay bullets. */
const PLAIN_FIELDS = new Set([
  'Code', 'Issues', 'Aliases', 'Relationship', 'Rationale', 'Debt', 'Status', 'Position', 'Evidence', 'History',
  'Related concepts', 'Agent guidance', 'Context', 'Current method', 'Supersedes', 'Trigger', 'Trigger for change',
  'Lesson', 'Repetitions detected', 'Repetition', 'Died', 'Residue', 'Replaced by', 'Archive', 'Claimed in',
  'Refuted by', 'Mechanism', 'Corrected value',
]);

/** Reads one field line, or null. */
export function readField(line: string): { name: string; value: string } | null {
  // Most body lines are not fields: skip the regular expressions unless the line can be one.
  const colon = line.indexOf(':');
  if (colon < 0 || colon > 60) return null;
  const bold = line.includes('**') ? FIELD_BOLD.exec(line) : null;
  if (bold) return { name: bold[1]!.trim(), value: bold[2]!.trim() };
  const first = line.trimStart()[0];
  if (first !== '-' && first !== '*' && first !== '+') return null;
  const plain = FIELD_PLAIN.exec(line);
  if (plain && PLAIN_FIELDS.has(plain[1]!.trim())) return { name: plain[1]!.trim(), value: plain[2]!.trim() };
  return null;
}

const QUARTER_END = ['03-31', '06-30', '09-30', '12-31'];
const MONTH_END = (year: number, month: number): string => String(new Date(Date.UTC(year, month, 0)).getUTCDate()).padStart(2, '0');

/** One date token of a phase range as [start, end] (`2024-Q4`, `2024-10`, `2024-10-03`, `2024`), or null. */
function dateToken(token: string): [string, string] | null {
  let match = /^(\d{4})-Q([1-4])$/i.exec(token);
  if (match) {
    const quarter = Number(match[2]);
    return [`${match[1]}-${String(quarter * 3 - 2).padStart(2, '0')}-01`, `${match[1]}-${QUARTER_END[quarter - 1]}`];
  }
  match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(token);
  if (match) return [token, token];
  match = /^(\d{4})-(\d{2})$/.exec(token);
  if (match && Number(match[2]) >= 1 && Number(match[2]) <= 12) return [`${token}-01`, `${token}-${MONTH_END(Number(match[1]), Number(match[2]))}`];
  match = /^(\d{4})$/.exec(token);
  if (match) return [`${token}-01-01`, `${token}-12-31`];
  return null;
}

/**
 * Reads a phase's date range: one date (`2024-Q4`, `2025-01-03`) or two joined by `–`, `—`, `-` (spaced), `to`
 * or `..`; the second may be `present`/`now`. Returns null when it cannot.
 */
export function parseDateRange(range: string): { start: string; end: string } | null {
  const parts = range
    .trim()
    .split(/\s+(?:–|—|-|to|until)\s+|\s*\.\.\s*|\s*[–—]\s*/i)
    .map((part) => part.trim())
    .filter(Boolean);
  if (parts.length === 0 || parts.length > 2) return null;
  const first = dateToken(parts[0]!);
  if (!first) return null;
  if (parts.length === 1) return { start: first[0], end: first[1] };
  if (/^(present|now|today|ongoing)$/i.test(parts[1]!)) return { start: first[0], end: '9999-12-31' };
  const second = dateToken(parts[1]!);
  return second ? { start: first[0], end: second[1] } : null;
}

/** Parses one document's text. `file` is how violations name it. */
export function parseDoc(role: DocRole, file: string, text: string): ParsedDoc {
  const lines = text.split('\n');
  if (text.includes('\r')) for (let i = 0; i < lines.length; i++) if (lines[i]!.endsWith('\r')) lines[i] = lines[i]!.slice(0, -1);
  const entries: Entry[] = [];
  const stray: StrayHeading[] = [];
  const phases: Phase[] = [];
  const references: Reference[] = [];
  let current: Entry | null = null;
  let phase: Phase | null = null;
  let field: Field | null = null;
  let fenced = false;

  const close = (line: number): void => {
    if (current) current.endLine = line;
    if (phase) phase.endLine = line;
    current = null;
    phase = null;
    field = null;
  };

  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const number = index + 1;
    if ((line.includes('```') || line.includes('~~~')) && FENCE.test(line)) {
      fenced = !fenced;
      if (current) (current as Entry).bodyLines++;
      continue;
    }
    if (!fenced && line.startsWith('##') && H2.test(line)) {
      close(number - 1);
      const entry = ENTRY_HEADING.exec(line);
      const correction = entry ? null : CORRECTION_HEADING.exec(line);
      if (entry) {
        const { status, modifier } = splitStatus(entry[3]!);
        current = {
          id: entry[1]!,
          prefix: entry[1]![0] as IdPrefix,
          name: entry[2]!.trim(),
          status,
          statusKey: status.toUpperCase(),
          modifier,
          arrow: entry[4] === undefined || entry[4] === '' ? (/(?:→|->)\s*$/.test(line) ? '' : null) : entry[4].trim(),
          line: number,
          endLine: number,
          fields: [],
          bodyLines: 0,
          correction: null,
        };
        entries.push(current);
        // The arrow's target is a reference too (`→ W007`, `→ concept_graveyard.md#C042`).
        if (current.arrow) for (const match of current.arrow.matchAll(REFERENCE)) references.push({ id: match[1]!, line: number });
        continue;
      }
      if (correction) {
        current = {
          id: correction[1]!,
          prefix: correction[1]![0] as IdPrefix,
          name: '',
          status: 'CORRECTION',
          statusKey: 'CORRECTION',
          modifier: null,
          arrow: null,
          line: number,
          endLine: number,
          fields: [],
          bodyLines: 0,
          correction: correction[2]!,
        };
        entries.push(current);
        continue;
      }
      const title = H2.exec(line)![1]!.trim();
      if (role === 'timeline') {
        const ranged = /^(.*?)\s*\(([^()]*)\)\s*$/.exec(title);
        const range = ranged ? ranged[2]!.trim() : null;
        const parsed = range ? parseDateRange(range) : null;
        phase = { title: ranged ? ranged[1]! : title, line: number, endLine: number, range, start: parsed?.start ?? null, end: parsed?.end ?? null };
        phases.push(phase);
      } else {
        stray.push({ line: number, text: line });
      }
      scanReferences(line, number, references);
      continue;
    }
    if (current !== null && NON_BLANK.test(line)) {
      const entry = current as Entry;
      entry.bodyLines++;
      const found = fenced ? null : readField(line);
      if (found) {
        field = { name: found.name, value: found.value, continuation: [], line: number };
        entry.fields.push(field);
      } else if (field) {
        (field as Field).continuation.push(line.trim());
      }
    }
    if (!fenced) scanReferences(line, number, references);
  }
  close(lines.length);
  return { role, file, lines, entries, stray, phases, references };
}

/** Adds the ids mentioned on a line, ignoring `code spans` (a path like `E501_rules.py` is not a claim). */
function scanReferences(line: string, number: number, into: Reference[]): void {
  if (!HAS_ID.test(line)) return;
  const text = line.includes('`') ? line.replace(CODE_SPAN, ' ') : line;
  REFERENCE.lastIndex = 0;
  for (let match = REFERENCE.exec(text); match !== null; match = REFERENCE.exec(text)) into.push({ id: match[1]!, line: number });
}

/** The entry's text, heading included, without trailing blank lines. */
export function entryText(doc: ParsedDoc, entry: Entry): string {
  let end = entry.endLine;
  while (end > entry.line && (doc.lines[end - 1] ?? '').trim() === '') end--;
  return doc.lines.slice(entry.line - 1, end).join('\n');
}

/** A field by name (case-insensitive; `Trigger` matches `Trigger for change`). */
export function findField(entry: Entry, name: string, options: { prefix?: boolean } = {}): Field | undefined {
  const wanted = name.toLowerCase();
  return entry.fields.find((field) => {
    const have = field.name.toLowerCase();
    return have === wanted || (options.prefix === true && have.startsWith(`${wanted} `));
  });
}

/** True when a field carries content on its line or below it. */
export const fieldHasContent = (field: Field): boolean => field.value.replace(/[*_`\s]/g, '') !== '' || field.continuation.length > 0;
