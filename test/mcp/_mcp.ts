/**
 * Drives the built `engram mcp` as a real process with the SDK's own Client over stdio, in a scratch home and a
 * scratch git project, and cleans up the background server it starts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach } from 'vitest';
import { alive, ROOT, serverPid, stopServer, tempDir } from '../_helpers.js';

/** A scratch Engram home and a git project folder named `shop` beside it. */
export function workspace(): { home: string; project: string } {
  const root = realpathSync(tempDir('engram-mcp-'));
  const home = join(root, 'home');
  const project = join(root, 'shop');
  mkdirSync(home);
  mkdirSync(project);
  execFileSync('git', ['init', '-q'], { cwd: project });
  return { home, project };
}

export interface Connected {
  client: Client;
  transport: StdioClientTransport;
  pid: number;
  /** Calls a tool and returns its text and whether it is an error. */
  tool(name: string, args?: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
  stderr(): string;
  close(): Promise<void>;
}

const open: Array<{ home: string; close: () => Promise<void> }> = [];
afterEach(async () => {
  while (open.length) {
    const { home, close } = open.pop()!;
    await close();
    await stopServer(home);
  }
});

/** Spawns `<root>/bin/engram mcp <args>` in `cwd` for `home` (root: this checkout unless given) and connects the SDK client. */
export async function connect(
  home: string,
  options: { cwd: string; args?: string[]; env?: Record<string, string>; config?: object; root?: string },
): Promise<Connected> {
  if (options.config) writeFileSync(join(home, 'config.json'), JSON.stringify(options.config));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(options.root ?? ROOT, 'bin', 'engram'), 'mcp', ...(options.args ?? [])],
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? '',
      // The HTTP API on any free port: tests run side by side, and 7437 may be taken.
      ENGRAM_PORT: '0',
      HOME: home,
      ENGRAM_HOME: home,
      ENGRAM_EMBEDDER: 'none',
      ENGRAM_SERVER_IDLE_MS: '60000',
      ...options.env,
    },
    stderr: 'pipe',
  });
  let errors = '';
  transport.stderr?.on('data', (chunk) => (errors += chunk));
  const client = new Client({ name: 'engram-test', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid as number;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await client.close();
  };
  open.push({ home, close });
  return {
    client,
    transport,
    pid,
    async tool(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      return { text, isError: result.isError === true };
    },
    stderr: () => errors,
    close,
  };
}

/** The native modules a process has loaded (Linux /proc/<pid>/maps): proof of what it did and did not open. */
export function loadedLibraries(pid: number): string[] {
  return [...new Set(readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n').map((line) => line.split(/\s+/).at(-1) ?? '').filter((path) => path.endsWith('.node')))];
}

/** The lines of a home's log, parsed. */
export function logLines(home: string, name: string): Array<Record<string, unknown>> {
  try {
    return readFileSync(join(home, 'logs', `${name}.log`), 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}

export { alive, serverPid };
