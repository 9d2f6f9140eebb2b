import { InvalidArgumentError } from 'commander';
import { EngramError } from '../core/index.js';
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

/** Parses a JSON option value (`--prerequisites`); the literal `null` clears. */
export function parseJsonOption(flag: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new EngramError('INVALID_INPUT', `${flag} is not valid JSON: ${(error as Error).message}`);
  }
}
