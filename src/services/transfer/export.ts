import * as z from 'zod';
import { engramSchema, engramStatsSchema, type Engram, type EngramStats, type EngramStatus, type Store } from '../../core/index.js';

const engram = engramSchema();

/**
 * One line of an export: the engram with every column, plus its learning state. Key order is fixed (schema order),
 * so exporting the same store twice gives the same bytes. Lines written before review existed have no review
 * columns: import derives them (status from `deprecated`, learned_by from `source`).
 */
export const ExportLineSchema = engram.extend({
  status: engram.shape.status.optional(),
  status_reason: engram.shape.status_reason.optional(),
  learned_by: engram.shape.learned_by.optional(),
  tier: engram.shape.tier.optional(),
  confirmed_at: engram.shape.confirmed_at.optional(),
  liveness: engram.shape.liveness.optional(),
  liveness_at: engram.shape.liveness_at.optional(),
  stats: engramStatsSchema(),
});
export type ExportLine = z.infer<typeof ExportLineSchema>;

/** Builds the export line of one engram. */
export function exportLine(engram: Engram, stats: EngramStats): ExportLine {
  return { ...engram, stats };
}

/** Options for {@link exportEngrams}. */
export interface ExportOptions {
  /** Include soft-deleted engrams (they keep their `deleted_at`). @default false */
  includeDeleted?: boolean;
  /** Only engrams of this project; `null` for engrams without one. */
  project?: string | null;
  /** Only engrams in these review states. @default ['active'] (everything: all four) */
  statuses?: readonly EngramStatus[];
}

/**
 * Writes every engram as one JSON line, in id order, from a single read snapshot (writers that run meanwhile do not
 * tear the export). Returns how many lines were written.
 */
export function exportEngrams(store: Store, writeLine: (line: string) => void, options: ExportOptions = {}): { count: number } {
  return store.read(() => {
    let count = 0;
    for (const engram of store.engrams.iterate({
      includeDeleted: options.includeDeleted ?? false,
      statuses: options.statuses ?? ['active'],
      ...(options.project === undefined ? {} : { project: options.project }),
    })) {
      writeLine(JSON.stringify(exportLine(engram, store.stats.get(engram.id))));
      count++;
    }
    return { count };
  });
}
