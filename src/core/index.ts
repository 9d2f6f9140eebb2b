/**
 * The core layer: configuration, environment, redaction, logging, the engram model and the store.
 * Services and surfaces import from here only.
 * @module
 */
export { readEnv, LOG_LEVELS, LogLevelSchema } from './env.js';
export type { EngramEnv, LogLevel } from './env.js';
export { ConfigSchema, loadSettings, loadSettingsLeniently, formatIssues } from './config.js';
export type { Config, Settings } from './config.js';
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
  EngramSchema,
  EngramStatsSchema,
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
export type { Engram, EngramStats, Prerequisites, Source, Scope } from './engram.js';
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
} from './store/index.js';
export type {
  Store,
  OpenStoreOptions,
  Migration,
  MigrationReport,
  Database,
  EngramRepo,
  EngramFilter,
  EngramCounts,
  NewEngram,
  SessionRepo,
  Session,
  SessionSighting,
  UserPrompt,
  Agent,
  StatsRepo,
} from './store/index.js';
