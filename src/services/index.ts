/**
 * The services layer: what Engram does, independent of how it is asked (CLI, hooks, later MCP and HTTP).
 * @module
 */
export {
  EngramDraftSchema,
  EngramPatchSchema,
  parseDraft,
  prepareDraft,
  addEngram,
  storeDraft,
  getEngram,
  listEngrams,
  resolveEngram,
  updateEngram,
  deprecateEngram,
  pinEngram,
  deleteEngram,
} from './memory/index.js';
export type {
  EngramDraft,
  PreparedDraft,
  AddResult,
  AddStatus,
  AddOptions,
  EngramRef,
  ListOptions,
  EngramPage,
  EngramPatch,
  EditResult,
  DeleteResult,
} from './memory/index.js';
export { exportEngrams, exportLine, ExportLineSchema, importEngrams } from './transfer/index.js';
export type { ExportLine, ExportOptions, ImportReport, ImportOptions, LineError } from './transfer/index.js';
export { initRepo } from './workspace/index.js';
export type { InitResult } from './workspace/index.js';
export {
  recordSessionStart,
  recordPrompt,
  recordTurnEnd,
  recordSessionEnd,
  recordToolEvent,
  queueSessionEndWork,
  ensureSession,
} from './capture/index.js';
export type { SessionContext, PromptRecord } from './capture/index.js';
export {
  AGENTS,
  SCOPES,
  installHooks,
  uninstallHooks,
  trustHooks,
  hooksStatus,
  inspectClaude,
  inspectCodex,
  findCodexBinary,
  listCodexHooksSync,
  DOCTOR_TIMEOUT_MS,
} from './registration/index.js';
export type {
  Agent,
  Scope,
  HookEntry,
  InstallOptions,
  RegistrationOptions,
  RegistrationResult,
  TrustOptions,
  TrustReport,
  TrustedHook,
  AgentRegistration,
  CodexTrust,
  HookTrust,
  HooksStatus,
  Problem,
  SettingsRegistration,
} from './registration/index.js';
export { storeStatus, runDoctor, checkClaude, checkCodex, CODEX_HOOK_EVENTS } from './health/index.js';
export type { StatusReport, Check, DoctorReport, DoctorOptions } from './health/index.js';
export {
  createSearchEngine,
  SEARCH_MODES,
  abstainReason,
  reciprocalRankFusion,
  passesGates,
  prerequisitesHold,
  currentOs,
  buildBm25Index,
  rebuildBm25Snapshot,
  createBm25Cache,
  loadBm25Snapshot,
  snapshotPath,
  embedPending,
  embedNewEngrams,
  modelStatus,
  reindexVectors,
  TUNING,
  searchTuning,
  runRetrievalBench,
  percentile,
  BenchMemorySchema,
  BenchQuerySchema,
} from './recall/index.js';
export type {
  SearchEngine,
  SearchEngineOptions,
  SearchRequest,
  SearchResponse,
  SearchHit,
  SearchMode,
  AbstainReason,
  RankedList,
  Fused,
  SearchEnvironment,
  SearchFilters,
  ProjectScope,
  Bm25Index,
  Bm25Source,
  EmbedReport,
  CatchUpReport,
  ModelStatus,
  ReindexReport,
  SearchTuning,
  RetrievalReport,
  QualityScores,
} from './recall/index.js';
export {
  injectAtSessionStart,
  injectForQuery,
  promptQuery,
  toolQuery,
  failureQuery,
  patchFiles,
  chooseHits,
  contentTerms,
  relevance,
  withoutGenericWords,
  renderBlock,
  renderItem,
  sessionStartPicks,
  BLOCK_OPEN,
  BLOCK_CLOSE,
  INJECT,
} from './inject/index.js';
export type { InjectDeps, InjectLimits, HookEnvironment, Injection, Chosen, Relevance, RenderedBlock } from './inject/index.js';
export { runPendingJobs, queueAbandonedSessions, JOB_HANDLERS } from './jobs/index.js';
export type { JobContext, JobHandler } from './jobs/index.js';
export { runDemo } from './demo/index.js';
export type { DemoReport, DemoStep } from './demo/index.js';
export {
  LEARNING,
  nextScore,
  nextRelevance,
  minimalTagSubsets,
  autoPinSubset,
  relevanceEvidence,
  relevanceVerdict,
  decidePin,
  applyJudgement,
  recordFeedback,
} from './learn/index.js';
export type {
  JudgementSource,
  TagRelevance,
  TagSetMatches,
  TagSubset,
  RelevanceEvidence,
  RelevanceVerdict,
  PinChange,
  Judgement,
  JudgementResult,
  RelevanceChange,
  FeedbackOptions,
  FeedbackResult,
} from './learn/index.js';
