/**
 * Lineage at index time: which earlier span each edit changed, deleted or put back. A node is one edit event (its new
 * text, or for a deletion the tombstone of the old text). An edit's replaced text is traced to the edits that wrote
 * it by fingerprints (never by file and line), and the edge's confidence is the Jaccard similarity of the old and the
 * new text. Location alone never links: a function replaced by an unrelated one at the same lines gets only a
 * `location_only` edge, which explain does not follow unless asked (`all`).
 * @module
 */
import type { Database } from '../../core/index.js';
import { hashList, sql, type IndexedEvent, type SpanNode, type TapeRow } from './_index-sql.js';
import { isDeletion, PART } from './_tape-content.js';
import type { CodeEditEvent, LineRange, LoadedTape, SpanLinkEvent } from './events.js';
import { jaccard } from './fingerprint.js';
import { TAPE_TUNING } from './tuning.js';

/** Where a span was: its file and lines (null when the event did not say). */
interface Place {
  file: string;
  start: number | null;
  end: number | null;
}

interface Origin {
  node: SpanNode;
  /** The replaced text's fingerprints that this origin wrote. */
  covered: number;
}

const LIMITS = TAPE_TUNING.lineage;

/** Writes the edges and tombstones of one tape's edits and `span.link`s; returns how many. */
export function recordLineage(db: Database, row: TapeRow, tape: LoadedTape, events: IndexedEvent[]): { edges: number; tombstones: number } {
  let edges = 0;
  let tombstones = 0;
  for (const { offset, parts } of events) {
    const event = tape.events[offset]!;
    const self = { tape: row.id, offset };
    if (event.k === 'span.link') {
      edges += linkDeclared(db, self, event, events, tape);
      continue;
    }
    if (event.k !== 'code.edit') continue;
    const after = parts.get(PART.after) ?? new Set<bigint>();
    let before = parts.get(PART.before) ?? new Set<bigint>();
    // A whole-file overwrite or delete without the old text: the file's earlier spans are what it replaced.
    if (before.size === 0 && (event.op === 'overwrite' || event.op === 'delete')) before = fileSpans(db, self, event.file);
    const here: Place = { file: event.file, start: event.before_range?.[0] ?? null, end: event.before_range?.[1] ?? null };
    const origins = findOrigins(db, self, before);
    if (isDeletion(event)) {
      writeTombstone(db, self, event, before);
      tombstones++;
      for (const origin of origins) edges += insertEdge(db, origin.node, self, origin.covered / before.size, here, false);
      continue;
    }
    if (after.size === 0) continue;
    const similarity = jaccard(before, after);
    for (const origin of origins) edges += insertEdge(db, origin.node, self, similarity, here, false);
    const target: Place = { file: event.file, start: event.after_range?.[0] ?? null, end: event.after_range?.[1] ?? null };
    for (const tombstone of reinsertedTombstones(db, self, after)) {
      edges += insertEdge(db, tombstone.node, self, tombstone.similarity, target, false);
    }
  }
  updateCardinality(db, row.id);
  return { edges, tombstones };
}

/** True when `node` comes before `self` in indexing order. */
const EARLIER = '(tape < ? or (tape = ? and offset < ?))';
/** The same, for lookups by hash: `+` keeps SQLite on the hash key instead of scanning every earlier node by tape. */
const EARLIER_BY_HASH = (alias: string): string => `(+${alias}tape < ? or (+${alias}tape = ? and ${alias}offset < ?))`;

/**
 * The earlier edits whose new text the replaced text came from: newest first, each must add at least
 * `extraOriginShare` of the replaced fingerprints, and together they must cover `originContainment` of them.
 */
function findOrigins(db: Database, self: SpanNode, before: ReadonlySet<bigint>): Origin[] {
  if (before.size === 0) return [];
  const rows = sql(db, `select hash, tape, offset from span_fingerprints
      where hash in (select value from json_each(?)) and ${EARLIER_BY_HASH('')}`)
    .safeIntegers(true)
    .all(hashList(before), self.tape, self.tape, self.offset) as Array<{ hash: bigint; tape: bigint; offset: bigint }>;
  const byNode = new Map<string, { node: SpanNode; hashes: bigint[] }>();
  for (const row of rows) {
    const node = { tape: Number(row.tape), offset: Number(row.offset) };
    const key = `${node.tape}:${node.offset}`;
    const entry = byNode.get(key) ?? { node, hashes: [] };
    entry.hashes.push(row.hash);
    byNode.set(key, entry);
  }
  const newestFirst = [...byNode.values()].sort((a, b) => b.node.tape - a.node.tape || b.node.offset - a.node.offset);
  const uncovered = new Set(before);
  const origins: Origin[] = [];
  for (const candidate of newestFirst) {
    const gained = candidate.hashes.filter((hash) => uncovered.has(hash));
    if (gained.length < LIMITS.extraOriginShare * before.size) continue;
    for (const hash of gained) uncovered.delete(hash);
    origins.push({ node: candidate.node, covered: candidate.hashes.length });
  }
  return before.size - uncovered.size >= LIMITS.originContainment * before.size ? origins : [];
}

/** The new-text fingerprints of every earlier edit of `file`. */
function fileSpans(db: Database, self: SpanNode, file: string): Set<bigint> {
  const nodes = sql(db, `select tape, offset from events where file = ? and kind = 'code.edit' and ${EARLIER}`)
    .all(file, self.tape, self.tape, self.offset) as SpanNode[];
  const hashes = new Set<bigint>();
  for (const node of nodes) for (const hash of spanHashes(db, node)) hashes.add(hash);
  return hashes;
}

/** The fingerprints of a node: an edit's new text, else a tombstone's old text. */
export function spanHashes(db: Database, node: SpanNode): Set<bigint> {
  const written = sql(db, 'select hash from span_fingerprints where tape = ? and offset = ?')
    .pluck()
    .safeIntegers(true)
    .all(node.tape, node.offset) as bigint[];
  if (written.length > 0) return new Set(written);
  const deleted = sql(db, 'select hash from tombstone_fingerprints where tape = ? and offset = ?')
    .pluck()
    .safeIntegers(true)
    .all(node.tape, node.offset) as bigint[];
  return new Set(deleted);
}

function writeTombstone(db: Database, self: SpanNode, event: CodeEditEvent, hashes: ReadonlySet<bigint>): void {
  sql(db, `insert or ignore into tombstones (tape, offset, file, start_line, end_line, time, fingerprint_count)
    values (?, ?, ?, ?, ?, ?, ?)`).run(self.tape, self.offset, event.file, event.before_range?.[0] ?? null,
    event.before_range?.[1] ?? null, event.t, hashes.size);
  sql(db, 'insert or ignore into tombstone_fingerprints (hash, tape, offset) select value, ?, ? from json_each(?)')
    .run(self.tape, self.offset, hashList(hashes));
}

/** Earlier tombstones the new text puts back: Jaccard at or above `reinsertThreshold`. */
function reinsertedTombstones(db: Database, self: SpanNode, after: ReadonlySet<bigint>): Array<{ node: SpanNode; similarity: number }> {
  const rows = sql(db, `select f.tape, f.offset, s.fingerprint_count as size, count(*) as shared
      from tombstone_fingerprints f join tombstones s on s.tape = f.tape and s.offset = f.offset
      where f.hash in (select value from json_each(?)) and ${EARLIER_BY_HASH('f.')}
      group by f.tape, f.offset`).all(hashList(after), self.tape, self.tape, self.offset) as Array<SpanNode & { size: number; shared: number }>;
  return rows
    .map((row) => ({ node: { tape: row.tape, offset: row.offset }, similarity: row.shared / (after.size + row.size - row.shared) }))
    .filter((row) => row.similarity >= LIMITS.reinsertThreshold);
}

/** `span.link`: the agent says the span at `from` became the span at `to`; always followed, whatever the similarity. */
function linkDeclared(db: Database, self: SpanNode, event: SpanLinkEvent, events: IndexedEvent[], tape: LoadedTape): number {
  const from = resolveSpan(db, self, event.from_file, event.from_range);
  const to = resolveSpan(db, self, event.to_file, event.to_range) ?? self;
  if (!from || (from.tape === to.tape && from.offset === to.offset)) return 0;
  const hashesOf = (node: SpanNode): Set<bigint> => {
    const local = node.tape === self.tape ? events.find((e) => e.offset === node.offset) : undefined;
    const kind = local ? tape.events[node.offset]!.k : null;
    if (local && kind === 'code.read') return local.parts.get(PART.text) ?? new Set();
    return spanHashes(db, node);
  };
  const place: Place = { file: event.to_file, start: event.to_range[0], end: event.to_range[1] };
  return insertEdge(db, from, to, jaccard(hashesOf(from), hashesOf(to)), place, true);
}

/**
 * The node an agent-declared range names: the nearest edit or read of that file whose lines overlap it — in this
 * tape first (the latest before the link, else the first after it), then the latest of earlier tapes.
 */
function resolveSpan(db: Database, self: SpanNode, file: string, range: LineRange): SpanNode | null {
  const rows = sql(db, `select tape, offset, kind, start_line, end_line, before_start, before_end from events
      where file = ? and kind in ('code.edit', 'code.read') and tape <= ? order by tape desc, offset desc limit ?`)
    .all(file, self.tape, LIMITS.spanLinkCandidates) as Array<SpanNode & { kind: string; start_line: number | null; end_line: number | null; before_start: number | null; before_end: number | null }>;
  const overlaps = (start: number | null, end: number | null): boolean =>
    start === null || end === null || (start <= range[1] && end >= range[0]);
  const matching = rows.filter((row) => overlaps(row.start_line, row.end_line) || (row.before_start !== null && overlaps(row.before_start, row.before_end)));
  const before = matching.find((row) => row.tape < self.tape || row.offset < self.offset);
  const sameTapeBefore = before && before.tape === self.tape ? before : undefined;
  const sameTapeAfter = matching.filter((row) => row.tape === self.tape && row.offset > self.offset).at(-1);
  const chosen = sameTapeBefore ?? sameTapeAfter ?? before;
  return chosen ? { tape: chosen.tape, offset: chosen.offset } : null;
}

function locationDelta(db: Database, from: SpanNode, to: Place): 'same' | 'adjacent' | 'moved' | 'absent' {
  const origin = sql(db, 'select file, start_line, end_line from events where tape = ? and offset = ?').get(from.tape, from.offset) as
    | { file: string | null; start_line: number | null; end_line: number | null }
    | undefined;
  const tombstone = origin?.start_line == null
    ? (sql(db, 'select file, start_line, end_line from tombstones where tape = ? and offset = ?').get(from.tape, from.offset) as typeof origin)
    : undefined;
  const place = tombstone ?? origin;
  if (!place?.file) return 'absent';
  if (place.file !== to.file) return 'moved';
  if (place.start_line == null || place.end_line == null || to.start === null || to.end === null) return 'absent';
  if (place.start_line <= to.end && place.end_line >= to.start) return 'same';
  const gap = Math.max(place.start_line - to.end, to.start - place.end_line);
  return gap <= LIMITS.adjacentLines ? 'adjacent' : 'moved';
}

function insertEdge(db: Database, from: SpanNode, to: SpanNode, confidence: number, place: Place, agentLink: boolean): number {
  const rounded = Math.round(confidence * 10_000) / 10_000;
  return sql(db, `insert or ignore into edges (to_tape, to_offset, from_tape, from_offset, agent_link, confidence, location_delta,
      cardinality, location_only) values (?, ?, ?, ?, ?, ?, ?, '1:1', ?)`).run(to.tape, to.offset, from.tape, from.offset,
    agentLink ? 1 : 0, rounded, locationDelta(db, from, place), !agentLink && rounded < LIMITS.linkThreshold ? 1 : 0).changes;
}

/** Sets `N:1` (a span made from several) and `1:N` (a span split into several) on this tape's edges and their parents'. */
function updateCardinality(db: Database, tape: number): void {
  sql(db, `update edges set cardinality = case
      when (select count(*) from edges i where i.to_tape = edges.to_tape and i.to_offset = edges.to_offset and i.agent_link = 0) > 1 then 'N:1'
      when (select count(*) from edges o where o.from_tape = edges.from_tape and o.from_offset = edges.from_offset and o.agent_link = 0) > 1 then '1:N'
      else '1:1' end
    where agent_link = 0 and (to_tape = ? or (from_tape, from_offset) in (select from_tape, from_offset from edges where to_tape = ?))`).run(tape, tape);
}
