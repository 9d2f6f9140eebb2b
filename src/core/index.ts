/**
 * The core layer: configuration, environment, redaction, logging, the engram model and the store.
 * Services and surfaces import from here only.
 * @module
 */
export { readEnv, httpToken, LOG_LEVELS, LogLevelSchema } from './env.js';
export type { EngramEnv, LogLevel } from './env.js';
export { configSchema, EMBEDDER_PROVIDERS, isLoopbackHost, loadSettings, loadSettingsLeniently, formatIssues } from './config.js';
export type { Config, EmbedderProvider, Settings } from './config.js';
export { homePaths } from './paths.js';
export { VERSION } from './version.js';
export type { HomePaths } from './paths.js';
export { EngramError, isEngramError, toEngramError } from './errors.js';
export type { ErrorCode } from './errors.js';
export { isOnlyRedacted, redact, redactDeep, redactText, sanitizeText, stripInvisible } from './redact.js';
export type { Redaction, RedactionKind } from './redact.js';
export { createLogger } from './log.js';
export type { Logger, LoggerOptions } from './log.js';
export { findRepo } from './repo.js';
export type { RepoInfo } from './repo.js';
export {
  detectEnvironment,
  clearEnvironmentMemory,
  osName,
  parseRemoteUrls,
  stripCredentials,
  claudeStatePath,
  BUILTIN_DEPENDENCY_TAGS,
  BUILTIN_DIR_PATTERNS,
  BUILTIN_FILE_MARKERS,
  BUILTIN_REMOTE_PATTERNS,
} from './environment/index.js';
export type { DetectedEnvironment, EnvironmentAgent, EnvironmentOptions, TagRules } from './environment/index.js';
export { writeFileAtomic, writeFileAtomicWith, syncFolder } from './atomic-file.js';
export {
  engramSchema,
  engramStatsSchema,
  STATUSES,
  StatusSchema,
  LEARNED_BY,
  LearnedBySchema,
  LIVENESS,
  LivenessSchema,
  PrerequisitesSchema,
  SourceSchema,
  ScopeSchema,
  LIMITS,
  normalizeCategory,
  normalizeTags,
  normalizeTopicKey,
  normalizeProject,
  normalizePrerequisites,
  defaultScope,
  contentHash,
} from './engram.js';
export type { Engram, EngramStats, Prerequisites, Source, Scope, EngramStatus, LearnedBy, Liveness } from './engram.js';
export {
  openStore,
  storeSize,
  SCHEMA_VERSION,
  MIGRATIONS,
  migrate,
  schemaVersion,
  loadVectorExtension,
  loadSqlite,
  openDatabase,
  useBundledSqlite,
  KNN_MAX_K,
  UNUSABLE_ANSWER,
} from './store/index.js';
export type {
  Store,
  OpenStoreOptions,
  Migration,
  MigrationReport,
  Database,
  EngramRepo,
  RecallFields,
  SearchableFields,
  EngramFilter,
  EngramCounts,
  NewEngram,
  StatusVisibility,
  SessionRepo,
  Session,
  SessionSighting,
  UserPrompt,
  Agent,
  StatsRepo,
  TagRelevanceRow,
  RelevanceCause,
  NewRelevanceChange,
  RelevanceHistoryRow,
  VectorRepo,
  VectorSpace,
  VectorSpaceInfo,
  PendingVector,
  Neighbour,
  SearchChanges,
  VectorWrite,
  SearchState,
  ActivityRepo,
  JudgedByList,
  ShownRecord,
  ToolEventRecord,
  SessionAuditRecord,
  JudgementRecord,
  EvaluationState,
  JobRepo,
  Job,
  JobKind,
} from './store/index.js';
export {
  loadEmbedder,
  loadEmbedderPool,
  runEmbedWorker,
  defaultEmbedWorkers,
  bulkEmbedWorkers,
  POOL_MIN_TEXTS,
  POOL_TEXTS_PER_WORKER,
  resolveEmbedder,
  choiceForModel,
  readPulledModels,
  modelDirectory,
  inspectModelFolder,
  pullModel,
  hubReachable,
  knownModel,
  DEFAULT_MODEL,
  createHashingEmbedder,
  useLiteInstalled,
  USE_LITE_DIM,
  quietly,
  vectorModelId,
  embeddingText,
  EMBED_TEXT_VERSION,
} from './embed/index.js';
export type {
  Embedder,
  EmbedderPool,
  PoolOptions,
  EmbedderKind,
  EmbedderSpec,
  EmbedderChoice,
  PulledModels,
  PullOptions,
  PullResult,
  ModelManifest,
  ProxySettings,
  DownloadEvent,
} from './embed/index.js';
export { parseTranscript, readTranscript, detectFormat } from './transcript/index.js';
export {
  CODEX_INJECTED,
  isObject as isJsonObject,
  str as stringOrNull,
  parseArguments as parseToolArguments,
} from './transcript/index.js';
export type { Json as JsonObject } from './transcript/index.js';
export type {
  Transcript,
  TranscriptEvent,
  TranscriptFormat,
  TranscriptMessage,
  TranscriptToolCall,
  TranscriptToolResult,
  TranscriptCompaction,
} from './transcript/index.js';
export {
  createLlmClient,
  resolveLlm,
  estimateTokens,
  extractJsonObject,
  usageDay,
  DEFAULT_MAX_TOKENS,
  LLM_CHILD_VARIABLE,
} from './llm/index.js';
export type { LlmClient, LlmClientOptions, LlmRequest, LlmResponse, LlmUsage, LlmChoice, LlmLimits } from './llm/index.js';
export { LLM_PROVIDERS } from './config.js';
export type { LlmProviderSetting } from './config.js';
export type { LlmUsageRepo, LlmUsageTotals } from './store/index.js';
export type { ExtractionRepo, ExtractionState } from './store/index.js';
export type { ObservationRepo, ObservationStats, ProjectRename, ProjectRows, SessionWithCount } from './store/index.js';
