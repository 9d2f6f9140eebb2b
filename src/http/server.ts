/**
 * Listening: the Hono app on a Node HTTP server with request and header timeouts, and a clear answer when the port is
 * taken (the Go engram still running on 7437 is the usual case) instead of an error that would stop the process.
 * @module
 */
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Binding } from './security.js';

/** How a listener ended up. */
export type HttpState =
  | { state: 'listening'; url: string; host: string; port: number }
  | { state: 'port_in_use'; host: string; port: number; holder: string; detail: string }
  | { state: 'error'; host: string; port: number; detail: string };

/** A running listener. */
export interface HttpListener {
  server: Server;
  close(): Promise<void>;
}

/** A whole request (headers and body) must arrive within this; a slow client cannot hold a socket forever. */
const REQUEST_TIMEOUT_MS = 120_000;
const HEADERS_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_MS = 5_000;

const urlOf = (host: string, port: number): string => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * Who answers on a taken port: another Engram server (its `x-engram` header), the Go engram (`/health` says
 * `"service": "engram"` without that header), or another program.
 */
export async function whoHolds(host: string, port: number): Promise<string> {
  try {
    const response = await fetch(`${urlOf(host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host, port)}/health`, { signal: AbortSignal.timeout(1_500) });
    const ours = response.headers.get('x-engram');
    if (ours) return `another Engram server (version ${ours}, another ENGRAM_HOME)`;
    const json = (await response.json().catch(() => null)) as { service?: string; version?: string } | null;
    if (json?.service === 'engram') return `the Go engram (version ${json.version ?? 'unknown'})`;
    return 'another program';
  } catch {
    return 'another program';
  }
}

/** Starts listening; resolves with the state instead of throwing (a taken port is reported, not fatal). */
export function listenHttp(app: Hono, binding: Binding): Promise<{ state: HttpState; listener: HttpListener | null }> {
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  const close = (): Promise<void> =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return new Promise((resolve) => {
    const onError = async (error: NodeJS.ErrnoException): Promise<void> => {
      if (error.code === 'EADDRINUSE') {
        const holder = await whoHolds(binding.host, binding.port);
        resolve({
          state: {
            state: 'port_in_use',
            host: binding.host,
            port: binding.port,
            holder,
            detail: `${binding.host}:${binding.port} is in use by ${holder}; the HTTP API is off until it is free (stop it, or move ours: http.port in config.json or ENGRAM_PORT)`,
          },
          listener: null,
        });
      } else {
        resolve({ state: { state: 'error', host: binding.host, port: binding.port, detail: `cannot listen on ${binding.host}:${binding.port}: ${error.message}` }, listener: null });
      }
    };
    const failed = (error: NodeJS.ErrnoException): void => void onError(error);
    server.once('error', failed);
    server.listen(binding.port, binding.host, () => {
      server.off('error', failed);
      server.on('error', () => {});
      const address = server.address();
      if (address && typeof address === 'object') binding.port = address.port;
      resolve({ state: { state: 'listening', url: urlOf(binding.host, binding.port), host: binding.host, port: binding.port }, listener: { server, close } });
    });
  });
}
