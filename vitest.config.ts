import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Builds dist/ once, so end-to-end tests run the same bundles users run.
    globalSetup: ['test/global-setup.ts'],
    // Native modules and process-spawning tests are happiest in child processes.
    pool: 'forks',
    // Most files spend their time waiting on processes they start (servers, hooks, the real agent CLIs), not on the
    // CPU: vitest's default (one worker per core, minus one) ran the suite serially on the 2-core CI machine (22 min
    // under load); three workers finished the same suite in under 8 min there, with every test passing.
    maxWorkers: Math.max(3, availableParallelism() - 1),
    // Three workers on two cores stretch CPU-bound tests 2–3× (a correctness test that takes 8 s alone took over 20 s
    // in CI): the limit catches hangs, not slowness — speed is measured in bench/.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/browser/**'] } },
      // The viewer in headless Chromium (run alone: npx vitest run --project browser).
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'], testTimeout: 60_000 } },
    ],
  },
});
