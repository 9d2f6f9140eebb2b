/**
 * The HTTP app: shared middleware (errors as JSON, token, Host and Origin checks, body caps, deadlines), then the
 * route groups. The Go engram's API is the root group; other groups (the viewer, issue 17) mount under their own path
 * with their own auth middleware inside their sub-app and inherit everything here.
 * @module
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { VERSION, type Logger } from '../core/index.js';
import { notFound, onError } from './errors.js';
import { goApi } from './go-api.js';
import { bodyCap, deadline, IMPORT_MAX_BYTES } from './limits.js';
import type { RunOperation } from './run.js';
import { guardHost, guardOrigin, guardToken, type Binding } from './security.js';

/** A group of routes mounted under `path` (e.g. `/ui` for the viewer), after the shared middleware. */
export interface RouteGroup {
  path: string;
  app: Hono;
}

/** Options of {@link createHttpApp}. */
export interface HttpAppOptions {
  /** Runs an operation of services/ops as the HTTP caller. */
  run: RunOperation;
  log: Logger;
  /** Where the server listens (filled in when it does): Host and Origin are checked against it. */
  binding: Binding;
  /** Required on every request when set (a non-loopback listener). */
  token?: string | undefined;
  /** A request still running after this long is answered 503; an import gets four times as long. @default 30000 */
  timeoutMs?: number;
  /** More route groups (each with its own auth inside). */
  groups?: RouteGroup[];
}

/** Logs each request at debug level and every 5xx at warn, with its time. */
function requestLog(log: Logger): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const fields = { method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round((performance.now() - started) * 10) / 10 };
    if (c.res.status >= 500) log.warn('http request answered with an error', fields);
    else log.debug('http request', fields);
  };
}

/** Builds the app. */
export function createHttpApp(options: HttpAppOptions): Hono {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const app = new Hono();
  app.onError(onError(options.log));
  app.notFound(notFound);
  app.use('*', async (c, next) => {
    // Set before the route answers, so it is part of the response as built: setting a header on a finished response
    // makes @hono/node-server rebuild it as a web-standard Response (a third of this surface's time per request).
    c.header('x-engram', VERSION);
    await next();
  });
  app.use('*', requestLog(options.log));
  if (options.token) app.use('*', guardToken(options.token));
  app.use('*', guardHost(options.binding));
  app.use('*', guardOrigin(options.binding));
  app.use('*', async (c, next) => (c.req.path === '/import' && c.req.method === 'POST' ? deadline(timeoutMs * 4)(c, next) : deadline(timeoutMs)(c, next)));
  // Import has its own, larger cap (go-api.ts); every other body is capped here.
  app.use('*', async (c, next) => (c.req.path === '/import' && c.req.method === 'POST' ? next() : bodyCap()(c, next)));
  app.route('/', goApi(options.run));
  for (const group of options.groups ?? []) app.route(group.path, group.app);
  return app;
}

export { IMPORT_MAX_BYTES };
