/**
 * The human gate: the only code that makes an engram active after it was written (approve), refuses or retires it
 * (reject), removes it with its history of learning (forget), or reverses an operation (undo). It is deliberately NOT
 * re-exported from src/services/index.ts, the barrel every surface imports: the CLI imports it directly (and the HTTP
 * viewer for a person will), while the MCP server, the hook handlers and the warm server's socket dispatcher cannot
 * reach it — test/services/gate/boundary.test.ts proves that from the import graph. Every function here also refuses
 * an actor that is not a person.
 * @module
 */
export { approveEngrams, rejectEngrams, forgetEngrams } from './decide.js';
export type { ApproveOptions, Decision, DecisionResult, GateOptions } from './decide.js';
export { undoOperation } from './undo.js';
export type { UndoResult } from './undo.js';
