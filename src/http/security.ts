/**
 * The checks every request passes before a route sees it. The API listens on loopback, but a web page in the user's
 * browser can still reach loopback: a request whose `Host` is not the name and port we listen on is a DNS-rebinding
 * attempt (its page's origin resolves to 127.0.0.1), and a request from another origin must not write. There is no
 * CORS: a browser never gets permission to read an answer cross-origin. A non-loopback listener requires a bearer
 * token on every request.
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { HttpError } from './errors.js';

/** Where the API listens, filled in once it does (port 0 becomes the port the system chose). */
export interface Binding {
  host: string;
  port: number;
  /** Listening on a non-loopback address with a token. */
  remote: boolean;
}

/** The `Host` values that name this listener: every loopback name with its port (no port only on port 80). */
export function allowedHosts(binding: Binding): Set<string> {
  const names = ['127.0.0.1', 'localhost', '[::1]'];
  if (binding.host !== '127.0.0.1' && binding.host !== 'localhost' && binding.host !== '::1') names.push(binding.host.includes(':') ? `[${binding.host}]` : binding.host);
  const hosts = new Set(names.map((name) => `${name}:${binding.port}`.toLowerCase()));
  if (binding.port === 80) names.forEach((name) => hosts.add(name.toLowerCase()));
  return hosts;
}

/** {@link allowedHosts}, computed again only when the binding changes (it is filled in once the server listens). */
function hostsOf(binding: Binding): () => Set<string> {
  let key = '';
  let hosts = new Set<string>();
  return () => {
    const now = `${binding.host}|${binding.port}`;
    if (now !== key) {
      key = now;
      hosts = allowedHosts(binding);
    }
    return hosts;
  };
}

/** Refuses a request whose Host header does not name this listener (loopback listeners only; remote ones use a token). */
export function guardHost(binding: Binding): MiddlewareHandler {
  const hosts = hostsOf(binding);
  return async (c, next) => {
    if (!binding.remote) {
      const host = (c.req.header('host') ?? '').trim().toLowerCase();
      if (!hosts().has(host)) {
        throw new HttpError(403, 'FORBIDDEN_HOST', `Host ${JSON.stringify(host)} is not this server (${binding.host}:${binding.port}); requests through another name are refused`);
      }
    }
    await next();
  };
}

const SAFE = new Set(['GET', 'HEAD']);

/**
 * Refuses cross-origin browser requests: any request whose `Origin` is not this server's own, and writes a browser
 * marks as cross-site (`Sec-Fetch-Site`) even without an Origin. Programs (curl, the Go engram's clients) send neither.
 */
export function guardOrigin(binding: Binding): MiddlewareHandler {
  const hosts = hostsOf(binding);
  return async (c, next) => {
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      let host: string | null = null;
      try {
        const url = new URL(origin);
        host = url.protocol === 'http:' ? url.host.toLowerCase() : null;
      } catch {
        host = null;
      }
      if (host === null || (!hosts().has(host) && !binding.remote)) {
        throw new HttpError(403, 'CROSS_ORIGIN', `requests from ${origin} are refused: this API serves programs on this machine, not web pages`);
      }
    }
    const site = c.req.header('sec-fetch-site');
    if (!SAFE.has(c.req.method) && (site === 'cross-site' || site === 'same-site')) {
      throw new HttpError(403, 'CROSS_ORIGIN', 'a cross-site browser request may not write');
    }
    await next();
  };
}

/** Requires `Authorization: Bearer <token>` (compared in constant time). */
export function guardToken(token: string): MiddlewareHandler {
  const expected = Buffer.from(token);
  return async (c, next) => {
    const given = Buffer.from((c.req.header('authorization') ?? '').replace(/^Bearer\s+/i, ''));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new HttpError(401, 'UNAUTHORIZED', 'a valid token is required: Authorization: Bearer <token>');
    }
    await next();
  };
}
