// The MCP benchmark itself; bench/mcp.mjs bundles and runs it. Prints JSON lines, asserts nothing.
//
// 1. Start-up: `node bin/engram mcp` spawned as an agent spawns it, until its `initialize` answer arrives; next to a bare
//    `node -e ''` in the same run.
// 2. Search over MCP: `engram_search` called through the SDK's Client against a store of 10k engrams (answered by the
//    background server the MCP process starts), next to the same operation run in this process on the same store —
//    the difference is what MCP costs per call (stdio framing, the socket to the server, JSON both ways).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings, openStore, readEnv } from '../src/core/index.js';
import { createSearchEngine, importEngrams, MCP_AGENT, percentile, runOperation, searchTuning } from '../src/services/index.js';
import { hookEnvironment } from '../src/hooks/environment.js';
// The SDK after our modules: in one unsplit bundle, zod's classes must be initialised before the SDK's schemas use them.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { seededRandom } from './_random.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(name);
  return index >= 0 ? (args[index + 1] as string) : fallback;
};
const ROOT = option('--root', process.cwd());
const SIZE = Number(option('--size', '10000'));
const QUERIES = Number(option('--queries', '200'));
const STARTS = Number(option('--starts', '10'));
const emit = (record: Record<string, unknown>): void => console.log(JSON.stringify(record));
const round = (ms: number): number => Math.round(ms * 100) / 100;

const random = seededRandom(7);
const WORDS = [
  'build', 'test', 'deploy', 'cache', 'docker', 'index', 'migration', 'schema', 'query', 'timeout', 'retry', 'lint',
  'commit', 'branch', 'merge', 'rebase', 'release', 'package', 'lockfile', 'bundle', 'config', 'token', 'auth',
  'session', 'request', 'response', 'handler', 'route', 'server', 'worker', 'queue', 'cron', 'log', 'metric', 'trace',
  'socket', 'proxy', 'cert', 'cluster', 'image', 'volume', 'env', 'flag', 'rollout', 'fixture', 'snapshot', 'flaky',
];
const VOCABULARY = [...WORDS, ...Array.from({ length: 3000 }, (_, i) => `term${i.toString(36)}`)];
const word = (): string => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(VOCABULARY.length * random() ** 3))] as string;
const sentence = (min: number, max: number): string => Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, word).join(' ');

const work = mkdtempSync(join(tmpdir(), 'engram-bench-mcp-'));
const home = join(work, 'home');
const project = join(work, 'shop');
mkdirSync(home);
mkdirSync(join(project, '.git'), { recursive: true });
const childEnv = { PATH: process.env.PATH ?? '', HOME: home, ENGRAM_HOME: home, ENGRAM_EMBEDDER: 'none', ENGRAM_SERVER_IDLE_MS: '120000' };
const engram = join(ROOT, 'bin', 'engram');

/** Milliseconds from spawning `engram mcp` to its initialize answer. */
function timeInitialize(): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [engram, 'mcp'], { cwd: project, env: childEnv, stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('"id":1')) {
        const ms = performance.now() - started;
        child.stdin.end();
        child.on('close', () => resolve(ms));
      }
    });
    child.on('error', reject);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })}\n`);
  });
}

async function startup(): Promise<void> {
  const bare: number[] = [];
  const mcp: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const t = performance.now();
    spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' });
    bare.push(performance.now() - t);
    mcp.push(await timeInitialize());
  }
  emit({
    bench: 'mcp-startup',
    runs: STARTS,
    initialize_p50_ms: round(percentile(mcp, 50)),
    initialize_p95_ms: round(percentile(mcp, 95)),
    bare_node_p50_ms: round(percentile(bare, 50)),
    vs_bare_node_ratio: round(percentile(mcp, 50) / percentile(bare, 50)),
  });
}

async function search(): Promise<void> {
  const store = openStore({ path: join(home, 'engram.db') });
  const lines = Array.from({ length: SIZE }, (_, i) => JSON.stringify({ text: `${sentence(10, 30)} (${i})`, category: 'bench' }));
  let t = performance.now();
  importEngrams(store, lines, { batchSize: 5_000 });
  const importMs = performance.now() - t;
  const queries = Array.from({ length: QUERIES }, () => sentence(3, 6));

  // In-process: the operation the server runs for engram_search, on this store, with a warm BM25 engine.
  const settings = loadSettings(readEnv(childEnv, { cwd: project }));
  const engine = createSearchEngine(store, { embedder: null, indexDir: settings.paths.index, tuning: searchTuning(settings.config) });
  const caller = { cwd: project, agent: 'unknown' as const, project: 'shop' };
  const context = {
    store,
    settings,
    caller,
    actor: MCP_AGENT,
    search: (request: Parameters<typeof engine.search>[0]) => engine.search(request),
    searchMode: 'bm25' as const,
    model: null,
    environment: (cwd: string, agent: 'claude' | 'codex' | 'unknown') => hookEnvironment(settings, cwd, agent),
    now: () => new Date(),
  };
  const params = (query: string) => ({ query, limit: 5, all_projects: true });
  for (const query of queries.slice(0, 20)) await runOperation('engram.search', params(query), context);
  const inProcess: number[] = [];
  for (const query of queries) {
    t = performance.now();
    await runOperation('engram.search', params(query), context);
    inProcess.push(performance.now() - t);
  }
  store.close();

  // Over MCP: the SDK's client, the real `engram mcp` process, the background server it starts.
  const transport = new StdioClientTransport({ command: process.execPath, args: [engram, 'mcp'], cwd: project, env: childEnv, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  t = performance.now();
  await client.callTool({ name: 'engram_search', arguments: params(queries[0] as string) });
  const firstMs = performance.now() - t;
  for (const query of queries.slice(0, 20)) await client.callTool({ name: 'engram_search', arguments: params(query) });
  const overMcp: number[] = [];
  for (const query of queries) {
    t = performance.now();
    await client.callTool({ name: 'engram_search', arguments: params(query) });
    overMcp.push(performance.now() - t);
  }
  await client.close();
  const serverPid = (() => {
    try {
      return (JSON.parse(readFileSync(join(home, 'run', 'server.json'), 'utf8')) as { pid: number }).pid;
    } catch {
      return null;
    }
  })();
  if (serverPid) process.kill(serverPid, 'SIGTERM');

  const mcpP50 = percentile(overMcp, 50);
  const localP50 = percentile(inProcess, 50);
  emit({
    bench: 'mcp-search',
    engrams: SIZE,
    queries: QUERIES,
    mode: 'bm25',
    over_mcp_p50_ms: round(mcpP50),
    over_mcp_p95_ms: round(percentile(overMcp, 95)),
    in_process_p50_ms: round(localP50),
    in_process_p95_ms: round(percentile(inProcess, 95)),
    mcp_overhead_p50_ms: round(mcpP50 - localP50),
    target_overhead_ms: 3,
    first_call_ms: Math.round(firstMs),
    setup: { import_ms: Math.round(importMs) },
  });
}

try {
  await startup();
  await search();
} finally {
  rmSync(work, { recursive: true, force: true });
}
