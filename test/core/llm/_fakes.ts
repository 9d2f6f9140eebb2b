import { writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { loadSettings, readEnv, type Logger, type Settings } from '../../../src/core/index.js';
import { tempDir } from '../../_helpers.js';

/** What the fake server received. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: any;
}

/** How the fake server answers one request; `hang` never answers. */
export type Reply = 'hang' | { status?: number; headers?: Record<string, string>; body?: unknown; raw?: string };

/** A normal chat completion. */
export function completion(content: string | null, extra: Record<string, unknown> = {}): Reply {
  return {
    body: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: 'fake-model-served',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      ...extra,
    },
  };
}

const servers: Server[] = [];
afterEach(async () => {
  while (servers.length) {
    const server = servers.pop() as Server;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/**
 * An OpenAI-compatible server on 127.0.0.1 (port 0). `replies` answers request i with replies[i] (the last one
 * repeats), or is called per request. Closed after the test.
 */
export async function fakeOpenAi(replies: Reply[] | ((request: SeenRequest, index: number) => Reply)): Promise<{ baseUrl: string; requests: SeenRequest[] }> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Keep the raw text.
      }
      const seen: SeenRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(seen);
      const index = requests.length - 1;
      const reply = typeof replies === 'function' ? replies(seen, index) : (replies[Math.min(index, replies.length - 1)] as Reply);
      if (reply === 'hang') return;
      const payload = reply.raw ?? JSON.stringify(reply.body ?? {});
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(payload);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests };
}

/** Settings from a fresh home with `llm` as config.json's llm section and extra environment variables. */
export function llmSettings(llm: Record<string, unknown>, vars: Record<string, string> = {}): Settings {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ llm }));
  return loadSettings(readEnv({ HOME: home, ENGRAM_HOME: home, ...vars }));
}

/** A logger that keeps its lines. */
export function memoryLogger(): Logger & { lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> } {
  const lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> = [];
  const at = (level: string) => (message: string, fields: Record<string, unknown> = {}) => lines.push({ level, message, fields });
  return { file: '(memory)', lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * A stand-in for `claude -p`: a Node script run as `[node, script, mode, …]`.
 * - `echo`: prints `{input, child}` (stdin and $ENGRAM_LLM_CHILD);
 * - `fail`: writes three stderr lines (one with a secret) and exits 3;
 * - `empty`: exits 0 without output;
 * - `flood`: prints 2 MB;
 * - `hang <pidfile>`: starts a grandchild that ignores SIGTERM, writes both pids, and never ends.
 */
export function fakeCommand(): string {
  const script = join(tempDir(), 'fake-llm.cjs');
  writeFileSync(
    script,
    `
const { spawn } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const [mode, pidFile] = process.argv.slice(2);
if (mode === 'hang') {
  const grandchild = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: 'inherit' });
  writeFileSync(pidFile, JSON.stringify([process.pid, grandchild.pid]));
  setInterval(() => {}, 1000);
} else {
  let input = '';
  process.stdin.on('data', (chunk) => (input += chunk));
  process.stdin.on('end', () => {
    if (mode === 'echo') process.stdout.write(JSON.stringify({ input, child: process.env.ENGRAM_LLM_CHILD ?? null }) + '\\n');
    if (mode === 'fail') {
      process.stderr.write('Error: not logged in\\nAuthorization: Bearer abcdefghijklmnop123456\\nthird line\\n');
      process.exit(3);
    }
    if (mode === 'empty') process.exit(0);
    if (mode === 'flood') process.stdout.write('x'.repeat(2 * 1024 * 1024));
  });
}
`,
  );
  return script;
}

/** Waits until `check` holds or `ms` pass. */
export async function eventually(check: () => boolean, ms = 3_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return check();
}
