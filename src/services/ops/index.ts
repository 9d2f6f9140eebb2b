export { CallerSchema } from './caller.js';
export type { Caller } from './caller.js';
export { OPERATIONS, OPERATION_NAMES, operation, runOperation } from './catalog.js';
export type { OpContext, Operation, OperationName } from './catalog.js';
// What a surface needs to run the operations itself and to read their results (the MCP surface imports services
// only through this module: nothing reachable from here may promote or approve).
export { createSearchEngine, searchTuning } from '../recall/index.js';
export { workEnvironment } from '../inject/index.js';
export type { SearchEngine, SearchRequest, SearchResponse } from '../recall/index.js';
export type {
  MergeProjectsResult,
  ObservationHit,
  ObservationSearch,
  ObservationView,
  PassiveCaptureResult,
  SaveObservationResult,
  TimelineResult,
} from '../observations/index.js';
