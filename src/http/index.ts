/**
 * The HTTP surface: the Go engram's API on 127.0.0.1:7437, served by the warm server (src/server/main.ts).
 * @module
 */
export { createHttpApp } from './app.js';
export type { HttpAppOptions, RouteGroup } from './app.js';
export { listenHttp, whoHolds } from './server.js';
export type { HttpListener, HttpState } from './server.js';
export { allowedHosts } from './security.js';
export type { Binding } from './security.js';
export { BODY_MAX_BYTES, IMPORT_MAX_BYTES, bodyText } from './limits.js';
export { HTTP_ACTOR, HTTP_CALLER } from './run.js';
export type { RunOperation } from './run.js';
