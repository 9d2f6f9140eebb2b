import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ once, so end-to-end tests run the same bundles users run.
    globalSetup: ['test/global-setup.ts'],
    // Native modules and process-spawning tests are happiest in child processes.
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
