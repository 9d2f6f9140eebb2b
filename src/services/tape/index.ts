/**
 * Tapes: immutable, redacted, zstd-compressed JSONL records of agent sessions, built from the agents' transcripts by
 * deterministic adapters (../shared/seeds/000 "Tapes", "Adapter Model").
 * @module
 */
export * from './events.js';
export {
  ADAPTERS,
  adaptTranscript,
  detectHarness,
  adaptClaude,
  adaptCodex,
  stripLineNumbers,
  parseCodexOutput,
  parsePatch,
  findPatchText,
  tapePath,
  hunkRegion,
  unifiedDiffHunks,
  replayEdits,
  versionSupported,
  parseVersion,
} from './adapters/index.js';
export type { AdapterOptions, AdapterResult, VersionMatrix, EditRegion } from './adapters/index.js';
export { tapeLocation, projectKey } from './location.js';
export type { TapeLocation } from './location.js';
export {
  serializeTape,
  writeTape,
  readTape,
  readTapeText,
  listTapes,
  resolveTape,
  summarizeTape,
  collectGarbage,
  compressText,
  decompressBytes,
  tapeFileName,
  tapeIdOf,
  STALE_TEMP_MS,
} from './store.js';
export type { WrittenTape, TapeFile, TapeSummary, GcReport } from './store.js';
export { recordTranscript, subagentTranscripts } from './record.js';
export type { RecordOptions, RecordResult, RecordedTape } from './record.js';
export { ingestSessions, claudeProjectFolderName, discoverTranscripts, repositoryMatch } from './ingest.js';
export type { IngestOptions, IngestReport, IngestSource, SessionMatch } from './ingest.js';
export { fingerprints, fingerprintSet, anchorsForText, tokenize, jaccard, containment } from './fingerprint.js';
export type { Fingerprint, SpanAnchor, Token } from './fingerprint.js';
export { TAPE_TUNING, INDEX_PROFILES, INDEX_PROFILE_NAMES } from './tuning.js';
export type { FingerprintParams, IndexProfile } from './tuning.js';
export {
  openEvidenceIndex,
  indexTape,
  rebuildIndex,
  indexPathForProfile,
  indexState,
  indexedTapeIds,
} from './evidence-index.js';
export type { EvidenceIndex, OpenIndexOptions, IndexTapeResult, RebuildReport } from './evidence-index.js';
export { walkLineage } from './lineage-walk.js';
export type { WalkOptions, LineageStep, LineageEdge, WalkTruncation } from './lineage-walk.js';
export { stripBoilerplate, BOILERPLATE_BLOCKS } from './continuation.js';
export { explainSpan } from './explain.js';
export type { ExplainSpan, ExplainOptions, ExplainResponse, ExplainResult, ExplainTouch, ExplainWindow } from './explain.js';
export { refreshIndex } from './index-refresh.js';
export type { TapeCatalog, RefreshReport } from './index-refresh.js';
export { explainInFolder, rebuildFolderIndex, readSpan } from './provenance.js';
export { listTapePage, findTape, tapeTimeline, TIMELINE_FIELD_CHARS } from './catalog.js';
export type { TapeEntry, TapePageOptions, TimelineEvent, TimelinePage } from './catalog.js';
export type { FolderOptions } from './provenance.js';
