// `engram mcp` while a first-run install is still being set up (no dependencies or build yet): a minimal MCP server
// in plain JavaScript that connects, says why it has no tools yet, and exits with the client. An agent that cannot
// connect to a plugin's server at all may leave it out of its next sessions for a while (Claude Code 2.1: 15
// minutes), so answering is better than failing; the next session gets the real server.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

/** Answers JSON-RPC lines on stdin until it ends. `root` is the install folder, `state` what the bootstrap is doing. */
export function servePending(root, state) {
  let version = '0.0.0';
  try {
    version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  } catch {
    // Only shown to the client.
  }
  const instructions =
    `Engram is finishing its first-run setup in the background (${state}); its memory tools (engram_search, ` +
    'engram_add, mem_save, …) are available from the next session.';
  const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  const answer = (request) => {
    if (request === null || typeof request !== 'object' || request.id === undefined) return; // a notification
    const { id, method, params } = request;
    if (method === 'initialize') {
      const asked = params?.protocolVersion;
      return send({
        id,
        result: {
          protocolVersion: VERSIONS.includes(asked) ? asked : VERSIONS[1],
          capabilities: { tools: {} },
          serverInfo: { name: 'engram', version },
          instructions,
        },
      });
    }
    if (method === 'ping') return send({ id, result: {} });
    if (method === 'tools/list') return send({ id, result: { tools: [] } });
    if (method === 'tools/call') return send({ id, error: { code: -32602, message: `Tool ${params?.name} not found: ${instructions}` } });
    return send({ id, error: { code: -32601, message: `Method not found: ${method}` } });
  };
  let buffer = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (line === '') continue;
      try {
        answer(JSON.parse(line));
      } catch {
        send({ id: null, error: { code: -32700, message: 'Parse error' } });
      }
    }
  });
  process.stdin.on('end', () => process.exit(0));
}
