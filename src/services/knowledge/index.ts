/**
 * Living knowledge docs (seed 002): the project config, the schema linter, stable ids, graveyards, the L0 briefing,
 * bootstrap, and the knowledge server behind `engram run` (docs/KNOWLEDGE.md).
 * @module
 */
export { KnowledgeConfigSchema, parseKnowledgeConfig, loadKnowledgeConfig, docPaths, CONFIG_FILE } from './config.js';
export type { KnowledgeConfig, DocPaths } from './config.js';
export { LINT_RULES } from './lint.js';
export type { Violation, LintRule } from './lint.js';
export { createFoldAgent, foldArgv } from './agent.js';
export type { FoldAgent } from './agent.js';
export type { DispatchEvent } from './dispatch.js';
export { describeIds } from './chunk.js';
export type { RunEvent } from './run.js';
export { readDocEntry, explainConcept } from './entry.js';
export type { DocEntry, ConceptExplanation } from './entry.js';
export { briefingForSession } from './session-start.js';
export {
  lintProject,
  projectStatus,
  initProject,
  foldProject,
  runProject,
  reviewChunk,
  compactProject,
  correctEntry,
  conceptLiveness,
} from './project.js';
export type { LintReport, StatusReport, InitMode, InitReport, AgentFactory, KnowledgeEnv } from './project.js';
