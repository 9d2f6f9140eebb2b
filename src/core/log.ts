import { appendFileSync, existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { LogLevel } from './env.js';
import { LOG_LEVELS } from './env.js';
import { redactText } from './redact.js';

/** A logger that never throws: logging must not be the reason a hook or command fails. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** The file lines go to. */
  readonly file: string;
}

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** Folder for log files (`$ENGRAM_HOME/logs`). */
  dir: string;
  /** File stem: `hooks` → `hooks.log`. */
  name: string;
  /** Minimum level written. @default "info" */
  level?: LogLevel;
  /** Rotate to `<name>.log.1` past this size. @default 5 MiB */
  maxBytes?: number;
  /** Clock, for tests. @default () => new Date() */
  now?: () => Date;
  /**
   * A folder that must still exist for a line to be written (a long-lived process's `$ENGRAM_HOME`): once it is
   * removed, lines are dropped instead of making the log folder, and with it the deleted home, again.
   */
  within?: string;
}

const MAX_FIELD_CHARS = 2_000;
const MAX_DEPTH = 4;

/** Copies a value for logging: strings redacted and capped, errors flattened, depth bounded. */
function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    const capped = value.length > MAX_FIELD_CHARS ? `${value.slice(0, MAX_FIELD_CHARS)}…[${value.length} chars]` : value;
    return redactText(capped);
  }
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return scrub({ name: value.name, ...(code === undefined ? {} : { code }), message: value.message }, depth);
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[…]';
  if (Array.isArray(value)) return value.slice(0, 50).map((item) => scrub(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrub(item, depth + 1)]));
}

/** Creates a JSON-lines logger writing `{"t","level","msg",…fields}` to `<dir>/<name>.log`, every string redacted. */
export function createLogger(options: LoggerOptions): Logger {
  const file = join(options.dir, `${options.name}.log`);
  const minimum = LOG_LEVELS.indexOf(options.level ?? 'info');
  const maxBytes = options.maxBytes ?? 5 * 1024 * 1024;
  const now = options.now ?? (() => new Date());

  const write = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (LOG_LEVELS.indexOf(level) < minimum) return;
    try {
      if (options.within !== undefined && !existsSync(options.within)) return;
      mkdirSync(options.dir, { recursive: true, mode: 0o700 });
      try {
        if (statSync(file).size > maxBytes) renameSync(file, `${file}.1`);
      } catch {
        // No file yet: nothing to rotate.
      }
      const line = JSON.stringify({ t: now().toISOString(), level, msg: scrub(message), ...(scrub(fields ?? {}) as object) });
      appendFileSync(file, `${line}\n`, { mode: 0o600 });
    } catch {
      // A full disk or read-only home must not turn logging into a failure.
    }
  };

  return {
    file,
    debug: (message, fields) => write('debug', message, fields),
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
  };
}
