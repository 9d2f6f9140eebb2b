export { openStore, storeSize } from './store.js';
export type { Store, OpenStoreOptions } from './store.js';
export { SCHEMA_VERSION, MIGRATIONS, migrate, schemaVersion } from './migrations.js';
export type { Migration, MigrationReport } from './migrations.js';
export { loadVectorExtension, loadSqlite, openDatabase } from './database.js';
export type { Database } from './database.js';
export type { EngramRepo, EngramFilter, EngramCounts, NewEngram } from './engrams.js';
export type { SessionRepo, Session, SessionSighting, UserPrompt, Agent } from './sessions.js';
export type { StatsRepo } from './stats.js';
