// Floor for bench/hooks.mjs: bench/hooks-stdin.mjs as CommonJS, to show what loading an ES module as the main
// script costs on its own (hooks/run.mjs and the hook bundles are ES modules).
process.stdin.on('data', () => {}).on('end', () => process.exit(0));
