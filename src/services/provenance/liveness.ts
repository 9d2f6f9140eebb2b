/**
 * Liveness: does the code an engram is about still exist? Answered from the tape index only — lineage edges and
 * tombstones (../shared/seeds/000) — never from whether the engram's claim is still true (validity, which only a
 * person decides: ../shared/seeds/002 "Liveness vs Validity"). An engram whose every span is dead is flagged
 * `code-gone` and leaves injection until a person keeps it (`engram approve`) or retires it (`engram reject`).
 * @module
 */
import type { Database, Store } from '../../core/index.js';
import { audited, engramsWithSpans, syncJournal, type Actor, type SourceSpan } from '../governance/index.js';
import { indexPathForProfile, listTapes, readTape, refreshIndex, tapeLocation, type TapeCatalog } from '../tape/index.js';

/** Share of an edit's fingerprints that deletions must have removed for its code to count as dead. */
export const DEAD_SHARE = 0.5;
/** Lineage steps followed forward from an engram's span. */
const MAX_DEPTH = 50;

/** The deletion that killed a span: its tape, event and when. */
export interface Death {
  tape_id: string;
  offset: number;
  file: string;
  time: string | null;
  /** `deleted` (a tombstone), or `replaced` (unrelated code written over it: a location-only edge). */
  how: 'deleted' | 'replaced';
}

/** What the index says about one span. */
export interface SpanLiveness {
  span: SourceSpan;
  state: 'alive' | 'dead' | 'unknown';
  deaths: Death[];
}

interface Node {
  tape: number;
  offset: number;
}

const hashes = (db: Database, table: 'span_fingerprints' | 'tombstone_fingerprints', node: Node): Set<bigint> =>
  new Set(db.prepare(`SELECT hash FROM ${table} WHERE tape = ? AND offset = ?`).pluck().safeIntegers(true).all(node.tape, node.offset) as bigint[]);

/**
 * Later deletions (tombstones after `node` whose text was not put back) that removed the node's code: the share of its
 * fingerprints they hold, and which they were. A deletion need not be linked to the node by an edge: lineage links a
 * deletion only to the edits that wrote most of it, and a small edit inside the code is covered just the same.
 */
function removedBy(db: Database, node: Node, mine: ReadonlySet<bigint>): { share: number; deaths: Death[] } {
  if (mine.size === 0) return { share: 0, deaths: [] };
  const rows = db
    .prepare(
      `SELECT f.tape, f.offset, f.hash, t.file, t.time, p.tape_id FROM span_fingerprints s
         JOIN tombstone_fingerprints f ON f.hash = s.hash
         JOIN tombstones t ON t.tape = f.tape AND t.offset = f.offset
         JOIN tapes p ON p.id = f.tape
        WHERE s.tape = ? AND s.offset = ? AND (f.tape > ? OR (f.tape = ? AND f.offset > ?))
          AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.from_tape = f.tape AND e.from_offset = f.offset AND (e.location_only = 0 OR e.agent_link = 1))`,
    )
    .safeIntegers(true)
    .all(node.tape, node.offset, node.tape, node.tape, node.offset) as Array<{ tape: bigint; offset: bigint; hash: bigint; file: string; time: string | null; tape_id: string }>;
  const removed = new Set<bigint>();
  const deaths = new Map<string, Death>();
  for (const row of rows) {
    removed.add(row.hash);
    deaths.set(`${row.tape}:${row.offset}`, { tape_id: row.tape_id, offset: Number(row.offset), file: row.file, time: row.time, how: 'deleted' });
  }
  return { share: removed.size / mine.size, deaths: [...deaths.values()] };
}

/**
 * Follows a span forward through lineage. Its code is dead when later deletions removed most of it, or unrelated code
 * was written over it — unless an edit that carried it on (a strong lineage edge) is itself alive.
 */
function follow(db: Database, node: Node, depth: number, seen: Set<string>, deaths: Death[]): boolean {
  const key = `${node.tape}:${node.offset}`;
  if (seen.has(key) || depth > MAX_DEPTH) return true; // A cycle or a very long chain: do not call it dead.
  seen.add(key);
  const successors = db
    .prepare(
      `SELECT e.to_tape AS tape, e.to_offset AS offset, e.location_only, e.agent_link,
              (SELECT 1 FROM tombstones t WHERE t.tape = e.to_tape AND t.offset = e.to_offset) AS tombstone
         FROM edges e WHERE e.from_tape = ? AND e.from_offset = ?`,
    )
    .all(node.tape, node.offset) as Array<Node & { location_only: number; agent_link: number; tombstone: number | null }>;
  let replaced = false;
  for (const next of successors) {
    if (next.tombstone) continue; // Deletions are counted by what they removed, below.
    if (next.location_only && !next.agent_link) {
      replaced = true;
      const row = db.prepare('SELECT v.file, v.time, p.tape_id FROM events v JOIN tapes p ON p.id = v.tape WHERE v.tape = ? AND v.offset = ?').get(next.tape, next.offset) as
        | { file: string; time: string | null; tape_id: string }
        | undefined;
      if (row) deaths.push({ tape_id: row.tape_id, offset: next.offset, file: row.file, time: row.time, how: 'replaced' });
      continue;
    }
    if (follow(db, next, depth + 1, seen, deaths)) return true;
  }
  if (replaced) return false;
  const removed = removedBy(db, node, hashes(db, 'span_fingerprints', node));
  if (removed.share >= DEAD_SHARE) {
    deaths.push(...removed.deaths);
    return false;
  }
  return true;
}

const uniqueDeaths = (deaths: readonly Death[]): Death[] => [...new Map(deaths.map((death) => [`${death.tape_id}:${death.offset}`, death])).values()];

/** The liveness of spans in one index. */
export function spanLiveness(db: Database, spans: readonly SourceSpan[]): SpanLiveness[] {
  return spans.map((span) => {
    const tape = db.prepare('SELECT id FROM tapes WHERE tape_id = ?').get(span.tape_id) as { id: number } | undefined;
    if (!tape) return { span, state: 'unknown', deaths: [] };
    const deaths: Death[] = [];
    const alive = follow(db, { tape: tape.id, offset: span.offset }, 0, new Set(), deaths);
    return { span, state: alive ? 'alive' : 'dead', deaths: alive ? [] : uniqueDeaths(deaths) };
  });
}

/** What a liveness check found and changed. */
export interface LivenessReport {
  /** Engrams with code spans that were checked. */
  checked: number;
  /** Engrams flagged code-gone now (they leave injection), with the deletions that killed their code. */
  gone: Array<{ id: number; deaths: Death[] }>;
  /** Engrams whose code exists again (flag cleared). */
  revived: number[];
  /** Engrams whose tapes are not in any index here (another machine's folder, tapes removed). */
  unknown: number[];
  indexes: Array<{ root: string; refresh: string }>;
  undo_token: string | null;
}

/**
 * Checks every engram that names code (its sources' spans) against the tape index of the folder it was learned in —
 * or only those of `cwd`'s repository — and flags those whose code died `gone` (and clears a flag whose code came
 * back). One audited operation by `system`.
 */
export function checkLiveness(store: Store, options: { home: string; cwd?: string; now?: () => Date; actor?: Actor }): LivenessReport {
  const at = (options.now ?? (() => new Date()))().toISOString();
  const report: LivenessReport = { checked: 0, gone: [], revived: [], unknown: [], indexes: [], undo_token: null };
  const only = options.cwd ? tapeLocation(options.cwd, options.home).root : null;
  const byRoot = new Map<string, { cwd: string; engrams: Map<number, SourceSpan[]> }>();
  for (const item of engramsWithSpans(store)) {
    if (!item.cwd) {
      report.unknown.push(item.engram_id);
      continue;
    }
    const root = tapeLocation(item.cwd, options.home).root;
    if (only !== null && root !== only) continue;
    const group = byRoot.get(root) ?? { cwd: item.cwd, engrams: new Map<number, SourceSpan[]>() };
    group.engrams.set(item.engram_id, [...(group.engrams.get(item.engram_id) ?? []), ...item.spans]);
    byRoot.set(root, group);
  }
  const verdicts = new Map<number, { state: 'alive' | 'gone' | 'unknown'; deaths: Death[] }>();
  for (const [root, group] of byRoot) {
    const location = tapeLocation(group.cwd, options.home);
    const catalog: TapeCatalog = { list: () => listTapes(location.tapes_dir), read: (path) => readTape(path) };
    let opened: ReturnType<typeof refreshIndex>;
    try {
      opened = refreshIndex(indexPathForProfile(location.cache_dir), catalog);
    } catch {
      for (const id of group.engrams.keys()) report.unknown.push(id);
      continue;
    }
    report.indexes.push({ root, refresh: opened.report.action });
    try {
      for (const [id, spans] of group.engrams) {
        const states = spanLiveness(opened.index.db, spans);
        report.checked++;
        if (states.every((state) => state.state === 'unknown')) {
          verdicts.set(id, { state: 'unknown', deaths: [] });
          report.unknown.push(id);
        } else if (states.filter((state) => state.state !== 'unknown').every((state) => state.state === 'dead')) {
          verdicts.set(id, { state: 'gone', deaths: uniqueDeaths(states.flatMap((state) => state.deaths)) });
        } else {
          verdicts.set(id, { state: 'alive', deaths: [] });
        }
      }
    } finally {
      opened.index.close();
    }
  }
  const { result, entry } = audited(
    store,
    (gone: Array<{ id: number; deaths: Death[] }>) => ({
      actor: options.actor ?? { by: 'system', via: 'api' },
      op: 'liveness',
      // The tapes that recorded each death, so `engram history` and `engram why` can name them.
      ...(gone.length ? { detail: { gone } } : {}),
    }),
    (changes) => {
      const gone: Array<{ id: number; deaths: Death[] }> = [];
      for (const [id, verdict] of verdicts) {
        const engram = store.engrams.get(id);
        if (!engram || verdict.state === 'unknown') continue;
        if (verdict.state === 'gone' && (engram.liveness === 'unknown' || engram.liveness === 'alive')) {
          changes.engram(id);
          store.engrams.update(id, { liveness: 'gone', liveness_at: at });
          gone.push({ id, deaths: verdict.deaths });
        } else if (verdict.state === 'alive' && engram.liveness !== 'alive') {
          changes.engram(id);
          store.engrams.update(id, { liveness: 'alive', liveness_at: at });
          if (engram.liveness === 'gone' || engram.liveness === 'kept') report.revived.push(id);
        }
      }
      return gone;
    },
    at,
  );
  report.gone = result;
  if (entry) syncJournal(store);
  report.undo_token = entry?.token ?? null;
  return report;
}
