// Hand-written tapes for the index, lineage, continuation and explain tests: in-memory LoadedTape objects.
import { join } from 'node:path';
import type { LineRange, LoadedTape, TapeEvent } from '../../../src/services/tape/events.js';
import { openEvidenceIndex, type EvidenceIndex } from '../../../src/services/tape/evidence-index.js';
import { tempDir } from '../../_helpers.js';

type Body = TapeEvent extends infer E ? (E extends TapeEvent ? Omit<E, 't' | 'source'> : never) : never;

/** A tape whose events are one minute apart, starting at `day` (so tapes made later in a test sort later). */
export function tape(id: string, day: number, bodies: Body[], harness: 'claude' | 'codex' = 'claude'): LoadedTape {
  const start = Date.UTC(2026, 0, day);
  const source = { harness, session_id: `session-${id}` };
  const events = [
    { k: 'meta', label: 'session', cwd: '/repo' } as Body,
    ...bodies,
  ].map((body, index) => ({ ...body, t: new Date(start + index * 60_000).toISOString(), source }) as TapeEvent);
  return { tape_id: id, path: `/tapes/${id}.jsonl.zst`, events };
}

/** Distinct lines of code: `count` lines whose identifiers carry `name`, so two names never share a k-gram. */
export function code(name: string, count: number): string {
  return Array.from({ length: count }, (_, i) => `  const ${name}_${i} = compute_${name}(${name}_input, ${i * 7}, "${name} line ${i}");`).join('\n');
}

const range = (text: string, first = 1): LineRange => [first, first + text.split('\n').length - 1];

export function create(file: string, text: string, first = 1): Body {
  return { k: 'code.edit', file, op: 'create', before_range: null, after_range: range(text, first), before_text: null, after_text: text, before_hash: null, after_hash: null, call_id: null };
}

export function edit(file: string, before: string, after: string, first = 1): Body {
  return { k: 'code.edit', file, op: 'edit', before_range: range(before, first), after_range: range(after, first), before_text: before, after_text: after, before_hash: null, after_hash: null, call_id: null };
}

export function remove(file: string, before: string, first = 1): Body {
  return { k: 'code.edit', file, op: 'edit', before_range: range(before, first), after_range: null, before_text: before, after_text: '', before_hash: null, after_hash: null, call_id: null };
}

export function read(file: string, text: string, first = 1): Body {
  return { k: 'code.read', file, range: range(text, first), text };
}

export function link(fromFile: string, fromRange: LineRange, toFile: string, toRange: LineRange): Body {
  return { k: 'span.link', from_file: fromFile, from_range: fromRange, to_file: toFile, to_range: toRange, note: null };
}

export const say = (text: string): Body => ({ k: 'msg.out', text });
export const ask = (text: string): Body => ({ k: 'msg.in', text });
export const compaction = (summary: string): Body => ({ k: 'meta', label: 'compaction', summary });

/** A fresh index file in a temporary folder (closed by the caller or left to the process). */
export function freshIndex(): EvidenceIndex {
  return openEvidenceIndex(join(tempDir('engram-index-'), 'index.sqlite'));
}

/** Every table's rows, for comparing two index files. */
export function dump(index: EvidenceIndex): Record<string, unknown[]> {
  const tables = ['tapes', 'events', 'evidence', 'edges', 'tombstones', 'tombstone_fingerprints', 'boundary_fingerprints', 'continuations'];
  return Object.fromEntries(
    tables.map((table) => [table, index.db.prepare(`select * from ${table} order by 1, 2, 3`).safeIntegers(true).all()]),
  );
}
