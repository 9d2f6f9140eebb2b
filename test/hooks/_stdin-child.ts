/** Reads its stdin as a hook's fast path does and prints what it got, for test/hooks/run.test.ts. */
import { readStdinSync } from '../../hooks/run.cjs';

const maxBytes = Number(process.argv[2] ?? 16 * 1024 * 1024);
const read = readStdinSync(0, maxBytes);
// How long the child ran: a reader that returned early is visible even when the shell waits for the writer.
const ms = Math.round(process.uptime() * 1000);
process.stdout.write(JSON.stringify({ ...('rest' in read ? { rest: read.rest.length } : read), ms }));
process.exit(0);
