// Every row of every table an audited operation can change, for comparing a store before and after (undo tests).
import type { Store } from '../../../src/core/index.js';

/** Tables whose rows undo restores (derived tables — vectors, the search generation — are not compared). */
export const STATE_TABLES = [
  'engrams',
  'engram_repo_stats',
  'engram_tag_stats',
  'engram_tag_relevance',
  'engram_judgements',
  'session_shown_engrams',
  'engram_conflicts',
  'engram_sources',
] as const;

/** All rows of the state tables, in a stable order, every column. */
export function snapshot(store: Store, options: { without?: readonly string[] } = {}): Record<string, Array<Record<string, unknown>>> {
  return Object.fromEntries(
    STATE_TABLES.map((table) => {
      const rows = store.db.prepare(`SELECT * FROM ${table}`).all() as Array<Record<string, unknown>>;
      const clean = rows.map((row) => Object.fromEntries(Object.entries(row).filter(([column]) => !options.without?.includes(column))));
      return [table, clean.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))];
    }),
  );
}
