/**
 * Our store in the Go engram's export shape (`GET /export`, `engram export --go`): every session, every engram as an
 * observation (soft-deleted ones included, as the Go engram exports them), every prompt. Each observation also
 * carries our own fields under `engram`, so an export read back by Engram loses nothing.
 * @module
 */
import type { Engram, Store } from '../../core/index.js';
import { observationView } from '../observations/index.js';
import { GO_EXPORT_VERSION, goObservation, goPrompt, goSession, goTime, type EngramExtension, type GoExport, type GoObservation } from './wire.js';

/** Our fields of an engram that a Go observation has no place for. */
export function engramExtension(engram: Engram): EngramExtension {
  return {
    v: 1,
    updated_at: engram.updated_at,
    ...(engram.deleted_at !== null ? { deleted_at: engram.deleted_at } : {}),
    category: engram.category,
    tags: engram.tags,
    prerequisites: engram.prerequisites,
    pinned: engram.pinned && !engram.auto_pinned,
    source: engram.source,
    source_sessions: engram.source_sessions,
  };
}

/** An engram as an exported Go observation with our fields. */
export const exportedObservation = (engram: Engram): GoObservation & { engram: EngramExtension } => ({
  ...goObservation(observationView(engram)),
  engram: engramExtension(engram),
});

/** The whole store (or one project) as the Go engram's `ExportData`, read in one snapshot. */
export function exportGoData(store: Store, options: { project?: string; now?: () => Date } = {}): GoExport {
  const at = (options.now ?? (() => new Date()))().toISOString();
  return store.read(() => ({
    version: GO_EXPORT_VERSION,
    exported_at: goTime(at),
    sessions: store.sessions.all(options.project).map(goSession),
    observations: [...store.engrams.iterate({ includeDeleted: true, ...(options.project !== undefined ? { project: options.project } : {}) })].map(exportedObservation),
    prompts: store.sessions.allPrompts(options.project).map(goPrompt),
  }));
}
