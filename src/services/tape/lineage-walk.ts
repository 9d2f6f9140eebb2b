/**
 * Lineage at query time: a breadth-first walk backwards from the spans a query matched to the spans they came from,
 * within the seed's traversal limits, reporting what the limits cut off.
 * @module
 */
import type { Database } from '../../core/index.js';
import { nodeKey, sql, type SpanNode } from './_index-sql.js';
import { TAPE_TUNING } from './tuning.js';

/** Which edges to follow and how far. */
export interface WalkOptions {
  /** Edges below this confidence are not followed (agent links always are). @default 0.5 */
  minConfidence?: number;
  /** Follow every stored edge, `location_only` and low-confidence ones included. @default false */
  all?: boolean;
  /** @default 50 */
  maxFanout?: number;
  /** @default 500 */
  maxEdges?: number;
  /** @default 10 */
  maxDepth?: number;
}

/** One stored edge as the walk followed it. */
export interface LineageEdge {
  confidence: number;
  location_delta: 'same' | 'adjacent' | 'moved' | 'absent';
  cardinality: '1:1' | '1:N' | 'N:1';
  agent_link: boolean;
  location_only: boolean;
}

/** A span reached by the walk. */
export interface LineageStep {
  node: SpanNode;
  /** The span it was reached from (one step nearer the query). */
  child: SpanNode;
  depth: number;
  /** The smallest confidence along the path, the start's direct match included (agent links count as 1). */
  confidence: number;
  edge: LineageEdge;
}

/** What the limits cut off. */
export interface WalkTruncation {
  /** Nodes whose edges exceeded the fan-out cap (the weakest were dropped). */
  fanout: number;
  /** The total edge budget ran out. */
  edges: boolean;
  /** Some node at the depth limit had edges left to follow. */
  depth: boolean;
}

interface EdgeRow {
  from_tape: number;
  from_offset: number;
  confidence: number;
  location_delta: LineageEdge['location_delta'];
  cardinality: LineageEdge['cardinality'];
  agent_link: number;
  location_only: number;
}

/** Walks incoming edges from `starts` (each with the confidence of its direct match); starts are not repeated. */
export function walkLineage(
  db: Database,
  starts: ReadonlyArray<{ node: SpanNode; confidence: number }>,
  options: WalkOptions = {},
): { steps: LineageStep[]; truncated: WalkTruncation } {
  const limits = TAPE_TUNING.lineage;
  const minConfidence = options.minConfidence ?? limits.traverseThreshold;
  const maxFanout = options.maxFanout ?? limits.maxFanout;
  const maxEdges = options.maxEdges ?? limits.maxEdges;
  const maxDepth = options.maxDepth ?? limits.maxDepth;
  const incoming = sql(db, `select from_tape, from_offset, confidence, location_delta, cardinality, agent_link, location_only
    from edges where to_tape = ? and to_offset = ? order by agent_link desc, confidence desc, from_tape desc, from_offset desc`);
  const truncated: WalkTruncation = { fanout: 0, edges: false, depth: false };
  const steps: LineageStep[] = [];
  const visited = new Set(starts.map((start) => nodeKey(start.node)));
  let queue = starts.map((start) => ({ node: start.node, confidence: start.confidence, depth: 0 }));
  let followed = 0;
  while (queue.length > 0 && !truncated.edges) {
    const next: typeof queue = [];
    for (const current of queue) {
      const eligible = (incoming.all(current.node.tape, current.node.offset) as EdgeRow[]).filter(
        (edge) => options.all || edge.agent_link === 1 || (edge.location_only === 0 && edge.confidence >= minConfidence),
      );
      if (eligible.length === 0) continue;
      if (current.depth >= maxDepth) {
        truncated.depth = true;
        continue;
      }
      if (eligible.length > maxFanout) truncated.fanout++;
      for (const edge of eligible.slice(0, maxFanout)) {
        const node = { tape: edge.from_tape, offset: edge.from_offset };
        if (visited.has(nodeKey(node))) continue;
        if (followed >= maxEdges) {
          truncated.edges = true;
          break;
        }
        followed++;
        visited.add(nodeKey(node));
        const confidence = Math.min(current.confidence, edge.agent_link ? 1 : edge.confidence);
        steps.push({
          node,
          child: current.node,
          depth: current.depth + 1,
          confidence,
          edge: {
            confidence: edge.confidence,
            location_delta: edge.location_delta,
            cardinality: edge.cardinality,
            agent_link: edge.agent_link === 1,
            location_only: edge.location_only === 1,
          },
        });
        next.push({ node, confidence, depth: current.depth + 1 });
      }
      if (truncated.edges) break;
    }
    queue = next;
  }
  return { steps, truncated };
}
