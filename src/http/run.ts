import type { Actor, Caller, OperationName } from '../services/ops/index.js';

/**
 * Runs one operation of services/ops for the HTTP API (in the warm server: its store, index and model) as the
 * `user` actor. The HTTP surface never reaches a service another way.
 */
export type RunOperation = (name: OperationName, params: unknown) => Promise<unknown>;

/** Where HTTP requests come from: no particular folder or agent. */
export const HTTP_CALLER: Caller = { cwd: '', agent: 'unknown', project: null };

/**
 * Who HTTP requests are: a person (the Go engram's clients are people's scripts and tools) through `http`. Every write
 * is audited as `{by: 'user', via: 'http'}` and `engram undo` takes it back.
 */
export const HTTP_ACTOR: Actor = { by: 'user', via: 'http' };
