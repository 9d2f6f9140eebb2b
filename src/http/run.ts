import type { Caller, OperationName } from '../services/ops/index.js';

/**
 * Runs one operation of services/ops for the HTTP API (in the warm server: its store, index and model) as the
 * `user` actor. The HTTP surface never reaches a service another way.
 */
export type RunOperation = (name: OperationName, params: unknown) => Promise<unknown>;

/**
 * Who HTTP requests are: a person (the Go engram's clients are people's scripts and tools) through `http`, from no
 * particular folder. Its writes are audited as `{by: 'user', via: 'http'}` and `engram undo` takes them back.
 */
export const HTTP_CALLER: Caller = { actor: 'user', via: 'http', cwd: '', agent: 'unknown', project: null };
