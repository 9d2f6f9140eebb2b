import type { OperationName } from '../services/ops/index.js';

/**
 * Runs one operation of services/ops for the HTTP API (in the warm server: its store, index and model) as the
 * `user` actor. The HTTP surface never reaches a service another way.
 */
export type RunOperation = (name: OperationName, params: unknown) => Promise<unknown>;
