/**
 * Reading requests the way the Go engram does, so its clients see the same answers: `?limit=` that is not a number
 * falls back to the default (`strconv.Atoi`), `?hard=` and `?compact=` accept what `strconv.ParseBool` accepts and
 * ignore anything else, ids must be base-10 integers, and a body that does not decode is `invalid json: <why>`.
 * @module
 */
import type { Context } from 'hono';
import * as z from 'zod';
import { HttpError } from './errors.js';
import { bodyText } from './limits.js';

/** `strconv.Atoi`: an optional sign and digits; anything else (or nothing) is the default. */
export const QueryInt = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((value) => (value !== undefined && /^[+-]?\d{1,15}$/.test(value) ? Number(value) : fallback));

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** `strconv.ParseBool`, with the default for anything it rejects (`?compact=yes` is ignored, as in Go). */
export const QueryBool = (fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((value) => (value !== undefined && TRUE.has(value) ? true : value !== undefined && FALSE.has(value) ? false : fallback));

/** An optional text parameter (empty = absent). */
export const QueryText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value === '' ? undefined : value));

/**
 * Parses the query with a schema of string parameters (unknown parameters are ignored, as in Go). Routes build their
 * schema once, at load: building a zod object per request (and compiling its parser) cost more than the parse.
 */
export function query<T extends z.ZodObject>(c: Context, schema: T): z.infer<T> {
  return schema.parse(c.req.query());
}

const INT64_MAX = 9_223_372_036_854_775_807n;

/**
 * A path or query id as the Go engram parses it (`strconv.ParseInt(s, 10, 64)`): `message` (400) unless it is a
 * base-10 int64. Ids beyond what we can store are valid numbers that match nothing (0 is returned: never an id).
 */
export function parseId(raw: string | undefined, message: string, code = 'INVALID_ID'): number {
  if (raw === undefined || !/^[+-]?\d{1,19}$/.test(raw)) throw new HttpError(400, code, message);
  const big = BigInt(raw);
  if (big > INT64_MAX || big < -INT64_MAX - 1n) throw new HttpError(400, code, message);
  return big > BigInt(Number.MAX_SAFE_INTEGER) || big < 1n ? 0 : Number(big);
}

/** Describes the first problem of a failed parse in a Go-like way (`field: expected string, received number`). */
function why(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid body';
  return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}

/**
 * The JSON body parsed with `schema`, or 400 `invalid json: <why>` (an empty body is `invalid json: EOF`, as Go's
 * decoder says). `lenient` bodies that do not decode are read as `{}` (the Go engram ignores them on `…/end`).
 */
export async function body<T extends z.ZodType>(c: Context, schema: T, options: { lenient?: boolean } = {}): Promise<z.infer<T>> {
  const text = await bodyText(c);
  let raw: unknown;
  try {
    if (text.trim() === '') throw new Error('EOF');
    raw = JSON.parse(text);
  } catch (error) {
    if (options.lenient) raw = {};
    else throw new HttpError(400, 'INVALID_JSON', `invalid json: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  if (options.lenient) return schema.parse({});
  throw new HttpError(400, 'INVALID_JSON', `invalid json: ${why(parsed.error)}`);
}

/** Go's JSON decoding into a struct: an object whose listed fields have the right types (null = absent); other keys ignored. */
export const GoBody = <T extends z.ZodRawShape>(shape: T) => z.looseObject(shape);
/** An optional string field (Go's `string`: null and absent both mean empty). */
export const Str = z.string().nullish().transform((value) => value ?? '');
/** A Go `*string` field: absent or null is "not given", distinct from "". */
export const PtrStr = z.string().nullish().transform((value) => value ?? undefined);
