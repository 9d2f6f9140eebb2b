export {
  GO_EXPORT_VERSION,
  goObservation,
  goPrompt,
  goSearchResults,
  goSession,
  goSessionSummary,
  goTime,
  goTimeline,
  isoFromGo,
} from './wire.js';
export type {
  EngramExtension,
  GoExport,
  GoObservation,
  GoPrompt,
  GoSearchResult,
  GoSession,
  GoSessionSummary,
  GoTimeline,
  GoTimelineEntry,
} from './wire.js';
export { GoExportInSchema, GoObservationInSchema, GoPromptInSchema, GoSessionInSchema } from './schema.js';
export type { GoExportIn, GoObservationIn, GoPromptIn, GoSessionIn } from './schema.js';
export { engramFromGo, ensureSession, observationSyncId, observationVersion, promptFromGo, promptSyncId } from './records.js';
export type { Refusal } from './records.js';
export { importGoData } from './import.js';
export type { GoImportOptions, GoImportReport } from './import.js';
export { engramExtension, exportedObservation, exportGoData } from './export.js';
export { checkSqliteFile, readGoDatabase, sniffFile, GO_DB_MAX_BYTES, GO_SCHEMA_KNOWN } from './database.js';
export { locateGoSource, moveGoDatabase } from './locate.js';
export type { GoSource } from './locate.js';
