import type { CliContext } from './context.js';

/** What a command handler returns: the JSON result and how to show it to a person. */
export interface CommandOutcome<T = unknown> {
  result: T;
  pretty: () => string;
  /** Exit code when the command itself reports a non-fatal problem (doctor). @default 0 */
  exitCode?: number;
}

/**
 * Wraps a handler as a commander action: builds the context, prints the outcome. Commands receive it from
 * program.ts (which registers them), so they depend on this type, not on the program.
 */
export type Action = <A extends unknown[]>(
  handler: (context: CliContext, ...args: A) => CommandOutcome | Promise<CommandOutcome>,
) => (...args: unknown[]) => Promise<void>;
