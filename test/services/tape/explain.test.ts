import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { indexTape, type EvidenceIndex } from '../../../src/services/tape/evidence-index.js';
import { explainSpan } from '../../../src/services/tape/explain.js';
import type { LoadedTape } from '../../../src/services/tape/events.js';
import { refreshIndex } from '../../../src/services/tape/index-refresh.js';
import { tempDir } from '../../_helpers.js';
import { ask, code, create, freshIndex, read, say, tape } from './_tapes.js';

const verify = code('verify', 12);
const writer = tape('writer', 1, [ask('write the token verifier'), say('Writing it now.'), create('src/auth.ts', verify), say('Done.')]);
const reader = tape('reader', 2, [ask('why does auth reject old tokens?'), read('src/auth.ts', verify), say('Because of the expiry check.')]);
const bystander = tape('bystander', 3, [ask('tidy the readme'), create('README.md', code('readme', 8))]);

function indexed(...tapes: LoadedTape[]): EvidenceIndex {
  const index = freshIndex();
  for (const t of tapes) indexTape(index, t);
  return index;
}

describe('explainSpan', () => {
  it('returns the tape that wrote the span, with its touch, session and transcript window', () => {
    const index = indexed(writer, reader, bystander);
    const tapes = new Map([writer, reader, bystander].map((t) => [t.tape_id, t]));
    const response = explainSpan(index, { file: 'src/auth.ts', start: 1, end: 12, text: verify }, { before: 1, after: 1, loadTape: (id) => tapes.get(id) ?? null });
    expect(response.span).toEqual({ file: 'src/auth.ts', start: 1, end: 12 });
    expect(response.results.map((r) => r.tape_id).sort()).toEqual(['reader', 'writer']);
    const written = response.results.find((r) => r.tape_id === 'writer')!;
    expect(written).toMatchObject({ via: 'direct', depth: 0, confidence: 1, session: { agent: 'claude', id: 'session-writer' } });
    expect(written.touches).toEqual([{ offset: 3, kind: 'code.edit', file: 'src/auth.ts', time: '2026-01-01T00:03:00.000Z', part: 'after', confidence: 1, via: 'direct', depth: 0 }]);
    expect(written.windows).toHaveLength(1);
    expect(written.windows[0]).toMatchObject({ anchors: [3], from: 2, to: 4 });
    expect(written.windows[0]!.events!.map((e) => e.k)).toEqual(['msg.out', 'code.edit', 'msg.out']);
  });

  it('returns nothing for an unrelated span', () => {
    const index = indexed(writer, reader, bystander);
    const response = explainSpan(index, { file: 'src/x.ts', start: 5, end: 9, text: code('nowhere', 5) });
    expect(response).toMatchObject({ results: [], total: 0, truncated: { fanout: 0, edges: false, depth: false, limit: false } });
  });

  it('orders tapes by touch count, then by the most recent touch', () => {
    const twice = tape('twice', 4, [read('src/auth.ts', verify), read('src/auth.ts', verify)]);
    const response = explainSpan(indexed(writer, reader, twice), { file: 'src/auth.ts', start: 1, end: 12, text: verify }, { brief: true });
    expect(response.results.map((r) => r.tape_id)).toEqual(['twice', 'reader', 'writer']);
    expect(response.results.every((r) => r.windows.length === 0)).toBe(true);
  });

  it('finds the span after lines were added above it', () => {
    const shifted = `import { clock } from './clock';\n\n// checks tokens\n${verify}`;
    const response = explainSpan(indexed(writer), { file: 'src/auth.ts', start: 1, end: 15, text: shifted });
    expect(response.results.map((r) => r.tape_id)).toEqual(['writer']);
  });

  it('widens a small span until few enough tapes match (expandUntil)', () => {
    // Two files share a three-line helper; only the surrounding lines tell them apart.
    const helper = code('helper', 3);
    const fileA = `${code('alpha', 6)}\n${helper}\n${code('alpha_tail', 6)}`;
    const fileB = `${code('beta', 6)}\n${helper}\n${code('beta_tail', 6)}`;
    const index = indexed(tape('A', 1, [create('a.ts', fileA)]), tape('B', 2, [create('b.ts', fileB)]));
    const span = { file: 'a.ts', start: 7, end: 9, text: helper, fileText: fileA };
    expect(explainSpan(index, span).total).toBe(2);
    const narrowed = explainSpan(index, span, { expandUntil: 1 });
    expect(narrowed.results.map((r) => r.tape_id)).toEqual(['A']);
    expect(narrowed.expanded).toEqual({ target: 1, reached: true, steps: 1 });
    expect(narrowed.span).toEqual({ file: 'a.ts', start: 1, end: 15 });
    expect(() => explainSpan(index, { ...span, fileText: undefined }, { expandUntil: 1 })).toThrow(/fileText/);
  });

  it('applies the limit and says so', () => {
    const readers = Array.from({ length: 4 }, (_, i) => tape(`r${i}`, i + 2, [read('src/auth.ts', verify)]));
    const response = explainSpan(indexed(writer, ...readers), { file: 'src/auth.ts', start: 1, end: 12, text: verify }, { limit: 2, brief: true });
    expect(response.results).toHaveLength(2);
    expect(response).toMatchObject({ total: 5, truncated: { limit: true } });
  });
});

describe('refreshIndex', () => {
  it('adds new tapes, and rebuilds when an older tape arrives', () => {
    const path = join(tempDir(), 'index.sqlite');
    const store = new Map<string, LoadedTape>();
    const catalog = { list: () => [...store.values()].map((t) => ({ tape_id: t.tape_id, path: t.tape_id })), read: (p: string) => store.get(p)! };
    store.set('reader', reader);
    let refreshed = refreshIndex(path, catalog);
    expect(refreshed.report).toEqual({ action: 'rebuilt', added: 1, tapes: 1 });
    refreshed.index.close();
    store.set('bystander', bystander);
    refreshed = refreshIndex(path, catalog);
    expect(refreshed.report).toEqual({ action: 'added', added: 1, tapes: 2 });
    refreshed.index.close();
    refreshed = refreshIndex(path, catalog);
    expect(refreshed.report.action).toBe('none');
    refreshed.index.close();
    store.set('writer', writer);
    refreshed = refreshIndex(path, catalog);
    expect(refreshed.report.action).toBe('rebuilt');
    const edited = explainSpan(refreshed.index, { file: 'src/auth.ts', start: 1, end: 12, text: verify });
    expect(edited.results.map((r) => r.tape_id).sort()).toEqual(['reader', 'writer']);
    refreshed.index.close();
  });
});


