export { OPERATIONS, OPERATION_NAMES, CallerSchema, operation, runOperation } from './catalog.js';
export type { Caller, OpContext, Operation, OperationName } from './catalog.js';
