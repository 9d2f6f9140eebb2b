/**
 * `engram undo [TOKEN]`: reverses one audited operation exactly, from the row images its audit entry holds, or refuses
 * with the reason — it was undone already, a later change touched the same columns of the same rows, or a row was
 * changed outside Engram since. The undo is itself an audited operation (so it can be undone: a redo).
 * @module
 */
import { EngramError, type Store } from '../../core/index.js';
import {
  audited,
  BOOKKEEPING_COLUMNS,
  changedColumns,
  currentRow,
  entryBySeq,
  entryByToken,
  LEARNING_COLUMNS,
  listAudit,
  rowWriter,
  syncJournal,
  undoneBy,
  type AuditEntry,
  type RowChange,
} from '../governance/index.js';
import { restoreBlock } from '../context/index.js';
import type { GateOptions } from './decide.js';
import { CLI_USER } from '../governance/index.js';

/** A context file's block before and after an operation (services/context), as its audit entry records it. */
interface FileBlock {
  file: string;
  before: string | null;
  after: string | null;
}

const fileBlock = (entry: AuditEntry): FileBlock | null => {
  const block = entry.detail?.file_block as FileBlock | undefined;
  return block && typeof block.file === 'string' ? block : null;
};

/** What an undo did. */
export interface UndoResult {
  /** The operations reversed (one, or every batch of an import). */
  undid: Array<{ token: string; op: string; at: string; actor: string; engram_ids: number[] }>;
  /** Rows written back. */
  rows: number;
  /** Columns left as they are because something changed them after (counters and times, never content). */
  kept: Array<{ table: string; key: Record<string, unknown>; columns: string[] }>;
  /** Undo this undo (a redo). */
  undo_token: string | null;
}

const keyOf = (change: Pick<RowChange, 'table' | 'key'>): string => `${change.table}:${JSON.stringify(change.key)}`;
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
const ignored = (column: string): boolean => BOOKKEEPING_COLUMNS.has(column) || LEARNING_COLUMNS.has(column);

/** The columns a change set, without times and counters: what a later change must not also have set. */
function meaningful(change: RowChange): string[] {
  return changedColumns(change).filter((column) => !ignored(column));
}

const describe = (entry: AuditEntry): string => `${entry.token} (${entry.op}${entry.engram_ids.length ? ` of #${entry.engram_ids.join(', #')}` : ''} at ${entry.at})`;

/** The operation `engram undo` without a token reverses: a person's latest that is not undone and not an undo. */
function lastUndoable(store: Store): AuditEntry | undefined {
  let before: number | undefined;
  for (;;) {
    const candidates = listAudit(store, { actors: ['user'], effectiveOnly: true, limit: 20, ...(before === undefined ? {} : { before }) });
    if (candidates.length === 0) return undefined;
    // A batch of an import whose other batches were undone together is not effective either.
    const found = candidates.find((candidate) => operation(store, candidate).every((item) => !undoneBy(store, item.seq)));
    if (found) return found;
    before = (candidates.at(-1) as AuditEntry).seq;
  }
}

/** Every entry of the operation (an import's batches share a group). */
function operation(store: Store, entry: AuditEntry): AuditEntry[] {
  const group = entry.detail?.group;
  if (typeof group !== 'string') return [entry];
  const all: AuditEntry[] = [];
  for (let seq = entry.seq; ; seq--) {
    const item = entryBySeq(store, seq);
    if (!item || item.detail?.group !== group) break;
    all.unshift(item);
  }
  for (let seq = entry.seq + 1; ; seq++) {
    const item = entryBySeq(store, seq);
    if (!item || item.detail?.group !== group) break;
    all.push(item);
  }
  return all;
}

/** True when an entry's change stands: it was never undone, or its undo was itself undone (a redo). */
function effective(store: Store, seq: number): boolean {
  const undo = undoneBy(store, seq);
  return !undo || !effective(store, undo.seq);
}

/** Later effective entries that changed the same rows (same columns, or the row's existence). */
function dependents(store: Store, entries: readonly AuditEntry[]): AuditEntry[] {
  const mine = new Set(entries.map((entry) => entry.seq));
  const touched = new Map<string, { change: RowChange; columns: Set<string> }>();
  for (const entry of entries) for (const change of entry.changes) touched.set(keyOf(change), { change, columns: new Set(meaningful(change)) });
  const last = Math.max(...entries.map((entry) => entry.seq));
  const blocking: AuditEntry[] = [];
  // Later entries in order; an entry that was undone (or is an undo that was undone) no longer counts.
  for (let seq = last + 1; ; seq++) {
    const later = entryBySeq(store, seq);
    if (!later) break;
    if (mine.has(seq) || !effective(store, seq)) continue;
    // An undo of a later operation put things back as that operation found them: together they changed nothing.
    if (later.undoes !== null && (mine.has(later.undoes) || later.undoes > last)) continue;
    const hits = later.changes.some((change) => {
      const ours = touched.get(keyOf(change));
      if (!ours) return false;
      if (ours.change.before === null || ours.change.after === null || change.before === null || change.after === null) return true;
      return meaningful(change).some((column) => ours.columns.has(column));
    });
    if (hits) blocking.push(later);
  }
  return blocking;
}

/** Rows whose current state is not what the operation left (changed outside Engram's audited writes). */
function drifted(store: Store, entries: readonly AuditEntry[]): string[] {
  const problems: string[] = [];
  for (const entry of entries) {
    for (const change of entry.changes) {
      const now = currentRow(store, change.table, change.key);
      const label = `${change.table} ${JSON.stringify(change.key)}`;
      if (change.after === null) {
        if (now !== null) problems.push(`${label} exists again`);
        continue;
      }
      if (now === null) {
        problems.push(`${label} no longer exists`);
        continue;
      }
      const columns = change.before === null ? Object.keys(change.after) : meaningful(change);
      const moved = columns.filter((column) => !ignored(column) && !same(now[column], change.after?.[column]));
      if (moved.length) problems.push(`${label} has ${moved.join(', ')} changed since`);
    }
  }
  return problems;
}

/** Writes the before-images back: rows it created are removed, rows it removed are put back, columns it set restored. */
function restore(store: Store, entries: readonly AuditEntry[], track: (change: RowChange) => void): Pick<UndoResult, 'rows' | 'kept'> {
  const changes = entries.flatMap((entry) => entry.changes).reverse();
  const kept: UndoResult['kept'] = [];
  let rows = 0;
  for (const change of changes) track(change);
  // Order for foreign keys: remove dependents before engrams; put engrams back before their dependents.
  const removals = changes.filter((change) => change.before === null);
  const inserts = changes.filter((change) => change.after === null);
  const updates = changes.filter((change) => change.before !== null && change.after !== null);
  for (const change of [...removals.filter((c) => c.table !== 'engrams'), ...removals.filter((c) => c.table === 'engrams')]) {
    rowWriter.remove(store, change.table, change.key);
    rows++;
  }
  for (const change of [...inserts.filter((c) => c.table === 'engrams'), ...inserts.filter((c) => c.table !== 'engrams')]) {
    rowWriter.insert(store, change.table, change.before as Record<string, unknown>);
    rows++;
  }
  for (const change of updates) {
    const now = currentRow(store, change.table, change.key) ?? {};
    const values: Record<string, unknown> = {};
    const left: string[] = [];
    for (const column of changedColumns(change)) {
      if (LEARNING_COLUMNS.has(column)) continue;
      // Times and counters go back only when nothing moved them since; content always does (dependents were checked).
      if (BOOKKEEPING_COLUMNS.has(column) && !same(now[column], change.after?.[column])) {
        left.push(column);
        continue;
      }
      values[column] = change.before?.[column] ?? null;
    }
    rowWriter.set(store, change.table, change.key, values);
    if (left.length) kept.push({ table: change.table, key: change.key, columns: left });
    rows++;
  }
  return { rows, kept };
}

/**
 * Undoes the operation with `token`, or a person's latest operation. Refuses with a clear reason, changing nothing:
 * an unknown token, an operation already undone, a later operation on the same rows and columns (undo that first), or
 * a row changed outside Engram since.
 */
export function undoOperation(store: Store, token?: string, options: GateOptions = {}): UndoResult {
  const actor = options.actor ?? CLI_USER;
  if (actor.by !== 'user') throw new EngramError('INVALID_INPUT', `only a person can undo; this was asked by '${actor.by}' via ${actor.via}`);
  const at = (options.now ?? (() => new Date()))().toISOString();
  const { result, entry } = audited(
    store,
    (outcome: Omit<UndoResult, 'undo_token'> & { target: AuditEntry; blocks: FileBlock[] }) => ({
      actor,
      op: 'undo',
      reason: `undo ${outcome.target.token} (${outcome.target.op})`,
      undoes: outcome.target.seq,
      detail: {
        undid: outcome.undid.map((item) => item.token),
        // Undoing this undo puts the file back again.
        ...(outcome.blocks[0] ? { file_block: { file: outcome.blocks[0].file, before: outcome.blocks[0].after, after: outcome.blocks[0].before } } : {}),
      },
    }),
    (changes) => {
      const target = token ? entryByToken(store, token.trim()) : lastUndoable(store);
      if (!target) {
        throw new EngramError('NOT_FOUND', token ? `no operation has the undo token '${token}' (engram audit lists them)` : 'there is nothing of yours to undo');
      }
      const entries = operation(store, target);
      for (const item of entries) {
        const done = undoneBy(store, item.seq);
        if (!done) continue;
        const redo = effective(store, done.seq) ? undefined : undoneBy(store, done.seq);
        throw new EngramError(
          'INVALID_INPUT',
          `${describe(item)} was already undone by ${done.token} at ${done.at}${redo ? `, then redone by ${redo.token}: undo ${redo.token} instead` : ''}`,
        );
      }
      const later = dependents(store, entries);
      if (later.length) {
        throw new EngramError(
          'INVALID_INPUT',
          `cannot undo ${describe(target)}: ${later.length === 1 ? 'a later change depends on it' : 'later changes depend on it'} — ${later
            .map(describe)
            .join(', ')}; undo ${later.length === 1 ? 'that' : 'those'} first (newest first)`,
          { details: { blocking: later.map((item) => item.token) } },
        );
      }
      const problems = drifted(store, entries);
      if (problems.length) {
        throw new EngramError('INVALID_INPUT', `cannot undo ${describe(target)} exactly: ${problems.join('; ')}; nothing was changed`, { details: { problems } });
      }
      // Files outside SQLite (a context file's block) first: if one changed since, nothing is undone.
      const blocks = entries.map(fileBlock).filter((block): block is FileBlock => block !== null);
      for (const block of blocks) restoreBlock(block);
      const done = restore(store, entries, (change) => (change.after === null ? changes.created(change.table, change.key) : changes.track(change.table, change.key)));
      return {
        target,
        blocks,
        undid: entries.map((item) => ({ token: item.token, op: item.op, at: item.at, actor: item.actor, engram_ids: item.engram_ids })),
        ...done,
      };
    },
    at,
  );
  if (entry) syncJournal(store);
  const { target: _target, blocks: _blocks, ...rest } = result;
  return { ...rest, undo_token: entry?.token ?? null };
}
