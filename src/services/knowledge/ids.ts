import type { IdPrefix } from './parse.js';
import type { KnowledgeState } from './state.js';

/**
 * Stable ids (seed 002, "ID Allocation"): the server is the single writer. It owns the next free number per
 * category in `id_counters`, reserves ids for a chunk in one transaction before the chunk is dispatched, and writes
 * them into the chunk input; the fold agent never invents one. Numbers are never handed out twice: once an id was in
 * any doc it is behind the counter for good.
 */

export const ID_PREFIXES: readonly IdPrefix[] = ['C', 'E', 'W'];

/** `C` + 7 → `C007` (at least three digits, as the seed writes them). */
export const formatId = (prefix: IdPrefix, number: number): string => `${prefix}${String(number).padStart(3, '0')}`;

/** `C042` → 42. */
export const idNumber = (id: string): number => Number(id.slice(1));

/** How many ids of each kind a chunk asks for. */
export type IdRequest = Partial<Record<IdPrefix, number>>;

/** The next free number per category. */
export function counters(state: KnowledgeState): Record<IdPrefix, number> {
  const rows = state.db.prepare('SELECT prefix, next FROM id_counters').all() as Array<{ prefix: IdPrefix; next: number }>;
  const out = { C: 1, E: 1, W: 1 };
  for (const row of rows) out[row.prefix] = row.next;
  return out;
}

/**
 * Reserves ids in one IMMEDIATE transaction. `defined` are the ids already in the docs: the counter first moves past
 * the highest of them (a person may have added an entry by hand), so a reservation never collides with the docs.
 */
export function reserveIds(state: KnowledgeState, request: IdRequest, defined: Iterable<string> = []): string[] {
  const highest: Record<IdPrefix, number> = { C: 0, E: 0, W: 0 };
  for (const id of defined) {
    const prefix = id[0] as IdPrefix;
    if (prefix in highest) highest[prefix] = Math.max(highest[prefix], idNumber(id));
  }
  return state.write(() => {
    const current = counters(state);
    const update = state.db.prepare('UPDATE id_counters SET next = ? WHERE prefix = ?');
    const reserved: string[] = [];
    for (const prefix of ID_PREFIXES) {
      const start = Math.max(current[prefix], highest[prefix] + 1);
      const count = Math.max(0, Math.trunc(request[prefix] ?? 0));
      for (let n = start; n < start + count; n++) reserved.push(formatId(prefix, n));
      if (start + count !== current[prefix]) update.run(start + count, prefix);
    }
    return reserved;
  });
}

/**
 * After a chunk is committed, gives back the unused tail of its reservation — only when nothing was reserved after
 * it (dispatches are serial, so this is the normal case), and never below an id that appears in the docs. Ids stay
 * dense without any id that was ever written being handed out again.
 */
export function returnUnused(state: KnowledgeState, reserved: readonly string[], defined: ReadonlySet<string>): void {
  state.write(() => {
    const current = counters(state);
    const update = state.db.prepare('UPDATE id_counters SET next = ? WHERE prefix = ?');
    for (const prefix of ID_PREFIXES) {
      const mine = reserved.filter((id) => id[0] === prefix).map(idNumber).sort((a, b) => a - b);
      if (mine.length === 0 || current[prefix] !== mine.at(-1)! + 1) continue;
      let next = current[prefix];
      while (next - 1 >= mine[0]! && !defined.has(formatId(prefix, next - 1))) next--;
      if (next !== current[prefix]) update.run(next, prefix);
    }
  });
}

/** Sets the counters past every id in the docs (adoption, `engram docs init` over existing docs). */
export function syncCounters(state: KnowledgeState, defined: Iterable<string>): Record<IdPrefix, number> {
  reserveIds(state, {}, defined);
  return counters(state);
}
