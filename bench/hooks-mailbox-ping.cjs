// Floor for bench/hooks.mjs: what the hook fast path's transport costs without Engram's code — start Node, wake the
// server (an empty line down the pipe, as hooks/run.cjs wakeServer), read stdin with blocking reads, one ping through
// the server's mailbox (the protocol of hooks/run.cjs postToMailbox: the call down the named pipe after its id, the
// answer read back from a file), exit. Usage: node hooks-mailbox-ping.cjs <run dir>
'use strict';
const fs = require('node:fs');
const { join } = require('node:path');

const run = process.argv[2] ?? '';
let pipe;
try {
  pipe = fs.openSync(join(run, 'hook-calls.fifo'), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
} catch {
  process.exit(0);
}
// The wake-up before stdin is read, as hooks/run.cjs wakeServer does.
fs.writeSync(pipe, Buffer.from('\n'));
fs.readFileSync(0);
const id = `${process.pid}-${Date.now().toString(36)}-ping`;
const reply = join(run, 'hooks', `${id}.rep`);
// The call down the pipe after its id, as a hook's call that fits in one pipe write goes.
fs.writeSync(pipe, `${id} {"v":1,"op":"ping"}\n`);
fs.closeSync(pipe);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const started = Date.now();
while (!fs.existsSync(reply) && Date.now() - started < 2_000) Atomics.wait(sleeper, 0, 0, Date.now() - started < 4 ? 0.1 : 0.25);
fs.rmSync(reply, { force: true });
