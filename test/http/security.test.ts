/**
 * The guards every request passes, on a real loopback server: DNS-rebinding Host names and cross-origin browser
 * requests are refused (and write nothing), there is no CORS, bodies are capped (1 MiB → 413; import 50 MiB → 400
 * as the Go engram answers), a remote listener needs its token, and a request past its deadline is answered 503.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/index.js';
import { createHttpApp, listenHttp, type Binding } from '../../src/http/index.js';
import { tempDir } from '../_helpers.js';
import { send, startApi } from './_api.js';

/** A raw request with a chosen Host header (fetch does not let a caller set Host). */
function rawRequest(port: number, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path ?? '/health', headers: options.headers }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('Host check (DNS rebinding)', () => {
  it('answers only requests addressed to the loopback name and port it listens on', async () => {
    const api = await startApi();
    for (const host of [`127.0.0.1:${api.port}`, `localhost:${api.port}`, `LOCALHOST:${api.port}`]) {
      expect((await rawRequest(api.port, { headers: { host } })).status).toBe(200);
    }
    for (const host of ['evil.example', `evil.example:${api.port}`, '127.0.0.1', `127.0.0.1:${api.port + 1}`, `attacker.127.0.0.1.nip.io:${api.port}`]) {
      const result = await rawRequest(api.port, { headers: { host } });
      expect(result.status).toBe(403);
      expect(result.body).toMatchObject({ code: 'FORBIDDEN_HOST' });
    }
    // A rebinding page that gets through DNS cannot write either.
    const write = await rawRequest(api.port, {
      method: 'POST',
      path: '/observations',
      headers: { host: `rebound.example:${api.port}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 's', title: 'pwned', content: 'pwned' }),
    });
    expect(write.status).toBe(403);
    expect(api.store.engrams.counts().total).toBe(0);
  });
});

describe('Origin check and no CORS', () => {
  it('refuses cross-origin requests and writes nothing; same-origin and non-browser requests pass', async () => {
    const api = await startApi();
    const body = { session_id: 's', title: 'T', content: 'C' };
    const cross = await api.json('/observations', send('POST', body, { origin: 'https://evil.example' }));
    expect(cross).toMatchObject({ status: 403, body: { code: 'CROSS_ORIGIN' } });
    expect((await api.json('/observations', send('POST', body, { origin: 'null' }))).status).toBe(403);
    expect((await api.json('/observations/1', { method: 'DELETE', headers: { origin: 'http://localhost:1' } })).status).toBe(403);
    expect((await api.json('/observations', send('POST', body, { 'sec-fetch-site': 'cross-site' }))).status).toBe(403);
    expect(api.store.engrams.counts().total).toBe(0);
    expect((await api.json('/observations', send('POST', body, { origin: api.url }))).status).toBe(201);
    expect((await api.json('/observations', send('POST', { ...body, title: 'T2' }))).status).toBe(201);
    // A preflight gets no CORS permission: the browser never sends the real request.
    const preflight = await api.fetch('/observations', { method: 'OPTIONS', headers: { origin: api.url, 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(405);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const read = await api.fetch('/stats', { headers: { origin: api.url } });
    expect(read.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('body caps', () => {
  it('refuses a body over 1 MiB with 413, by its length and when sent in chunks, and stores nothing', async () => {
    const api = await startApi();
    const big = JSON.stringify({ session_id: 's', title: 'T', content: 'x'.repeat(1024 * 1024) });
    const declared = await api.json('/observations', send('POST', big));
    expect(declared).toMatchObject({ status: 413, body: { code: 'BODY_TOO_LARGE' } });
    const chunked = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(64 * 1024)));
        controller.close();
      },
    });
    const streamed = await api.json('/prompts', { method: 'POST', body: chunked, duplex: 'half' } as RequestInit);
    expect(streamed).toMatchObject({ status: 413, body: { code: 'BODY_TOO_LARGE' } });
    expect(api.store.engrams.counts().total).toBe(0);
    // Just under the cap is fine.
    const fits = JSON.stringify({ session_id: 's', title: 'T', content: 'y'.repeat(60_000) });
    expect((await api.json('/observations', send('POST', fits))).status).toBe(201);
  });

  it('takes an import up to 50 MiB and answers 50 MiB + 1 byte with the Go engram’s 400', async () => {
    const api = await startApi();
    const size = 50 * 1024 * 1024 + 1;
    const head = '{"sessions":[],"observations":[],"prompts":[],"pad":"';
    const oversized = head + 'p'.repeat(size - head.length - 2) + '"}';
    expect(Buffer.byteLength(oversized)).toBe(size);
    const result = await api.json('/import', send('POST', oversized));
    expect(result).toMatchObject({ status: 400, body: { error: 'failed to read body: http: request body too large', code: 'BODY_TOO_LARGE' } });
    const atCap = oversized.slice(0, head.length) + 'p'.repeat(size - head.length - 3) + '"}';
    expect(Buffer.byteLength(atCap)).toBe(size - 1);
    expect((await api.json('/import', send('POST', atCap))).body).toEqual({ sessions_imported: 0, observations_imported: 0, prompts_imported: 0 });
  }, 60_000);
});

describe('token for a remote listener', () => {
  it('requires Authorization: Bearer <token> on every request', async () => {
    const api = await startApi({ token: 's3cret-token' });
    expect(await api.json('/health')).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
    expect((await api.json('/health', { headers: { authorization: 'Bearer wrong-token!' } })).status).toBe(401);
    expect((await api.json('/health', { headers: { authorization: 'Bearer s3cret-token' } })).status).toBe(200);
  });
});

describe('deadlines', () => {
  it('answers 503 {error, code: TIMEOUT} when an operation does not finish in time', async () => {
    const home = tempDir();
    const binding: Binding = { host: '127.0.0.1', port: 0, remote: false };
    // A hung operation cannot be produced on purpose with the real store; this run never settles.
    const app = createHttpApp({ run: () => new Promise(() => {}), log: createLogger({ dir: join(home, 'logs'), name: 'server' }), binding, timeoutMs: 1_000 });
    const { state, listener } = await listenHttp(app, binding);
    try {
      const url = state.state === 'listening' ? state.url : '';
      const response = await fetch(`${url}/stats`);
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ code: 'TIMEOUT' });
    } finally {
      await listener?.close();
    }
  });
});

describe('a taken port', () => {
  it('is reported with who holds it instead of failing', async () => {
    const api = await startApi();
    const home = tempDir();
    const binding: Binding = { host: '127.0.0.1', port: api.port, remote: false };
    const app = createHttpApp({ run: async () => ({}), log: createLogger({ dir: join(home, 'logs'), name: 'server' }), binding });
    const { state, listener } = await listenHttp(app, binding);
    expect(listener).toBeNull();
    expect(state).toMatchObject({ state: 'port_in_use', port: api.port, holder: expect.stringContaining('another Engram server') });
  });
});
