/**
 * `engram mcp [--tools=<profiles or names>] [--home <dir>]`: Engram as an MCP server on stdio. stdout carries protocol
 * frames only (anything else that would print there goes to `$ENGRAM_HOME/logs/mcp.log`); every operation runs in the
 * background server, started when absent (client.ts). The process ends when the client closes stdin.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createLogger, findRepo, loadSettingsLeniently, readEnv } from '../core/index.js';
import type { Caller } from '../services/ops/index.js';
import { createOpsClient } from './client.js';
import { resolveTools } from './profiles.js';
import { createMcpServer } from './server.js';
import { TOOLS } from './tools.js';

/** What `engram mcp` needs from the process that runs it. */
export interface McpRunOptions {
  /** The folder the running bundle is in: dist/server.mjs and dist/mcp-inprocess.mjs live under it (the install
   * folder when built in place, else its runtime folder outside a plugin's folder). */
  runtimeDir: string;
  env: Record<string, string | undefined>;
  cwd: string;
}

const USAGE = `usage: engram mcp [--tools=<list>] [--home <dir>]

Runs Engram as an MCP server on stdio.
  --tools   comma-separated profiles and tool names: engram (Engram's tools), agent (the Go engram's 11 agent
            tools), admin (its 4 curation tools), all (default: every tool), or names such as mem_save,engram_search
  --home    Engram's data folder (default: $ENGRAM_HOME or ~/.engram)
`;

/** `--name=value` or `--name value`. */
function option(argv: readonly string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === `--${name}`) return argv[i + 1] ?? '';
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}

/** Which agent runs us, from the name its MCP client gives at initialize. */
function agentOf(clientName: string | undefined): Caller['agent'] {
  const name = (clientName ?? '').toLowerCase();
  if (name.includes('claude')) return 'claude';
  if (name.includes('codex')) return 'codex';
  return 'unknown';
}

/** Runs the server until the client goes away; resolves with the exit code. */
export async function runMcp(argv: readonly string[], options: McpRunOptions): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stderr.write(USAGE);
    return 0;
  }
  const known = new Set(['--tools', '--home']);
  const stray = argv.filter((arg, i) => arg.startsWith('--') && !known.has(arg.split('=')[0] as string) && !known.has(argv[i - 1] ?? ''));
  if (stray.length > 0) {
    process.stderr.write(`engram mcp: unknown option ${stray.join(', ')}\n${USAGE}`);
    return 2;
  }
  const home = option(argv, 'home');
  const vars = home ? { ...options.env, ENGRAM_HOME: home } : options.env;
  const { settings, configError } = loadSettingsLeniently(readEnv(vars, { cwd: options.cwd }));
  const log = createLogger({ dir: settings.paths.logs, name: 'mcp', level: settings.config.log.level, maxBytes: settings.config.log.max_bytes });
  if (configError) log.warn('config.json is invalid; using defaults', { error: configError.message });

  // stdout is the protocol: a library that logs with console.* must not corrupt it.
  for (const method of ['log', 'info', 'debug', 'warn', 'error'] as const) {
    console[method] = (...parts: unknown[]) => log.warn('console output', { method, text: parts.map(String).join(' ').slice(0, 2_000) });
  }

  const selection = resolveTools(option(argv, 'tools'));
  const tools = selection ? TOOLS.filter((tool) => selection.has(tool.name)) : TOOLS;
  const unknown = selection ? [...selection].filter((name) => !TOOLS.some((tool) => tool.name === name)) : [];
  if (unknown.length > 0) log.warn('--tools names tools that do not exist; ignored', { unknown });

  const client = createOpsClient({ settings, log, runtimeDir: options.runtimeDir });
  const sessionId = `mcp-${randomUUID()}`;
  const project = findRepo(options.cwd)?.name ?? null;
  let inFlight = 0;
  const server = createMcpServer({
    tools,
    log,
    context: {
      async call(method, params) {
        inFlight++;
        const started = performance.now();
        try {
          const caller: Caller = { cwd: options.cwd, agent: agentOf(server.getClientVersion()?.name), session_id: sessionId, project };
          const { result, by, serverMs } = await client.call(method, params, caller);
          const ms = Math.round((performance.now() - started) * 10) / 10;
          log.info('operation answered', { method, by, ms, ...(serverMs !== undefined ? { server_ms: serverMs } : {}) });
          return result as never;
        } finally {
          inFlight--;
        }
      },
    },
  });

  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(transport);
  log.info('mcp server started', { pid: process.pid, tools: tools.length, cwd: options.cwd, project, runtime: options.runtimeDir });
  // The client closed stdin: answer what it already asked (each write is one transaction), then stop. A signal
  // stops at once; a running write still finishes or rolls back whole.
  let stopping = false;
  const stop = async (drain: boolean): Promise<void> => {
    if (stopping) return;
    stopping = true;
    const deadline = Date.now() + 30_000;
    while (drain && inFlight > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    // Let the last answers reach the transport before it closes.
    await new Promise((resolve) => setTimeout(resolve, drain ? 20 : 0));
    await server.close();
  };
  process.stdin.on('end', () => void stop(true));
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void stop(false));
  await closed;
  client.close();
  log.info('mcp server stopped', { pid: process.pid });
  return 0;
}
