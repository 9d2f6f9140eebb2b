import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { EngramError, STATUSES, type EngramStatus } from '../core/index.js';
import type { EngramRef } from '../services/index.js';

/** Parses `<id>`: a positive integer id or an engram uid. */
export function parseRef(value: string): EngramRef {
  if (/^\d+$/.test(value) && Number(value) > 0 && Number.isSafeInteger(Number(value))) return Number(value);
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return value.toLowerCase();
  throw new EngramError('USAGE', `engram id must be a positive integer or a uid, got '${value}'`);
}

/** commander option parser for non-negative integers. */
export function integerOption(name: string, min = 0): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min) {
      throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}, got '${value}'`);
    }
    return Number(value);
  };
}

/** commander option parser for a number in [min, max]. */
export function numberOption(name: string, min: number, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (value.trim() === '' || !Number.isFinite(number) || number < min || number > max) {
      throw new InvalidArgumentError(`${name} must be a number from ${min} to ${max}, got '${value}'`);
    }
    return number;
  };
}

/** Reads a file named on the command line (relative to the cwd): NOT_FOUND when absent, IO otherwise. */
export function readInputFile(cwd: string, file: string): string {
  const path = resolve(cwd, file);
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new EngramError(code === 'ENOENT' ? 'NOT_FOUND' : 'IO', `cannot read ${path}: ${(error as Error).message}`);
  }
}

/** Parses a JSON option value (`--prerequisites`); the literal `null` clears. */
export function parseJsonOption(flag: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new EngramError('INVALID_INPUT', `${flag} is not valid JSON: ${(error as Error).message}`);
  }
}

/** All of a stream (stdin) as UTF-8 text. */
export async function readStdin(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses `--status`: a comma-separated list of review states, or `all`. */
export function parseStatuses(value: string): EngramStatus[] {
  const items = value.split(',').map((item) => item.trim().toLowerCase()).filter(Boolean);
  if (items.includes('all')) return [...STATUSES];
  const unknown = items.filter((item) => !(STATUSES as readonly string[]).includes(item));
  if (unknown.length || items.length === 0) {
    throw new EngramError('USAGE', `--status takes ${STATUSES.join(', ')} or all (comma-separated), got '${value}'`);
  }
  return items as EngramStatus[];
}
