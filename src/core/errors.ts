/**
 * Stable error codes. Surfaces map them to exit codes (CLI), `isError` results (MCP) or status codes (HTTP);
 * nothing below a surface prints or exits.
 */
export type ErrorCode =
  /** The caller's arguments are wrong (unknown flag, missing value). */
  | 'USAGE'
  /** The caller's data is wrong (bad category, malformed JSONL line, text too long). */
  | 'INVALID_INPUT'
  /** No engram, session or file with that identity. */
  | 'NOT_FOUND'
  /** `$ENGRAM_HOME/config.json` exists but is not valid. */
  | 'CONFIG_INVALID'
  /** The database cannot be opened or written (permissions, corruption, disk full). */
  | 'STORE_UNAVAILABLE'
  /** Another process held the write lock for longer than the busy timeout. */
  | 'STORE_LOCKED'
  /** The database was written by a newer Engram whose schema this one does not know. */
  | 'STORE_TOO_NEW'
  /** The file at the store's path belongs to another program (the Go engram's engram.db): it is left untouched. */
  | 'STORE_FOREIGN'
  /** Something else holds what is needed: a port another program listens on, a database another process has open. */
  | 'BUSY'
  /** A native module (better-sqlite3, sqlite-vec) is missing or was built for another Node. */
  | 'NATIVE_MODULE_MISSING'
  /** A file outside the store could not be read or written. */
  | 'IO'
  /** No LLM is configured (`llm.provider` resolves to `none`): callers use their rule-based fallback. */
  | 'LLM_UNAVAILABLE'
  /** An LLM call would go over a configured cap (calls or tokens, per session or per day). */
  | 'LLM_BUDGET'
  /** The LLM endpoint or command failed: timeout, exhausted retries, an error status, an unusable answer. */
  | 'LLM_FAILED'
  /** A transcript was written by an agent version an adapter does not support, and strict mode was asked for. */
  | 'UNSUPPORTED_VERSION'
  /** A bug: anything we did not anticipate. */
  | 'INTERNAL';

/** The one error class Engram throws on purpose: a stable `code`, a specific message, and `cause` when wrapping. */
export class EngramError extends Error {
  override readonly name = 'EngramError';
  readonly code: ErrorCode;
  /** Machine-readable context (line numbers, ids, paths) that surfaces may print verbatim. */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }
}

/** True for an EngramError with one of the given codes (or any code when none are given). */
export function isEngramError(error: unknown, ...codes: ErrorCode[]): error is EngramError {
  return error instanceof EngramError && (codes.length === 0 || codes.includes(error.code));
}

/** Wraps anything thrown into an EngramError, keeping EngramErrors as they are. */
export function toEngramError(error: unknown): EngramError {
  if (error instanceof EngramError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new EngramError('INTERNAL', message, { cause: error });
}
