import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Builds dist/ once, so end-to-end tests run the same bundles users run.
    globalSetup: ['test/global-setup.ts'],
    // Native modules and process-spawning tests are happiest in child processes.
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/browser/**'] } },
      // The viewer in headless Chromium (run alone: npx vitest run --project browser).
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'], testTimeout: 60_000 } },
    ],
  },
});
