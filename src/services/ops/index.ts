export { CallerSchema } from './caller.js';
export type { Caller } from './caller.js';
export { OPERATIONS, OPERATION_NAMES, operation, runOperation } from './catalog.js';
export type { OpContext, Operation, OperationName } from './catalog.js';
// What a surface needs to run the operations itself and to read their results (the MCP surface imports services
// only through this module: nothing reachable from here may promote or approve).
export { createSearchEngine, searchTuning } from '../recall/index.js';
// The actor of every operation the agent's surfaces run (the socket dispatcher and the MCP process's fallback).
export { MCP_AGENT } from '../governance/index.js';
export type { Actor } from '../governance/index.js';
export { workEnvironment } from '../inject/index.js';
// The Go engram's wire shapes, for the HTTP surface.
export { goObservation, goPrompt, goSearchResults, goSessionSummary, goTimeline } from '../goengram/index.js';
export type { GoExport, GoImportReport, GoObservation } from '../goengram/index.js';
export type { SearchEngine, SearchRequest, SearchResponse } from '../recall/index.js';
export type {
  MergeProjectsResult,
  ObservationHit,
  ObservationSearch,
  ObservationView,
  PassiveCaptureResult,
  MigrateProjectResult,
  SaveObservationResult,
  TimelineResult,
  UpdateObservationResult,
} from '../observations/index.js';
