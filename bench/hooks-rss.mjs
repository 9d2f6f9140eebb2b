// Peak-RSS probe for bench/hooks.mjs where GNU time is missing: preloaded with `node --import`, it appends this
// process's VmHWM (peak resident set, KB, from /proc/self/status) to $ENGRAM_BENCH_RSS_FILE when the process exits.
import { appendFileSync, readFileSync } from 'node:fs';

const file = process.env.ENGRAM_BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    try {
      const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
      if (match) appendFileSync(file, `${match[1]}\n`);
    } catch {
      // No /proc (not Linux): the bench reports no number.
    }
  });
}
