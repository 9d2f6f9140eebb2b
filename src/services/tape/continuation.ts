/**
 * Conversation continuation: a session compacted, resumed or recorded again goes on in a later tape. The later tape's
 * head repeats content of the earlier tape's tail (a compaction summary, restated context), so fingerprints of the
 * messages at the two boundaries are compared, with each harness's scaffolding removed first. Tool output is left out
 * on purpose: two unrelated sessions that read the same file would otherwise look like one conversation.
 * @module
 */
import type { Database } from '../../core/index.js';
import { hashList, sql, type IndexedEvent, type TapeRow } from './_index-sql.js';
import type { LoadedTape } from './events.js';
import { fingerprintSet } from './fingerprint.js';
import { TAPE_TUNING, type FingerprintParams } from './tuning.js';

const TUNING = TAPE_TUNING.continuation;

/**
 * Scaffolding the harnesses and Engram inject into every session: Claude Code's `<system-reminder>` blocks (which
 * also carry CLAUDE.md), Codex's environment, permission, skill and AGENTS.md instructions, and Engram's own block.
 */
export const BOILERPLATE_BLOCKS: readonly RegExp[] = [
  /<(system-reminder|environment_context|user_instructions|permissions instructions|skills_instructions|developer_instructions|INSTRUCTIONS|tools)>[\s\S]*?<\/\1>/g,
  /\[ENGRAM\][\s\S]*?\[\/ENGRAM\]/g,
  // Codex's AGENTS.md item is the heading and everything after it.
  /^\s*# AGENTS\.md instructions for [\s\S]*$/g,
  /^\s*Contents of \S*(CLAUDE|AGENTS)\.md[\s\S]*$/gm,
];

/** Text without injected scaffolding: what the person and the agent actually said. */
export function stripBoilerplate(text: string): string {
  return BOILERPLATE_BLOCKS.reduce((current, pattern) => current.replace(pattern, ' '), text);
}

interface Boundary {
  head: Set<bigint>;
  tail: Set<bigint>;
  compaction: boolean;
  previousTape: string | null;
}

function boundaryOf(tape: LoadedTape, events: IndexedEvent[], params: FingerprintParams): Boundary {
  const conversational = events.filter((event) => event.content.conversational);
  const hashesOf = (list: IndexedEvent[]): Set<bigint> => {
    const hashes = new Set<bigint>();
    for (const event of list) for (const { text } of event.content.texts) for (const h of fingerprintSet(stripBoilerplate(text), params)) hashes.add(h);
    return hashes;
  };
  const head = conversational.slice(0, TUNING.headEvents);
  const headEnd = head.at(-1)?.offset ?? -1;
  const metas = tape.events.filter((event) => event.k === 'meta');
  return {
    head: hashesOf(head),
    tail: hashesOf(conversational.slice(-TUNING.tailEvents)),
    compaction: tape.events.slice(0, headEnd + 1).some((event) => event.k === 'meta' && event.label === 'compaction'),
    previousTape: metas.map((m) => (m.k === 'meta' ? m.previous_tape : null)).find((id) => !!id) ?? null,
  };
}

interface Candidate {
  id: number;
  tape_id: string;
  first_ms: number | null;
  head_compaction: number;
  hashes: bigint[];
}

/** Stores this tape's boundary fingerprints and continuation facts (declared previous tape, compaction marker). */
export function recordBoundary(db: Database, row: TapeRow, tape: LoadedTape, events: IndexedEvent[], params: FingerprintParams): void {
  const boundary = boundaryOf(tape, events, params);
  sql(db, 'update tapes set previous_tape = ?, head_compaction = ? where id = ?').run(boundary.previousTape, boundary.compaction ? 1 : 0, row.id);
  const insert = sql(db, 'insert or ignore into boundary_fingerprints (tape, region, hash) select ?, ?, value from json_each(?)');
  insert.run(row.id, 0, hashList(boundary.head));
  insert.run(row.id, 1, hashList(boundary.tail));
}

/**
 * Stores the continuation edges of one tape to the earlier tapes it continues (its head against their tails).
 * Only backwards: tapes are indexed oldest first (a late, older tape makes refresh rebuild), and a rebuild runs this
 * for every tape once all are in, so each pair is scored once, from its later tape. Returns how many edges were written.
 */
export function detectContinuations(db: Database, row: TapeRow): number {
  const facts = sql(db, 'select previous_tape, head_compaction from tapes where id = ?').get(row.id) as { previous_tape: string | null; head_compaction: number };
  let stored = 0;
  const declared = sql(db, 'select id from tapes where tape_id = ? and present = 1').pluck();
  const previous = facts.previous_tape ? (declared.get(facts.previous_tape) as number | undefined) : undefined;
  if (previous !== undefined) stored += storeEdge(db, previous, row.id, 1, 0, 'previous_tape');
  const head = new Set(sql(db, 'select hash from boundary_fingerprints where tape = ? and region = 0').pluck().safeIntegers(true).all(row.id) as bigint[]);
  const order = (c: { first_ms: number | null; tape_id: string }): [number, string] => [c.first_ms ?? Infinity, c.tape_id];
  const before = (a: [number, string], b: [number, string]): boolean => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
  const self = order(row);
  for (const candidate of candidates(db, row, head, 1).filter((c) => before(order(c), self))) {
    stored += scoreAndStore(db, candidate, candidate.id, row.id, head.size, regionSize(db, candidate.id, 1), facts.head_compaction === 1);
  }
  return stored;
}

/** Other tapes with fingerprints of `region` among `hashes` (an index holds one project's tapes, so all are candidates). */
function candidates(db: Database, row: TapeRow, hashes: ReadonlySet<bigint>, region: number): Candidate[] {
  if (hashes.size === 0) return [];
  const rows = sql(db, `select t.id, t.tape_id, t.first_ms, t.head_compaction, b.hash from boundary_fingerprints b
      join tapes t on t.id = b.tape
      where b.region = ? and b.hash in (select value from json_each(?)) and b.tape != ? and t.present = 1`)
    .safeIntegers(true)
    .all(region, hashList(hashes), row.id) as Array<{ id: bigint; tape_id: string; first_ms: bigint | null; head_compaction: bigint; hash: bigint }>;
  const byTape = new Map<number, Candidate>();
  for (const r of rows) {
    const id = Number(r.id);
    const entry = byTape.get(id) ?? { id, tape_id: r.tape_id, first_ms: r.first_ms === null ? null : Number(r.first_ms), head_compaction: Number(r.head_compaction), hashes: [] };
    entry.hashes.push(r.hash);
    byTape.set(id, entry);
  }
  return [...byTape.values()].filter((candidate) => candidate.hashes.length >= TUNING.minShared);
}

function regionSize(db: Database, tape: number, region: number): number {
  return sql(db, 'select count(*) from boundary_fingerprints where tape = ? and region = ?').pluck().get(tape, region) as number;
}

/**
 * Shared fingerprints minus boilerplate (those in more than `boilerplateShare` of the project's tapes, once it has
 * `boilerplateMinTapes`), scored as an overlap coefficient: shared / the smaller of head and tail.
 */
function scoreAndStore(db: Database, candidate: Candidate, from: number, to: number, headSize: number, tailSize: number, compaction: boolean): number {
  const projectTapes = sql(db, 'select count(*) from tapes where present = 1').pluck().get() as number;
  let shared = candidate.hashes;
  if (projectTapes >= TUNING.boilerplateMinTapes) {
    const frequent = new Set(
      (sql(db, `select b.hash from boundary_fingerprints b join tapes t on t.id = b.tape
          where b.hash in (select value from json_each(?)) and t.present = 1
          group by b.hash having count(distinct b.tape) > ?`)
        .pluck()
        .safeIntegers(true)
        .all(hashList(shared), TUNING.boilerplateShare * projectTapes) as bigint[]).map(String),
    );
    shared = shared.filter((hash) => !frequent.has(String(hash)));
  }
  if (shared.length < TUNING.minShared) return 0;
  let confidence = Math.min(1, shared.length / Math.max(1, Math.min(headSize, tailSize)));
  if (compaction) confidence = 1 - (1 - confidence) * (1 - TUNING.compactionBoost);
  if (confidence < TUNING.storeThreshold) return 0;
  return storeEdge(db, from, to, confidence, shared.length, compaction ? 'compaction' : 'overlap');
}

function storeEdge(db: Database, from: number, to: number, confidence: number, shared: number, signal: string): number {
  return sql(db, `insert into continuations (to_tape, from_tape, confidence, shared, signal) values (?, ?, ?, ?, ?)
      on conflict (to_tape, from_tape) do update set confidence = max(confidence, excluded.confidence),
        signal = case when excluded.confidence > confidence then excluded.signal else signal end, shared = max(shared, excluded.shared)`)
    .run(to, from, Math.round(confidence * 10_000) / 10_000, shared, signal).changes;
}
