import { isEngramError, redactDeep, redactText, toEngramError, type EngramError, type ErrorCode } from '../core/index.js';

/**
 * Exit codes, stable for scripts and agents:
 * 0 success; 1 internal error (a bug); 2 usage or invalid input (including config.json, an unsupported transcript
 * version in strict mode); 3 not found;
 * 4 store, installation or LLM unavailable (locked, newer schema, another program's database, a port or file in use, native module missing, I/O, no LLM, LLM budget
 * spent, LLM call failed).
 */
export const EXIT_CODES: Record<ErrorCode, number> = {
  USAGE: 2,
  INVALID_INPUT: 2,
  UNSUPPORTED_VERSION: 2,
  CONFIG_INVALID: 2,
  NOT_FOUND: 3,
  STORE_UNAVAILABLE: 4,
  STORE_LOCKED: 4,
  STORE_TOO_NEW: 4,
  STORE_FOREIGN: 4,
  BUSY: 4,
  NATIVE_MODULE_MISSING: 4,
  IO: 4,
  LLM_UNAVAILABLE: 4,
  LLM_BUDGET: 4,
  LLM_FAILED: 4,
  INTERNAL: 1,
};

/** Where command output goes. */
export interface Output {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** Prints a result: one line of JSON by default, or the human rendering with --pretty. */
export function emit<T>(out: Output, result: T, pretty: boolean, render: (result: T) => string): void {
  if (pretty) {
    const text = render(result);
    out.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  } else {
    out.stdout.write(`${JSON.stringify(result)}\n`);
  }
}

/**
 * Prints an error on stderr — `{"error":{"code","message","details"?}}` by default, a sentence with --pretty — and
 * returns the exit code. Internal errors keep their stack in the JSON so a bug report has it.
 */
export function reportError(out: Output, error: unknown, pretty: boolean): number {
  const engramError: EngramError = toEngramError(error);
  const code = engramError.code;
  // Messages quote the caller's input (a bad category, a JSONL line); that input may hold a secret.
  const message = redactText(engramError.message);
  if (pretty) {
    out.stderr.write(`engram: ${code === 'INTERNAL' ? 'internal error: ' : ''}${message}\n`);
    const errors = engramError.details?.errors;
    if (Array.isArray(errors)) {
      for (const item of errors.slice(0, 20) as Array<{ line: number; message: string }>) {
        out.stderr.write(`  line ${item.line}: ${redactText(item.message)}\n`);
      }
    }
  } else {
    const payload: Record<string, unknown> = { code, message };
    if (engramError.details) payload.details = redactDeep(engramError.details);
    if (!isEngramError(error) && error instanceof Error && error.stack) payload.stack = error.stack;
    out.stderr.write(`${JSON.stringify({ error: payload })}\n`);
  }
  return EXIT_CODES[code];
}
