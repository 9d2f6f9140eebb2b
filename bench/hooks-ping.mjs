// Floor for bench/hooks.mjs: what the hook fast path costs without Engram's code — start Node, read stdin to its
// end, one request/answer over the server's Unix socket (a ping), exit. Usage: node hooks-ping.mjs <socket>
import { createConnection } from 'node:net';

const socket = process.argv[2] ?? '';
const done = () => process.exit(0);
process.stdin.on('data', () => {}).on('end', () => {
  const connection = createConnection(socket);
  connection.setEncoding('utf8');
  connection.on('connect', () => connection.write('{"v":1,"op":"ping"}\n'));
  connection.on('data', (chunk) => {
    if (chunk.includes('\n')) done();
  });
  connection.on('error', done);
  connection.on('close', done);
});
