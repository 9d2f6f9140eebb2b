/**
 * `explain`: given a span of code, the tapes that touched it and where. Anchor the span → direct evidence (events
 * whose text holds enough of an anchor's fingerprints) → lineage walk back from the edits found → continuation edges
 * to earlier tapes of the same conversation → tapes ordered by touch count, then most recent touch, each with the
 * event windows around its touches. The caller reads the file; raw facts only, no scoring by meaning.
 * @module
 */
import { EngramError, type Database } from '../../core/index.js';
import { hashList, nodeKey, sql, type SpanNode } from './_index-sql.js';
import type { LoadedTape, TapeEvent } from './events.js';
import type { EvidenceIndex } from './evidence-index.js';
import { anchorsForText } from './fingerprint.js';
import { walkLineage, type LineageEdge, type WalkTruncation } from './lineage-walk.js';
import { TAPE_TUNING } from './tuning.js';

/** The span to explain; `fileText` (the whole file) is needed only to widen it with `expandUntil`. */
export interface ExplainSpan {
  file: string;
  start: number;
  end: number;
  text: string;
  fileText?: string;
}

/** Options for {@link explainSpan}; window sizes are in events (one JSONL line each). */
export interface ExplainOptions {
  /** @default 30 */
  before?: number;
  /** @default 10 */
  after?: number;
  /** Touch metadata only, no windows. @default false */
  brief?: boolean;
  /** Lineage and continuation edges below this are not followed (agent links always are). @default 0.5 */
  minConfidence?: number;
  /** Follow low-confidence and `location_only` edges too. @default false */
  all?: boolean;
  /** Widen the span until at most this many tapes match (needs `fileText`). */
  expandUntil?: number;
  /** @default 10 */
  limit?: number;
  /** Fills each window's events from the tape; without it windows carry offsets only. */
  loadTape?: (tapeId: string) => LoadedTape | null;
}

/** One event of a tape that touched the span (directly, or an ancestor of it). */
export interface ExplainTouch {
  offset: number;
  kind: string;
  file: string | null;
  time: string | null;
  /** Which text matched: an edit's old or new text, or any other event's text. */
  part: 'text' | 'before' | 'after';
  confidence: number;
  via: 'direct' | 'lineage';
  depth: number;
  /** For lineage touches: the edge that reached it. */
  edge?: LineageEdge;
}

/** A run of consecutive events around one or more touches: `[from, to]` inclusive offsets. */
export interface ExplainWindow {
  anchors: number[];
  from: number;
  to: number;
  events?: TapeEvent[];
}

/** One tape in the answer. */
export interface ExplainResult {
  tape_id: string;
  path: string;
  session: { agent: string; id: string };
  confidence: number;
  via: 'direct' | 'lineage' | 'continuation';
  depth: number;
  touches: ExplainTouch[];
  windows: ExplainWindow[];
  /** For tapes reached through a continuation edge: the later tape it continues into (a session boundary crossed). */
  continuation?: { continues_into: string; confidence: number; signal: string };
}

/** The answer of {@link explainSpan}. */
export interface ExplainResponse {
  span: { file: string; start: number; end: number };
  results: ExplainResult[];
  /** Tapes found before `limit` was applied. */
  total: number;
  truncated: WalkTruncation & { limit: boolean };
  /** Set when `expandUntil` was asked: whether the target was reached and in how many steps. */
  expanded?: { target: number; reached: boolean; steps: number };
}

const EXPLAIN = TAPE_TUNING.explain;

/** A result while it is being assembled: its row id and the time of its latest touch (for ordering). */
type Found = ExplainResult & { latest: number; id: number };
const PART_NAMES = ['text', 'before', 'after'] as const;

/** Explains a span; with `expandUntil`, widens it step by step until few enough tapes match. */
export function explainSpan(index: EvidenceIndex, span: ExplainSpan, options: ExplainOptions = {}): ExplainResponse {
  if (span.start < 1 || span.end < span.start) {
    throw new EngramError('INVALID_INPUT', `a span is 1-based start ≤ end, got ${span.start}-${span.end}`);
  }
  if (options.expandUntil === undefined) return explainOnce(index, span, options);
  if (span.fileText === undefined) throw new EngramError('INVALID_INPUT', 'expandUntil needs the whole file text (fileText) to widen the span');
  const lines = span.fileText.split('\n');
  let current = { ...span };
  let response = explainOnce(index, current, options);
  let steps = 0;
  while (response.total > options.expandUntil && steps < EXPLAIN.expandMaxSteps && (current.start > 1 || current.end < lines.length)) {
    steps++;
    const start = Math.max(1, current.start - EXPLAIN.expandStepLines);
    const end = Math.min(lines.length, current.end + EXPLAIN.expandStepLines);
    current = { ...current, start, end, text: lines.slice(start - 1, end).join('\n') };
    response = explainOnce(index, current, options);
  }
  return { ...response, expanded: { target: options.expandUntil, reached: response.total <= options.expandUntil, steps } };
}

interface TapeInfo {
  id: number;
  tape_id: string;
  path: string;
  harness: string;
  session_id: string;
  event_count: number;
  first_ms: number | null;
}

function explainOnce(index: EvidenceIndex, span: ExplainSpan, options: ExplainOptions): ExplainResponse {
  const { db } = index;
  const minConfidence = options.minConfidence ?? TAPE_TUNING.lineage.traverseThreshold;
  const touches = new Map<number, Map<string, ExplainTouch & { time_ms: number | null }>>();
  const addTouch = (node: SpanNode, touch: Omit<ExplainTouch, 'kind' | 'file' | 'time'>): void => {
    const event = sql(db, 'select kind, file, time, time_ms from events where tape = ? and offset = ?').get(node.tape, node.offset) as
      | { kind: string; file: string | null; time: string | null; time_ms: number | null }
      | undefined;
    if (!event) return;
    const perTape = touches.get(node.tape) ?? new Map();
    const key = `${node.offset}:${touch.part}`;
    const existing = perTape.get(key);
    if (!existing || existing.confidence < touch.confidence) perTape.set(key, { ...touch, ...event });
    touches.set(node.tape, perTape);
  };

  const direct = directEvidence(db, span, index, EXPLAIN.directThreshold);
  const starts: Array<{ node: SpanNode; confidence: number }> = [];
  const startKeys = new Set<string>();
  for (const match of direct) {
    addTouch(match.node, { offset: match.node.offset, part: PART_NAMES[match.part]!, confidence: match.confidence, via: 'direct', depth: 0 });
    if (match.part !== 0 && !startKeys.has(nodeKey(match.node))) {
      startKeys.add(nodeKey(match.node));
      starts.push({ node: match.node, confidence: match.confidence });
    }
  }
  const lineage = walkLineage(db, starts, { minConfidence, all: options.all ?? false });
  for (const step of lineage.steps) {
    addTouch(step.node, { offset: step.node.offset, part: 'after', confidence: step.confidence, via: 'lineage', depth: step.depth, edge: step.edge });
  }

  const tapeInfo = (id: number): TapeInfo =>
    sql(db, 'select id, tape_id, path, harness, session_id, event_count, first_ms from tapes where id = ?').get(id) as TapeInfo;
  const results: Array<Found> = [];
  for (const [tape, perTape] of touches) {
    const list = [...perTape.values()].sort((a, b) => a.offset - b.offset);
    const info = tapeInfo(tape);
    const isDirect = list.some((t) => t.via === 'direct');
    results.push({
      ...describe(info),
      confidence: Math.max(...list.map((t) => t.confidence)),
      via: isDirect ? 'direct' : 'lineage',
      depth: Math.min(...list.map((t) => t.depth)),
      touches: list.map(({ time_ms: _ignored, ...touch }) => touch),
      windows: [],
      latest: Math.max(...list.map((t) => t.time_ms ?? info.first_ms ?? 0)),
      id: tape,
    });
  }
  results.push(...continuations(db, results, touches, { minConfidence, all: options.all ?? false }, tapeInfo));
  results.sort((a, b) => b.touches.length - a.touches.length || b.latest - a.latest || (a.tape_id < b.tape_id ? -1 : 1));

  const limit = options.limit ?? EXPLAIN.limit;
  const kept = results.slice(0, limit).map(({ latest: _latest, id, ...result }) => {
    if (options.brief) return result;
    const count = tapeInfo(id).event_count;
    // A tape reached by continuation has no touch: its window is its tail, where the conversation went on.
    const anchors = result.touches.length > 0 ? result.touches.map((t) => t.offset) : [count - 1];
    return { ...result, windows: windowsAround(anchors, count, options, result.tape_id) };
  });
  return {
    span: { file: span.file, start: span.start, end: span.end },
    results: kept,
    total: results.length,
    truncated: { ...lineage.truncated, limit: results.length > limit },
  };
}

function describe(info: TapeInfo): Pick<ExplainResult, 'tape_id' | 'path' | 'session'> {
  return { tape_id: info.tape_id, path: info.path, session: { agent: info.harness, id: info.session_id } };
}

/** Events whose text holds at least `threshold` of one anchor window's fingerprints. */
function directEvidence(db: Database, span: ExplainSpan, index: EvidenceIndex, threshold: number) {
  const anchors = anchorsForText(span.text, { params: index.params, firstLine: span.start });
  const all = new Set(anchors.flatMap((anchor) => anchor.hashes));
  if (all.size === 0) return [];
  const rows = sql(db, 'select hash, tape, offset, part from evidence where hash in (select value from json_each(?))')
    .safeIntegers(true)
    .all(hashList(all)) as Array<{ hash: bigint; tape: bigint; offset: bigint; part: bigint }>;
  const groups = new Map<string, { node: SpanNode; part: number; hashes: Set<bigint> }>();
  for (const row of rows) {
    const key = `${row.tape}:${row.offset}:${row.part}`;
    const group = groups.get(key) ?? { node: { tape: Number(row.tape), offset: Number(row.offset) }, part: Number(row.part), hashes: new Set() };
    group.hashes.add(row.hash);
    groups.set(key, group);
  }
  const matches: Array<{ node: SpanNode; part: number; confidence: number }> = [];
  for (const group of groups.values()) {
    let best = 0;
    for (const anchor of anchors) {
      let shared = 0;
      for (const hash of anchor.hashes) if (group.hashes.has(hash)) shared++;
      best = Math.max(best, shared / anchor.hashes.length);
    }
    if (best >= threshold && best > 0) matches.push({ node: group.node, part: group.part, confidence: Math.round(best * 10_000) / 10_000 });
  }
  return matches.sort((a, b) => b.confidence - a.confidence || a.node.tape - b.node.tape || a.node.offset - b.node.offset);
}

/** Earlier tapes of the same conversation, reached backwards over continuation edges from the tapes found. */
function continuations(
  db: Database,
  found: ReadonlyArray<Found>,
  touches: ReadonlyMap<number, unknown>,
  options: { minConfidence: number; all: boolean },
  tapeInfo: (id: number) => TapeInfo,
): Array<Found> {
  const seen = new Set<number>(touches.keys());
  const results: Array<Found> = [];
  let frontier = found.map((result) => ({ id: result.id, tape_id: result.tape_id, depth: result.depth }));
  const earlier = sql(db, 'select from_tape, confidence, signal from continuations where to_tape = ? order by confidence desc');
  for (let hops = 0; hops < TAPE_TUNING.lineage.maxDepth && frontier.length > 0; hops++) {
    const next: typeof frontier = [];
    for (const tape of frontier) {
      for (const edge of earlier.all(tape.id) as Array<{ from_tape: number; confidence: number; signal: string }>) {
        if (seen.has(edge.from_tape) || (!options.all && edge.confidence < options.minConfidence)) continue;
        seen.add(edge.from_tape);
        const info = tapeInfo(edge.from_tape);
        results.push({
          ...describe(info),
          confidence: edge.confidence,
          via: 'continuation',
          depth: tape.depth + 1,
          touches: [],
          windows: [],
          continuation: { continues_into: tape.tape_id, confidence: edge.confidence, signal: edge.signal },
          latest: info.first_ms ?? 0,
          id: info.id,
        });
        next.push({ id: info.id, tape_id: info.tape_id, depth: tape.depth + 1 });
      }
    }
    frontier = next;
  }
  return results;
}

/** Merged windows of `before`/`after` events around each anchor offset, filled from the tape when a loader is given. */
function windowsAround(anchors: number[], count: number, options: ExplainOptions, tapeId: string): ExplainWindow[] {
  const before = options.before ?? EXPLAIN.before;
  const after = options.after ?? EXPLAIN.after;
  const windows: ExplainWindow[] = [];
  for (const anchor of [...new Set(anchors)].sort((a, b) => a - b)) {
    const from = Math.max(0, anchor - before);
    const to = Math.min(count - 1, anchor + after);
    const last = windows.at(-1);
    if (last && from <= last.to + 1) {
      last.to = Math.max(last.to, to);
      last.anchors.push(anchor);
    } else windows.push({ anchors: [anchor], from, to });
  }
  const tape = options.loadTape?.(tapeId);
  if (tape) for (const window of windows) window.events = tape.events.slice(window.from, window.to + 1);
  return windows;
}
