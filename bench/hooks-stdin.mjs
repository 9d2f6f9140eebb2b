// Floor for bench/hooks.mjs: the least a hook must do — start Node and read stdin to its end — and nothing else.
process.stdin.on('data', () => {}).on('end', () => process.exit(0));
