/**
 * Body caps and deadlines. A body over its cap is refused without being read (by Content-Length) or as soon as the
 * count passes it (chunked): 413 past 1 MiB on every route, except `POST /import`, which takes the Go engram's
 * 50 MiB and answers 400 past it, as the Go engram does. A request still running at its deadline is answered 503.
 * @module
 */
import type { Context, MiddlewareHandler } from 'hono';
import { timeout } from 'hono/timeout';
import { HttpError } from './errors.js';

/** Bodies of every route but import. */
export const BODY_MAX_BYTES = 1024 * 1024;
/** `POST /import`: the Go engram's `http.MaxBytesReader(w, r.Body, 50<<20)`. */
export const IMPORT_MAX_BYTES = 50 * 1024 * 1024;

/** Bodies already read by {@link capBody}, by request. */
const bodies = new WeakMap<Request, string>();

/** The request's body as text (read once, within its cap, by {@link capBody}). */
export async function bodyText(c: Context): Promise<string> {
  return bodies.get(c.req.raw) ?? (await c.req.text());
}

/**
 * Reads the body of a request that may have one, refusing it with `tooLarge()` past `maxBytes`: at once when the
 * Content-Length says so, else as soon as the bytes read pass it (the rest is never read; the connection is closed).
 */
export function capBody(maxBytes: number, tooLarge: () => HttpError): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > maxBytes) throw tooLarge();
    const reader = c.req.raw.body?.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (reader) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > maxBytes) {
          await reader.cancel().catch(() => {});
          throw tooLarge();
        }
        chunks.push(value);
      }
    }
    bodies.set(c.req.raw, Buffer.concat(chunks).toString('utf8'));
    return next();
  };
}

/** The 1 MiB cap: 413. */
export const bodyCap = (maxBytes = BODY_MAX_BYTES): MiddlewareHandler =>
  capBody(maxBytes, () => new HttpError(413, 'BODY_TOO_LARGE', `the request body is larger than ${maxBytes / 1024 / 1024} MiB`, true));

/** The import cap: the Go engram's answer past 50 MiB. */
export const importCap = (maxBytes = IMPORT_MAX_BYTES): MiddlewareHandler =>
  capBody(maxBytes, () => new HttpError(400, 'BODY_TOO_LARGE', 'failed to read body: http: request body too large', true));

/** Answers 503 when the handler has not answered within `ms` (work in progress on the store still completes). */
export const deadline = (ms: number): MiddlewareHandler => timeout(ms, () => new HttpError(503, 'TIMEOUT', `the request took longer than ${ms} ms and was abandoned`) as never);
