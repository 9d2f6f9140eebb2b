import { basename } from 'node:path';
import { entryText, findField, type Entry, type ParsedDoc } from './parse.js';

/**
 * Lossless compaction (seed 002, "Lossless Compaction (Graveyard)"): a DEAD/EVOLVED concept or a refuted claim moves
 * whole to its append-only graveyard and leaves a one-line stub with an arrow; a misclassification is fixed by
 * appending a CORRECTION block, and the latest block for an id is authoritative. Timeline compaction collapses old
 * phases to one paragraph that keeps every id they mention. Text in, text out: callers write the files.
 */

const STATUS_WORDS = ['ACTIVE', 'DEAD', 'EVOLVED', 'BELIEVED', 'CONTESTED', 'UNVERIFIED', 'REFUTED', 'CURRENT', 'SUPERSEDED', 'MERGED'];
const STATUS_WORD = new RegExp(`\\b(${STATUS_WORDS.join('|')})\\b`, 'gi');

/** The status a correction block sets: the last status word of its `Reclassified:` line (or of its first line). */
export function correctionStatus(doc: ParsedDoc, block: Entry): string | null {
  const reclassified = findField(block, 'Reclassified');
  const text = reclassified
    ? [reclassified.value, ...reclassified.continuation].join(' ')
    : (doc.lines.slice(block.line, block.endLine).find((line) => /reclassified/i.test(line)) ?? '');
  const words = [...text.matchAll(STATUS_WORD)].map((match) => match[1]!.toUpperCase());
  return words.at(-1) ?? null;
}

/** For every id in a graveyard, the status its latest block gives (entry status, or the last correction's). */
export function authoritativeStatus(doc: ParsedDoc): Map<string, string> {
  const latest = new Map<string, string>();
  for (const entry of doc.entries) {
    if (entry.correction === null) {
      if (!latest.has(entry.id)) latest.set(entry.id, entry.statusKey);
    } else {
      const status = correctionStatus(doc, entry);
      if (status) latest.set(entry.id, status);
    }
  }
  return latest;
}

/** The graveyard's blocks for one id, oldest first: the entry and its corrections. */
export function graveyardBlocks(doc: ParsedDoc, id: string): Array<{ entry: Entry; text: string }> {
  return doc.entries.filter((entry) => entry.id === id).map((entry) => ({ entry, text: entryText(doc, entry) }));
}

/** Appends a block to a graveyard's text, separated by one blank line, ending in a newline. */
export function appendBlock(graveyard: string, block: string): string {
  const body = graveyard.replace(/\s+$/, '');
  return `${body === '' ? '' : `${body}\n\n`}${block.replace(/\s+$/, '')}\n`;
}

/** The one-line stub a compacted entry leaves: `## C042: name (DEAD) → concept_graveyard.md#C042`. */
export const stubLine = (entry: Pick<Entry, 'id' | 'name' | 'status'>, graveyardFile: string): string =>
  `## ${entry.id}: ${entry.name} (${entry.status}) → ${basename(graveyardFile)}#${entry.id}`;

/**
 * Moves one entry of a living doc to its graveyard: appends the full entry (with its heading, status unchanged)
 * unless the graveyard already has a block for the id, and replaces it in the living doc by its stub.
 */
export function moveToGraveyard(
  living: ParsedDoc,
  graveyard: ParsedDoc,
  id: string,
  graveyardFile: string,
): { living: string; graveyard: string } {
  const entry = living.entries.find((candidate) => candidate.id === id && candidate.correction === null);
  if (!entry) throw new Error(`${id} is not in ${living.file}`);
  const full = entryText(living, entry);
  const heading = full.split('\n')[0]!.replace(/\s*(?:→|->).*$/, '');
  const block = [heading, ...full.split('\n').slice(1)].join('\n');
  const already = graveyard.entries.some((candidate) => candidate.id === id && candidate.correction === null);
  const graveyardText = already ? graveyard.lines.join('\n') : appendBlock(graveyard.lines.join('\n'), block);
  let end = entry.endLine;
  while (end > entry.line && (living.lines[end - 1] ?? '').trim() === '') end--;
  const lines = [...living.lines.slice(0, entry.line - 1), stubLine(entry, graveyardFile), ...living.lines.slice(end)];
  return { living: lines.join('\n'), graveyard: graveyardText };
}

/** A correction block (seed: "## C012 CORRECTION (2026-02-20)"). */
export function correctionBlock(id: string, date: string, reclassified: string, note: string): string {
  return [`## ${id} CORRECTION (${date})`, `Reclassified: ${reclassified}`, note.trim()].filter(Boolean).join('\n');
}

/** Ids mentioned in a piece of text, in order of first mention. */
function idsIn(text: string): string[] {
  return [...new Set([...text.matchAll(/\b([CEW]\d{3,})\b/g)].map((match) => match[1]!))];
}

/** The first paragraph of a phase body, cut at a sentence end near `max` characters. */
function firstParagraph(body: string[], max: number): string {
  const paragraph: string[] = [];
  for (const line of body) {
    if (line.trim() === '') {
      if (paragraph.length) break;
      continue;
    }
    paragraph.push(line.trim());
  }
  const text = paragraph.join(' ');
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const end = Math.max(cut.lastIndexOf('. '), cut.lastIndexOf('.) '));
  return end > max / 3 ? cut.slice(0, end + 1) : `${cut.trimEnd()}…`;
}

/** What timeline compaction did. */
export interface TimelineCompaction {
  text: string;
  /** Titles of the phases collapsed. */
  compacted: string[];
}

/**
 * Collapses phases that ended before `before` (YYYY-MM-DD) to a single paragraph: their first paragraph, cut near
 * 600 characters, plus an `IDs:` line with every id the phase mentioned, so nothing referenced is lost. The full
 * narrative stays in git history. Phases already one paragraph long are left as they are.
 */
export function compactTimeline(doc: ParsedDoc, before: string): TimelineCompaction {
  const lines = [...doc.lines];
  const compacted: string[] = [];
  // Work from the last phase up so earlier line numbers stay valid.
  for (const phase of [...doc.phases].reverse()) {
    if (phase.end === null || phase.end >= before) continue;
    const body = doc.lines.slice(phase.line, phase.endLine);
    const paragraphs = body.join('\n').split(/\n\s*\n/).filter((part) => part.trim() !== '');
    // Already one paragraph (with the IDs line compaction adds): nothing to collapse.
    if (paragraphs.length <= 1 || (paragraphs.length === 2 && paragraphs[1]!.trim().startsWith('IDs:'))) continue;
    const ids = idsIn(body.join('\n'));
    const summary = firstParagraph(body, 600);
    const replacement = ['', summary, ...(ids.length ? ['', `IDs: ${ids.join(', ')}`] : []), ''];
    lines.splice(phase.line, phase.endLine - phase.line, ...replacement);
    compacted.push(phase.title);
  }
  return { text: lines.join('\n'), compacted: compacted.reverse() };
}
