export {
  DEDUPE_WINDOW_MINUTES,
  goProjectKey,
  goScope,
  goTopicKey,
  goContentHash,
  titleKey,
  defaultSessionId,
  suggestTopicKey,
  extractLearnings,
} from './rules.js';
export { observationView, derivedTitle } from './view.js';
export type { ObservationView } from './view.js';
export {
  canonicalProject,
  projectWarning,
  migrateProject,
  mergeProjects,
  MigrateProjectSchema,
  MergeProjectsSchema,
} from './projects.js';
export type { RenameContext, MigrateProjectInput, MigrateProjectResult, MergeProjectsInput, MergeProjectsResult } from './projects.js';
export {
  saveObservation,
  prepareObservation,
  storeObservation,
  savedResult,
  reviewContext,
  updateObservation,
  deleteObservation,
  capturePassive,
  splitBody,
  categoryOf,
  SaveObservationSchema,
  UpdateObservationSchema,
  DeleteObservationSchema,
  PassiveCaptureSchema,
} from './save.js';
export type {
  WriteContext,
  PreparedObservation,
  StoredObservation,
  UpdateObservationResult,
  SaveObservationInput,
  SaveObservationResult,
  UpdateObservationInput,
  DeleteObservationInput,
  PassiveCaptureInput,
  PassiveCaptureResult,
} from './save.js';
export {
  startSession,
  endSession,
  saveSessionSummary,
  savePrompt,
  recentSessions,
  recentPrompts,
  searchPrompts,
  ftsQuery,
  StartSessionSchema,
  EndSessionSchema,
  SessionSummarySchema,
  SavePromptSchema,
  PROMPT_CHARS,
} from './sessions.js';
export type { StartSessionInput, EndSessionInput, SessionSummaryInput, SavePromptInput } from './sessions.js';
export {
  getObservation,
  recentObservations,
  timeline,
  formatContext,
  observationStats,
  searchObservations,
  visibleTo,
  statusLabel,
  preview,
  CONTEXT_LIMIT,
  SEARCH_MAX,
  RecentObservationsSchema,
  TimelineSchema,
  ContextSchema,
  SearchObservationsSchema,
} from './read.js';
export type {
  ReadOptions,
  RecentObservationsInput,
  TimelineInput,
  TimelineResult,
  ContextInput,
  SearchObservationsInput,
  ObservationHit,
  ObservationSearch,
} from './read.js';
