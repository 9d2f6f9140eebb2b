#!/usr/bin/env node
// How the warm server writes a hook's answer into the claimed call file (src/server/mailbox-server.ts `answer`),
// two ways, alternating in one run: truncated to 0 then written and closed before the rename (the old way), and
// written over the call, cut to the answer's length, renamed, then closed (now). On ext4 a file truncated to 0 is
// flushed when closed (auto_da_alloc), which the old way paid on the hook's path. Prints the median µs per answer
// of each round and the load; asserts nothing. Usage: node bench/mailbox-answer.cjs [--answers 200] [--rounds 6]
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const { join } = require('node:path');

const arg = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const ANSWERS = arg('--answers', 200);
const ROUNDS = arg('--rounds', 6);
const dir = fs.mkdtempSync(join(os.tmpdir(), 'engram-bench-mailbox-'));
const call = `${JSON.stringify({ v: 1, op: 'hook', call: { event: 'PreToolUse', stdin: 'x'.repeat(1500) } })}\n`;
const answer = Buffer.from(`${JSON.stringify({ ok: true, op: 'hook', stdout: 'y'.repeat(900) })}\n`);
const ways = {
  'truncate to 0, write, close, rename (old)': (fd, claimed, reply) => {
    fs.ftruncateSync(fd, 0);
    fs.writeSync(fd, answer, 0, answer.length, 0);
    fs.closeSync(fd);
    fs.renameSync(claimed, reply);
  },
  'write, cut to length, rename, close (now)': (fd, claimed, reply) => {
    fs.writeSync(fd, answer, 0, answer.length, 0);
    fs.ftruncateSync(fd, answer.length);
    fs.renameSync(claimed, reply);
    fs.closeSync(fd);
  },
};
const medians = Object.fromEntries(Object.keys(ways).map((name) => [name, []]));
const loadStart = os.loadavg();
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, way] of Object.entries(ways)) {
      const times = [];
      for (let i = 0; i < ANSWERS; i++) {
        const claimed = join(dir, `${i}.work`);
        const reply = join(dir, `${i}.rep`);
        fs.writeFileSync(claimed, call);
        const fd = fs.openSync(claimed, fs.constants.O_RDWR);
        const started = process.hrtime.bigint();
        way(fd, claimed, reply);
        times.push(Number(process.hrtime.bigint() - started) / 1000);
        fs.unlinkSync(reply);
      }
      times.sort((a, b) => a - b);
      medians[name].push(times[Math.floor(times.length / 2)]);
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(`node ${process.version}, ${os.cpus().length} CPUs, load ${loadStart.map((l) => l.toFixed(2)).join(' ')} → ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ${dir}`);
for (const [name, list] of Object.entries(medians)) console.log(`${name.padEnd(44)} ${list.map((m) => `${m.toFixed(1)} µs`).join('  ')}`);
