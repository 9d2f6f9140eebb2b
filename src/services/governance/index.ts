/**
 * Governance foundations shared by every surface: the review policy (tiers, admission, freshness), the audit log and
 * its journal, and conflict detection. What a person alone may do with them — approve, reject, forget, undo — is in
 * `services/gate/`, which this barrel and the services barrel never re-export (docs/GOVERNANCE.md).
 * @module
 */
export {
  DEFAULT_TIERS,
  DEFAULT_DECAY,
  PERSON_LEARNED,
  governancePolicy,
  classifyTier,
  admit,
  parseDecay,
  freshness,
  staleAfter,
  isStale,
  injectable,
} from './policy.js';
export type { Tier, TierVerdict, GovernancePolicy, Admission, Freshness } from './policy.js';
export {
  ACTOR_KINDS,
  CLI_USER,
  API_USER,
  MCP_AGENT,
  BOOKKEEPING_COLUMNS,
  LEARNING_COLUMNS,
  ChangeSet,
  audited,
  canonicalJson,
  changedColumns,
  currentRow,
  entriesAfter,
  entryByToken,
  entryBySeq,
  entryHash,
  listAudit,
  rowWriter,
  undoneBy,
  writeAuditEntry,
} from './audit.js';
export type { Actor, ActorKind, AuditEntry, AuditMeta, AuditQuery, Audited, Row, RowChange } from './audit.js';
export { journalPath, journalLine, syncJournal, verifyJournal } from './journal.js';
export type { JournalSync, JournalProblem, JournalReport } from './journal.js';
export { analyse, compareTexts, ruleVerdict, subjectOverlap, llmVerdict, CONFLICT_RULES, CONFLICT_SYSTEM } from './conflicts.js';
export type { Analysis, ConflictSignal, ConflictVerdict } from './conflicts.js';
export { findConflicts, llmVerdicts, recordConflicts, openConflictsOf, resolveConflicts } from './detect.js';
export { TextIndex, contentTerms, hasTextIndex, syncTextIndex, textIndexOf, textIndexReady, warmTextIndex } from './text-index.js';
export type { ConflictCandidate, TextIndexBuilder, TextIndexData } from './text-index.js';
export { runTextIndexWorker, textIndexWorkerBuilder } from './text-index-worker.js';
export type { ConflictProbe, FoundConflict, PrecomputedVerdicts } from './detect.js';
export { recordSources, sourcesOf, engramsWithSpans } from './sources.js';
export type { EngramSource, StoredSource, SourceFile, SourceSpan } from './sources.js';
