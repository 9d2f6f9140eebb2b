/**
 * Work a hook that falls back would otherwise do at load, for nothing: the config and engram schemas (built on first
 * use; a hook without a config.json uses the defaults the build stamped) and the stemmed word lists of the search's
 * abstain and inject rules (stemmed on first use; SessionStart never stems).
 */
import { describe, expect, it, vi } from 'vitest';

const counts = vi.hoisted(() => ({ strictObject: 0, searchTerms: 0 }));

vi.mock('zod', async (importOriginal) => {
  const real = await importOriginal<typeof import('zod')>();
  return {
    ...real,
    strictObject: (...args: Parameters<typeof real.strictObject>) => {
      counts.strictObject++;
      return real.strictObject(...args);
    },
  };
});
vi.mock('../../src/services/recall/text.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/services/recall/text.js')>();
  return {
    ...real,
    searchTerms: (...args: Parameters<typeof real.searchTerms>) => {
      counts.searchTerms++;
      return real.searchTerms(...args);
    },
  };
});

describe('loading core and the search rules', () => {
  it('builds the config and engram schemas only when first used', async () => {
    const core = await import('../../src/core/index.js');
    // At load: the prerequisites' schema (small, parsed from rows) and nothing else of these two modules.
    const atLoad = counts.strictObject;
    expect(atLoad).toBeLessThanOrEqual(2);
    const schema = core.configSchema();
    expect(counts.strictObject).toBeGreaterThan(atLoad + 10);
    expect(core.configSchema()).toBe(schema);
    const beforeEngram = counts.strictObject;
    core.engramSchema();
    expect(counts.strictObject).toBeGreaterThan(beforeEngram);
  });

  it('stems the conversational and generic word lists only when a query needs them', async () => {
    const recall = await import('../../src/services/recall/abstain.js');
    const inject = await import('../../src/services/inject/choose.js');
    expect(counts.searchTerms).toBe(0);
    expect(recall.abstainReason('ok thanks')).toBe('no-content');
    expect(counts.searchTerms).toBeGreaterThan(50);
    const afterAbstain = counts.searchTerms;
    expect(inject.withoutGenericWords('Edit src/pay/refund.ts')).toBe('pay refund');
    expect(counts.searchTerms).toBeGreaterThan(afterAbstain + 10);
  });
});
