import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/core/index.js';
import {
  addEngram,
  deleteEngram,
  deprecateEngram,
  exportEngrams,
  importEngrams,
  updateEngram,
} from '../../../src/services/index.js';
import { steppingClock, tempStore, thrown } from '../../_helpers.js';

const EVERY_STATUS = ['pending', 'active', 'rejected', 'deprecated'] as const;

/** A whole export (every review state), as a backup is made. */
const dump = (store: Store, options = {}): string[] => {
  const lines: string[] = [];
  exportEngrams(store, (line) => lines.push(line), { statuses: EVERY_STATUS, ...options });
  return lines;
};

/** A store with one engram of every interesting shape, plus learning state. */
function populated(): Store {
  const store = tempStore();
  const now = steppingClock();
  const a = addEngram(store, { text: 'Alpha lesson.', title: 'A', content: 'Long detail.', category: 'dev/x', tags: ['t1', 't2'], project: 'shop', prerequisites: { os: ['linux'] }, pinned: true }, { now });
  const b = addEngram(store, { text: 'Beta lesson.', topic_key: 'beta', source: 'extracted', source_sessions: ['s1'] }, { now });
  const c = addEngram(store, { text: 'Gamma lesson.' }, { now });
  const d = addEngram(store, { text: 'Delta lesson, deleted.' }, { now });
  updateEngram(store, b.engram.id, { text: 'Beta lesson, revised.' }, { now });
  deprecateEngram(store, c.engram.id, { reason: 'obsolete', now });
  deleteEngram(store, d.engram.id, { now });
  store.stats.replace(a.engram.id, {
    repos: [{ repo: 'shop', times_matched: 3, last_matched_at: '2026-11-01T12:00:00.000Z' }],
    tag_sets: [{ tag_set: ['frontend', 'acme'], times_matched: 3, last_matched_at: null }],
    tag_relevance: [{ tag: 'frontend', score: 0.42, positive_evals: 2, negative_evals: 1, last_evaluated_at: '2026-11-01T12:00:00.000Z' }],
  });
  return store;
}

describe('exportEngrams', () => {
  it('writes one line per engram in id order with every column and its learning state', () => {
    const lines = dump(populated());
    expect(lines).toHaveLength(3); // the soft-deleted one is left out by default
    const first = JSON.parse(lines[0] as string);
    expect(Object.keys(first)).toEqual([
      'id', 'uid', 'kind', 'title', 'text', 'content', 'category', 'tags', 'prerequisites', 'source', 'source_sessions',
      'session_id', 'tool_name', 'occurrence_count', 'times_matched', 'last_matched_at', 'pinned', 'auto_pinned', 'deprecated',
      'deprecated_reason', 'project', 'scope', 'topic_key', 'content_hash', 'revision_count', 'duplicate_count',
      'created_at', 'updated_at', 'last_seen_at', 'deleted_at', 'status', 'status_reason', 'learned_by', 'tier',
      'confirmed_at', 'liveness', 'liveness_at', 'stats',
    ]);
    expect(first.stats.tag_sets).toEqual([{ tag_set: ['acme', 'frontend'], times_matched: 3, last_matched_at: null }]);
  });

  it('exports active engrams unless other review states are asked for', () => {
    const store = populated();
    const active: string[] = [];
    exportEngrams(store, (line) => active.push(line));
    expect(active.map((line) => JSON.parse(line).text)).toEqual(['Alpha lesson.', 'Beta lesson, revised.']);
    expect(dump(store, { statuses: ['deprecated'] }).map((line) => JSON.parse(line).text)).toEqual(['Gamma lesson.']);
  });

  it('includes soft-deleted engrams on request and filters by project', () => {
    const store = populated();
    expect(dump(store, { includeDeleted: true })).toHaveLength(4);
    expect(dump(store, { project: 'shop' }).map((line) => JSON.parse(line).text)).toEqual(['Alpha lesson.']);
  });
});

describe('importEngrams', () => {
  it('round-trips an export into an empty store byte for byte, ids and learning state included', () => {
    const source = populated();
    const exported = dump(source, { includeDeleted: true });
    const target = tempStore();
    const report = importEngrams(target, exported);
    expect(report).toMatchObject({ lines: 4, created: 4, updated: 0, unchanged: 0, duplicates: 0 });
    expect(dump(target, { includeDeleted: true })).toEqual(exported);
  });

  it('is idempotent: importing the same export again changes nothing', () => {
    const exported = dump(populated());
    const target = tempStore();
    importEngrams(target, exported);
    const before = dump(target, { includeDeleted: true });
    expect(importEngrams(target, exported)).toMatchObject({ created: 0, updated: 0, unchanged: 3 });
    expect(dump(target, { includeDeleted: true })).toEqual(before);
  });

  it('replaces an engram with a newer version of itself and keeps a newer local one', () => {
    const store = tempStore();
    const now = steppingClock();
    const { engram } = addEngram(store, { text: 'Version one.' }, { now });
    const v1 = dump(store);
    updateEngram(store, engram.id, { text: 'Version two.' }, { now });
    const v2 = dump(store);
    expect(importEngrams(store, v1)).toMatchObject({ older: 1, updated: 0 });
    expect(store.engrams.get(engram.id)?.text).toBe('Version two.');

    const other = tempStore();
    importEngrams(other, v1);
    expect(importEngrams(other, v2)).toMatchObject({ updated: 1 });
    expect(dump(other)).toEqual(v2);
  });

  it('treats a full line whose text already lives under another uid as a duplicate, like add does', () => {
    const source = tempStore();
    addEngram(source, { text: 'Never force-push main.' });
    const target = tempStore();
    addEngram(target, { text: 'never force-push  MAIN.' });
    expect(importEngrams(target, dump(source))).toMatchObject({ created: 0, duplicates: 1 });
    expect(target.engrams.counts().total).toBe(1);
  });

  it('gives an engram a new id when its id is taken, keeping its uid', () => {
    const exported = dump(populated());
    const target = tempStore();
    addEngram(target, { text: 'Already here, holding id 1.' });
    importEngrams(target, exported);
    const alpha = target.engrams.list().engrams.find((e) => e.text === 'Alpha lesson.');
    expect(alpha?.id).not.toBe(1);
    expect(alpha?.uid).toBe(JSON.parse(exported[0] as string).uid);
  });

  it('imports minimal lines, treating a repeat of stored text as a duplicate, not a new engram', () => {
    const store = tempStore();
    const lines = [
      '{"text": "Use the staging bucket for tests.", "category": "ops", "tags": ["s3"]}',
      '',
      '{"text": "Never force-push main."}',
      '{"text": "never force-push   MAIN."}',
    ];
    expect(importEngrams(store, lines)).toMatchObject({ lines: 3, created: 2, duplicates: 1 });
    expect(store.engrams.list().engrams.map((e) => [e.text, e.category, e.tags, e.source])).toEqual([
      ['Use the staging bucket for tests.', 'ops', ['s3'], 'import'],
      ['Never force-push main.', 'general', [], 'import'],
    ]);
    expect(importEngrams(store, lines)).toMatchObject({ created: 0, duplicates: 3 });
    expect(store.engrams.list().engrams.every((e) => e.duplicate_count === 0)).toBe(true);
  });

  it('records a minimal line that names the sessions it was learned from in the first of them, idempotently', () => {
    const store = tempStore();
    const lines = [
      '{"text": "Read a file before editing it.", "source": "extracted", "source_sessions": ["s-1"]}',
      '{"text": "The Task tool needs a prompt.", "source": "extracted", "source_sessions": ["s-1", "s-2"]}',
      '{"text": "A lesson written by hand."}',
    ];
    expect(importEngrams(store, lines)).toMatchObject({ created: 3 });
    const rows = (): Array<[string, string | null | undefined]> => store.engrams.list().engrams.map((e) => [e.text, e.session_id]);
    expect(rows()).toEqual([
      ['Read a file before editing it.', 's-1'],
      ['The Task tool needs a prompt.', 's-1'],
      ['A lesson written by hand.', null],
    ]);
    // The two lessons of session s-1 are each other's context (recall's context step, the timeline).
    const first = store.engrams.list().engrams[0]?.id as number;
    expect(store.engrams.sessionNeighbours(first, 2)).toEqual({ session: 's-1', neighbours: [{ id: first + 1, distance: 1 }] });
    // Importing the same lines again changes no row; an export carries session_id and round-trips it.
    expect(importEngrams(store, lines)).toMatchObject({ created: 0, duplicates: 3 });
    expect(rows()).toHaveLength(3);
    const exported: string[] = [];
    exportEngrams(store, (line) => exported.push(line));
    const target = tempStore();
    importEngrams(target, exported);
    expect(target.engrams.list().engrams.map((e) => [e.text, e.session_id])).toEqual(rows());
    expect(importEngrams(target, exported)).toMatchObject({ created: 0, unchanged: 3 });
  });

  it('validates every line first and imports nothing when one is bad, naming the line', () => {
    const store = tempStore();
    const error = thrown(() => importEngrams(store, ['{"text": "fine"}', '{"text": "broken"', '{"txt": "typo"}', '[1,2]', '{"text": "x", "category": "a//b"}']));
    expect(error?.code).toBe('INVALID_INPUT');
    expect(error?.message).toMatch(/^4 invalid line\(s\); nothing was imported\. line 2: malformed JSON/);
    const errors = error?.details?.errors as Array<{ line: number; message: string }>;
    expect(errors.map((e) => e.line)).toEqual([2, 3, 4, 5]);
    expect(errors[1]?.message).toContain('txt');
    expect(errors[2]?.message).toBe('expected a JSON object');
    expect(errors[3]?.message).toContain('empty segment');
    expect(store.engrams.counts().total).toBe(0);
  });

  it('redacts secrets in imported lines, full and minimal', () => {
    const store = tempStore();
    const full = JSON.parse(dump(populated())[0] as string);
    full.text = 'Leaked ghp_abcdefghijklmnopqrstuvwxyz0123456789 here.';
    const report = importEngrams(store, [JSON.stringify(full), '{"text": "password=\\"hunter22\\" in the old config"}']);
    expect(report.redacted).toBe(2);
    const texts = store.engrams.list().engrams.map((e) => e.text).join('\n');
    expect(texts).not.toMatch(/ghp_|hunter22/);
  });

  it('writes nothing on a dry run but reports what would happen', () => {
    const store = tempStore();
    const report = importEngrams(store, dump(populated()), { dryRun: true });
    expect(report).toMatchObject({ dry_run: true, created: 3 });
    expect(store.engrams.counts().total).toBe(0);
  });

  it('commits in batches and reports progress per batch', () => {
    const store = tempStore();
    const lines = Array.from({ length: 25 }, (_, i) => JSON.stringify({ text: `lesson ${i}` }));
    const progress: number[] = [];
    const report = importEngrams(store, lines, { batchSize: 10, onProgress: (done) => progress.push(done) });
    expect(report.batches).toBe(3);
    expect(progress).toEqual([10, 20, 25]);
  });
});
