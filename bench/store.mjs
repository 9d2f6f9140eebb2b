#!/usr/bin/env node
// Store and hook benchmarks, printed as JSON (never asserted in tests). Every timing is a whole process, measured in
// the same run as a bare `node -e ''` through the same `sh -c` wrapper the agents use, and reported as the median of
// paired ratios, so the numbers mean the same on a faster or slower machine.
//
//   node bench/store.mjs [--runs 30] [--engrams 10000]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const arg = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const RUNS = arg('--runs', 30);
const ENGRAMS = arg('--engrams', 10_000);
if (!existsSync(join(root, 'dist', 'cli.mjs'))) execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')]);

const home = mkdtempSync(join(tmpdir(), 'engram-bench-'));
// Hooks here answer in-process (the store path); bench/hooks.mjs measures them with the warm server.
const env = { ...process.env, HOME: home, ENGRAM_HOME: home, ENGRAM_SERVER: 'off' };
const quote = (s) => `'${s.replaceAll("'", "'\\''")}'`;
const timeShell = (command, input) => {
  const started = process.hrtime.bigint();
  const result = spawnSync('sh', ['-c', command], { input, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr}`);
  return ms;
};
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Alternates baseline and subject runs; reports subject ms and the median of paired ratios. */
function paired(name, command, input) {
  const baseline = [];
  const subject = [];
  const ratios = [];
  const stdin = (i) => (typeof input === 'function' ? input(i) : input);
  timeShell(command, stdin(-1)); // warm the page cache
  for (let i = 0; i < RUNS; i++) {
    const b = timeShell(`${quote(process.execPath)} -e ''`, '');
    const s = timeShell(command, stdin(i));
    baseline.push(b);
    subject.push(s);
    ratios.push(s / b);
  }
  const rss = spawnSync('/usr/bin/time', ['-f', '%M', 'sh', '-c', command], {
    input: stdin(RUNS),
    env,
    encoding: 'utf8',
  });
  const maxRssMb = existsSync('/usr/bin/time') ? round(Number(rss.stderr.trim().split('\n').at(-1)) / 1024, 1) : null;
  return {
    name,
    runs: RUNS,
    p50_ms: round(percentile(subject, 50), 1),
    p95_ms: round(percentile(subject, 95), 1),
    baseline_p50_ms: round(percentile(baseline, 50), 1),
    ratio_p50: round(percentile(ratios, 50)),
    ratio_p95: round(percentile(ratios, 95)),
    peak_rss_mb: maxRssMb,
  };
}

try {
  const cli = `${quote(process.execPath)} ${quote(join(root, 'bin', 'engram'))}`;
  // A store of ENGRAMS engrams, imported through the CLI in one process: throughput.
  const file = join(home, 'seed.jsonl');
  writeFileSync(
    file,
    Array.from({ length: ENGRAMS }, (_, i) =>
      JSON.stringify({ text: `Synthetic lesson ${i}: prefer ${['pnpm', 'vitest', 'zod', 'sqlite'][i % 4]} for task ${i % 97}.`, tags: [`t${i % 13}`], category: `area/${i % 11}` }),
    ).join('\n'),
  );
  const importMs = timeShell(`${cli} import ${quote(file)}`, '');
  const payload = (event, extra) => (i) =>
    JSON.stringify({ session_id: `bench-${i}`, transcript_path: '/tmp/t.jsonl', cwd: root, hook_event_name: event, ...extra });
  const hook = (entry) => `${quote(process.execPath)} ${quote(join(root, 'hooks', 'run.cjs'))} ${entry} --agent claude`;
  const results = {
    machine: { node: process.version, cpus: (await import('node:os')).cpus().length },
    store_engrams: ENGRAMS,
    import: { engrams: ENGRAMS, ms: round(importMs, 0), engrams_per_s: Math.round(ENGRAMS / (importMs / 1000)) },
    processes: [
      paired('hook SessionStart', hook('session-start'), payload('SessionStart', { source: 'startup' })),
      paired('hook UserPromptSubmit', hook('user-prompt-submit'), payload('UserPromptSubmit', { prompt: 'how do we run the migrations?' })),
      paired('hook Stop', hook('stop'), payload('Stop', { stop_hook_active: false })),
      paired('cli engram add', `${cli} add "bench lesson $$-$RANDOM"`, ''),
      paired('cli engram list --limit 20', `${cli} list --limit 20`, ''),
    ],
  };
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
