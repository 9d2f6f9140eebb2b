import { describe, expect, it } from 'vitest';
import { indexTape, type EvidenceIndex } from '../../../src/services/tape/evidence-index.js';
import { explainSpan } from '../../../src/services/tape/explain.js';
import type { LoadedTape } from '../../../src/services/tape/events.js';
import { walkLineage } from '../../../src/services/tape/lineage-walk.js';
import { code, create, edit, freshIndex, link, remove, tape } from './_tapes.js';

function indexAll(...tapes: LoadedTape[]): EvidenceIndex {
  const index = freshIndex();
  for (const t of tapes) indexTape(index, t);
  return index;
}

/** Explains `text` as if it sat at lines 1.. of `file`; returns tape id → how it was reached. */
function explainVia(index: EvidenceIndex, text: string, options: Parameters<typeof explainSpan>[2] = {}) {
  const response = explainSpan(index, { file: 'src/a.ts', start: 1, end: text.split('\n').length, text }, { brief: true, ...options });
  return { response, via: Object.fromEntries(response.results.map((r) => [r.tape_id, r.via])) };
}

const node = (index: EvidenceIndex, tapeId: string, offset: number) => ({
  tape: index.db.prepare('select id from tapes where tape_id = ?').pluck().get(tapeId) as number,
  offset,
});

// Each step adds new lines to the span (Jaccard old→new stays high); querying the newest lines alone finds only the
// last tape directly, so older tapes can only come through lineage.
const base = code('base', 20);
const grown = `${base}\n${code('more', 6)}`;
const grownAgain = `${grown}\n${code('most', 6)}`;

describe('lineage', () => {
  it('follows an edit chain A → B → C back to the tape that wrote the first version', () => {
    const index = indexAll(
      tape('A', 1, [create('src/a.ts', base)]),
      tape('B', 2, [edit('src/a.ts', base, grown)]),
      tape('C', 3, [edit('src/a.ts', grown, grownAgain)]),
    );
    const { response, via } = explainVia(index, code('most', 6));
    expect(via).toEqual({ C: 'direct', B: 'lineage', A: 'lineage' });
    const a = response.results.find((r) => r.tape_id === 'A')!;
    expect(a.depth).toBe(2);
    expect(a.touches[0]).toMatchObject({ kind: 'code.edit', via: 'lineage', edge: { agent_link: false, location_delta: 'same', cardinality: '1:1' } });
  });

  it('stores edges between the link and traversal thresholds but follows them only when asked', () => {
    const big = `${base}\n${code('bulk', 26)}`; // Jaccard ≈ 20/46: linked, below the default 0.50
    const index = indexAll(tape('A', 1, [create('src/a.ts', base)]), tape('B', 2, [edit('src/a.ts', base, big)]));
    const edge = index.db.prepare('select confidence, location_only from edges').get() as { confidence: number; location_only: number };
    expect(edge.confidence).toBeGreaterThanOrEqual(0.3);
    expect(edge.confidence).toBeLessThan(0.5);
    expect(edge.location_only).toBe(0);
    expect(explainVia(index, code('bulk', 26)).via).toEqual({ B: 'direct' });
    expect(explainVia(index, code('bulk', 26), { minConfidence: 0.3 }).via).toEqual({ B: 'direct', A: 'lineage' });
  });

  it('never links by location alone: unrelated code written over a span gets a location-only edge', () => {
    const other = code('unrelated', 20);
    const index = indexAll(tape('A', 1, [create('src/a.ts', base)]), tape('B', 2, [edit('src/a.ts', base, other)]));
    const edge = index.db.prepare('select confidence, location_only, location_delta from edges').get();
    expect(edge).toEqual({ confidence: expect.any(Number), location_only: 1, location_delta: 'same' });
    expect(explainVia(index, other).via).toEqual({ B: 'direct' });
    expect(explainVia(index, other, { minConfidence: 0 }).via).toEqual({ B: 'direct' });
    expect(explainVia(index, other, { all: true }).via).toEqual({ B: 'direct', A: 'lineage' });
  });

  it('always follows span.link edges, whatever their similarity', () => {
    const moved = code('rewritten', 12);
    const index = indexAll(
      tape('A', 1, [create('src/a.ts', base)]),
      tape('B', 2, [create('src/b.ts', moved), link('src/a.ts', [1, 20], 'src/b.ts', [1, 12])]),
    );
    const edge = index.db.prepare('select agent_link, location_delta from edges').get();
    expect(edge).toEqual({ agent_link: 1, location_delta: 'moved' });
    expect(explainVia(index, moved, { minConfidence: 1 }).via).toEqual({ B: 'direct', A: 'lineage' });
  });

  it('leaves a tombstone for a deleted span and links a verbatim re-insertion to the old chain', () => {
    const index = indexAll(
      tape('A', 1, [create('src/a.ts', base)]),
      tape('B', 2, [remove('src/a.ts', base)]),
      tape('C', 3, [create('src/c.ts', base)]),
    );
    const tombstone = index.db.prepare("select s.file, s.start_line, s.end_line from tombstones s").get();
    expect(tombstone).toEqual({ file: 'src/a.ts', start_line: 1, end_line: 20 });
    const walk = walkLineage(index.db, [{ node: node(index, 'C', 1), confidence: 1 }]);
    const reached = walk.steps.map((step) => [step.node, step.depth, step.edge.confidence]);
    expect(reached).toEqual([
      [node(index, 'B', 1), 1, 1],
      [node(index, 'A', 1), 2, 1],
    ]);
  });

  it('does not link a new span to a tombstone it only partly resembles', () => {
    const index = indexAll(
      tape('A', 1, [create('src/a.ts', base)]),
      tape('B', 2, [remove('src/a.ts', base)]),
      tape('C', 3, [create('src/a.ts', `${code('base', 10)}\n${code('fresh', 10)}`)]),
    );
    expect(index.db.prepare('select count(*) from edges where to_tape = (select id from tapes where tape_id = ?)').pluck().get('C')).toBe(0);
  });

  describe('traversal limits', () => {
    // 60 spans in A, each declared by B as the origin of one new span: 60 agent-link edges into one node.
    const sources = Array.from({ length: 60 }, (_, i) => create(`src/s${i}.ts`, code(`source${i}`, 3)));
    const links = Array.from({ length: 60 }, (_, i) => link(`src/s${i}.ts`, [1, 3], 'src/t.ts', [1, 8]));
    const fan = () => indexAll(tape('A', 1, sources), tape('B', 2, [create('src/t.ts', code('target', 8)), ...links]));

    it('caps fan-out at 50 edges per node and reports it', () => {
      const index = fan();
      const { response } = explainVia(index, code('target', 8));
      expect(response.truncated).toMatchObject({ fanout: 1, edges: false, depth: false });
      expect(response.results.find((r) => r.tape_id === 'A')!.touches).toHaveLength(50);
    });

    it('stops at the edge budget and reports it', () => {
      const index = fan();
      const walk = walkLineage(index.db, [{ node: node(index, 'B', 1), confidence: 1 }], { maxEdges: 7 });
      expect(walk.steps).toHaveLength(7);
      expect(walk.truncated.edges).toBe(true);
    });

    it('stops at depth 10 and reports it', () => {
      const versions = [base];
      for (let i = 0; i < 12; i++) versions.push(`${versions.at(-1)}\n${code(`step${i}`, 2)}`);
      const tapes = versions.map((text, i) => tape(`T${String(i).padStart(2, '0')}`, i + 1, [i === 0 ? create('src/a.ts', text) : edit('src/a.ts', versions[i - 1]!, text)]));
      const index = indexAll(...tapes);
      const { response } = explainVia(index, code('step11', 2), { limit: 50 });
      expect(response.truncated.depth).toBe(true);
      expect(response.results).toHaveLength(11);
      expect(Math.max(...response.results.map((r) => r.depth))).toBe(10);
      expect(response.results.map((r) => r.tape_id)).not.toContain('T00');
    });
  });
});
