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
/** Lines written between two looks at the log file's size when this logger's own lines could not have filled it. */
export const SIZE_LOOK_EVERY = 32;

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

  // The file's size as last seen, and what this logger appended since: the size is looked at again when those could
  // pass `maxBytes`, or after SIZE_LOOK_EVERY lines (other processes append to the same file: hook processes, the
  // server). A `stat` per line was ~10 µs of a line's cost in the server, after the hook's answer but on its CPU.
  let seenSize = 0;
  let appended = 0;
  let linesSinceLook = SIZE_LOOK_EVERY;

  const rotateIfFull = (adding: number): void => {
    if (linesSinceLook < SIZE_LOOK_EVERY && seenSize + appended + adding <= maxBytes) return;
    linesSinceLook = 0;
    appended = 0;
    try {
      seenSize = statSync(file).size;
      if (seenSize > maxBytes) {
        renameSync(file, `${file}.1`);
        seenSize = 0;
      }
    } catch {
      // No file yet: nothing to rotate.
      seenSize = 0;
    }
  };

  const write = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (LOG_LEVELS.indexOf(level) < minimum) return;
    try {
      if (options.within !== undefined && !existsSync(options.within)) return;
      const text = `${JSON.stringify({ t: now().toISOString(), level, msg: scrub(message), ...(scrub(fields ?? {}) as object) })}\n`;
      const bytes = Buffer.byteLength(text);
      rotateIfFull(bytes);
      try {
        appendFileSync(file, text, { mode: 0o600 });
      } catch (error) {
        // The folder is made when a line finds it missing (not looked at before every line).
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return;
        mkdirSync(options.dir, { recursive: true, mode: 0o700 });
        appendFileSync(file, text, { mode: 0o600 });
      }
      appended += bytes;
      linesSinceLook++;
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
