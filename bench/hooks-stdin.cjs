// Floor for bench/hooks.mjs: start Node and read stdin to its end as a stream (process.stdin), the way the hook
// fast path read it until it switched to blocking reads — the "CommonJS stdin floor" issue 19's targets refer to.
process.stdin.on('data', () => {}).on('end', () => process.exit(0));
