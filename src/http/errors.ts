/**
 * Every 4xx and 5xx of the HTTP API is `{"error": "<message>", "code": "<CODE>"}`: the Go engram's `{"error"}` that
 * its clients read, plus a stable code. Never a stack trace: an unexpected failure is logged and answered with a
 * sentence.
 * @module
 */
import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { toEngramError, type ErrorCode, type Logger } from '../core/index.js';

/** An HTTP error a handler or middleware throws: the status, the message clients show, and a stable code. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    /** Close the connection after answering (a body left unread). */
    readonly close = false,
  ) {
    super(message);
  }
}

/** The JSON error body. */
export const errorBody = (message: string, code: string): { error: string; code: string } => ({ error: message, code });

/** The status each error code of the services answers with. */
const STATUS: Partial<Record<ErrorCode, ContentfulStatusCode>> = {
  USAGE: 400,
  INVALID_INPUT: 400,
  UNSUPPORTED_VERSION: 400,
  NOT_FOUND: 404,
  STORE_LOCKED: 503,
  BUSY: 503,
};

/** Answers an error as JSON. */
export function errorResponse(c: Context, error: HttpError): Response {
  if (error.close) c.header('Connection', 'close');
  return c.json(errorBody(error.message, error.code), error.status);
}

/** An error thrown anywhere below as the HTTP error to answer with. */
export function httpErrorOf(thrown: unknown): HttpError {
  if (thrown instanceof HttpError) return thrown;
  if (thrown instanceof HTTPException) {
    return thrown.status === 504 || thrown.status === 503
      ? new HttpError(503, 'TIMEOUT', 'the request took too long and was abandoned')
      : new HttpError(thrown.status as ContentfulStatusCode, 'HTTP_ERROR', thrown.message || 'request refused');
  }
  const error = toEngramError(thrown);
  const status = STATUS[error.code];
  if (status) return new HttpError(status, error.code, error.message);
  return new HttpError(500, error.code === 'INTERNAL' ? 'INTERNAL' : error.code, error.code === 'INTERNAL' ? 'internal error (details in logs/server.log)' : error.message);
}

/** The app's error handler: logs what was not the caller's doing, answers JSON. */
export function onError(log: Logger): ErrorHandler {
  return (thrown, c) => {
    const error = httpErrorOf(thrown);
    if (error.status >= 500) log.error('http request failed', { method: c.req.method, path: c.req.path, status: error.status, error: thrown });
    return errorResponse(c, error);
  };
}

/** No route: 404 as JSON (the Go engram's mux answers plain text, which its clients treat as an error anyway). */
export const notFound: NotFoundHandler = (c) => c.json(errorBody(`no route ${c.req.method} ${c.req.path}`, 'NOT_FOUND'), 404);
