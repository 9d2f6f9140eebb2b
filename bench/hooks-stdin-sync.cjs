// Floor for bench/hooks.mjs: start Node and read stdin to its end with blocking reads, as the hook fast path does
// (src/hooks/fast.ts readStdinSync) — no stream machinery.
require('node:fs').readFileSync(0);
