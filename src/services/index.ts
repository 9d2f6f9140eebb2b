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
export { recordSessionStart, recordPrompt, recordTurnEnd, recordSessionEnd } from './capture/index.js';
export type { SessionContext, PromptRecord } from './capture/index.js';
export { storeStatus, runDoctor, checkClaude, checkCodex, CODEX_HOOK_EVENTS } from './health/index.js';
export type { StatusReport, Check, DoctorReport, DoctorOptions } from './health/index.js';
