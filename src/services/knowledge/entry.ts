import { resolve } from 'node:path';
import { EngramError } from '../../core/index.js';
import { explainInFolder, type ExplainResponse } from '../tape/index.js';
import { loadKnowledgeConfig, type KnowledgeConfig } from './config.js';
import { readDocSet, type DocSet } from './docset.js';
import { authoritativeStatus, graveyardBlocks } from './graveyard.js';
import { repositoryRoot } from './init.js';
import { entryText, isStableId, type DocRole, type Field } from './parse.js';
import { checkPointers, lineCount, type CheckedPointer } from './pointers.js';

/**
 * Reading one entry by id — for `engram docs show`, the MCP server, and the briefing's "Full entries" pointer — and
 * following a concept's `Code:` pointers into `engram explain`.
 */

/** One doc entry, with its graveyard history. */
export interface DocEntry {
  id: string;
  kind: 'concept' | 'claim' | 'workflow';
  name: string;
  /** Status as the living doc (or, for a graveyard-only id, the graveyard) writes it. */
  status: string;
  /** The status the latest graveyard block gives, when there is one (seed: the latest block is authoritative). */
  authoritative_status: string;
  modifier: string | null;
  /** `full` entry, one-line `stub`, or only in a `graveyard`. */
  form: 'full' | 'stub' | 'graveyard';
  /** The doc and line of the living entry (or of the first graveyard block). */
  file: string;
  line: number;
  /** The entry's markdown, heading included. */
  text: string;
  fields: Array<{ name: string; value: string }>;
  /** The stub's arrow target. */
  points_to: string | null;
  /** Graveyard blocks for the id, oldest first: the full entry and its corrections. */
  graveyard: Array<{ file: string; line: number; correction: string | null; text: string }>;
}

const KIND = { C: 'concept', E: 'claim', W: 'workflow' } as const;
const HOME: Record<'C' | 'E' | 'W', { living: DocRole; graveyard: DocRole | null }> = {
  C: { living: 'concepts', graveyard: 'conceptGraveyard' },
  E: { living: 'epistemic', graveyard: 'epistemicGraveyard' },
  W: { living: 'workflows', graveyard: null },
};

const fieldValue = (field: Field): string => [field.value, ...field.continuation].join('\n').trim();

/** Reads an entry from a doc set; throws NOT_FOUND when no doc defines the id. */
export function entryFromSet(set: DocSet, id: string): DocEntry {
  const wanted = id.trim().toUpperCase();
  if (!isStableId(wanted)) throw new EngramError('INVALID_INPUT', `'${id}' is not a stable id (C###, E### or W###)`);
  const home = HOME[wanted[0] as 'C' | 'E' | 'W'];
  const living = set.docs[home.living];
  const graveyard = home.graveyard ? set.docs[home.graveyard] : undefined;
  const entry = living?.entries.find((candidate) => candidate.id === wanted && candidate.correction === null);
  const blocks = graveyard ? graveyardBlocks(graveyard, wanted) : [];
  const history = blocks.map((block) => ({ file: graveyard!.file, line: block.entry.line, correction: block.entry.correction, text: block.text }));
  const latest = graveyard ? authoritativeStatus(graveyard).get(wanted) : undefined;
  if (entry && living) {
    const stub = ['DEAD', 'EVOLVED', 'REFUTED', 'SUPERSEDED', 'MERGED'].includes(entry.statusKey);
    return {
      id: wanted,
      kind: KIND[entry.prefix],
      name: entry.name,
      status: entry.status,
      authoritative_status: latest ?? entry.statusKey,
      modifier: entry.modifier,
      form: stub ? 'stub' : 'full',
      file: living.file,
      line: entry.line,
      text: entryText(living, entry),
      fields: entry.fields.map((field) => ({ name: field.name, value: fieldValue(field) })),
      points_to: entry.arrow,
      graveyard: history,
    };
  }
  const first = blocks.find((block) => block.entry.correction === null);
  if (first && graveyard) {
    return {
      id: wanted,
      kind: KIND[first.entry.prefix],
      name: first.entry.name,
      status: first.entry.status,
      authoritative_status: latest ?? first.entry.statusKey,
      modifier: first.entry.modifier,
      form: 'graveyard',
      file: graveyard.file,
      line: first.entry.line,
      text: first.text,
      fields: first.entry.fields.map((field) => ({ name: field.name, value: fieldValue(field) })),
      points_to: null,
      graveyard: history,
    };
  }
  throw new EngramError('NOT_FOUND', `no entry ${wanted} in ${living?.file ?? home.living}${graveyard ? ` or ${graveyard.file}` : ''}`);
}

/**
 * Reads one knowledge-doc entry by id (C###, E###, W###) for the repository that contains `cwd`: the living entry
 * (full or stub) and every graveyard block for it, with the authoritative status. The function the MCP server's
 * "doc entry" tool/resource calls. Throws NOT_FOUND (no docs here, or no such id) or INVALID_INPUT (not an id).
 */
export function readDocEntry(options: { cwd: string }, id: string): DocEntry {
  const root = repositoryRoot(options.cwd);
  const config = loadKnowledgeConfig(root);
  return entryFromSet(readDocSet(config, root), id);
}

/** A concept's pointers, checked, each followed into explain. */
export interface ConceptExplanation {
  id: string;
  name: string;
  pointers: Array<CheckedPointer & { explained: Array<{ file: string; start: number; end: number; response: Pick<ExplainResponse, 'total' | 'results'> }> }>;
}

/**
 * Follows a concept's `Code:` pointers into `engram explain`: each pointer found in the repository becomes a span
 * (a symbol: 30 lines from where it occurs; a file: its named lines, or its first 200) and explain lists the agent
 * sessions that wrote, edited or discussed it.
 */
export function explainConcept(options: { cwd: string; home: string; config?: KnowledgeConfig }, id: string, explainOptions: { brief?: boolean; limit?: number } = {}): ConceptExplanation {
  const root = repositoryRoot(options.cwd);
  const config = options.config ?? loadKnowledgeConfig(root);
  const set = readDocSet(config, root);
  const entry = entryFromSet(set, id);
  if (entry.kind !== 'concept') throw new EngramError('INVALID_INPUT', `${entry.id} is a ${entry.kind}; only concepts have Code: pointers`);
  if (entry.form !== 'full' || !set.docs.concepts) throw new EngramError('INVALID_INPUT', `${entry.id} is ${entry.status}; its code is gone (see its graveyard entry)`);
  const liveness = checkPointers(root, config, set.docs.concepts).find((concept) => concept.id === entry.id);
  const pointers = (liveness?.pointers ?? []).map((pointer) => {
    const explained = pointer.locations.slice(0, 3).flatMap((location) => {
      const lines = lineCount(resolve(root, location.file));
      if (lines === 0) return [];
      const start = Math.min(lines, pointer.kind === 'file' ? (pointer.lines?.start ?? 1) : location.line);
      const end = Math.min(lines, pointer.kind === 'file' ? (pointer.lines?.end ?? Math.min(lines, start + 199)) : start + 29);
      const response = explainInFolder({ cwd: root, home: options.home }, { file: location.file, start, end }, { brief: explainOptions.brief ?? true, limit: explainOptions.limit ?? 5 });
      return [{ file: location.file, start, end, response: { total: response.total, results: response.results } }];
    });
    return { ...pointer, explained };
  });
  return { id: entry.id, name: entry.name, pointers };
}
