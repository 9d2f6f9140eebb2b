/** Review policy: risk tiers, who is admitted as active, decay parsing and freshness, config.json's governance section. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings, readEnv } from '../../../src/core/index.js';
import { addEngram, admit, classifyTier, freshness, governancePolicy, isStale, staleAfter } from '../../../src/services/index.js';
import { tempDir, tempStore, thrown } from '../../_helpers.js';

describe('risk tiers', () => {
  it('come from the kind, and text that forbids, requires, or names credentials or production is tier 3 whatever its kind', () => {
    const policy = governancePolicy();
    expect(classifyTier('gotcha', 'vitest needs --pool=forks with native addons.', policy).tier).toBe(1);
    expect(classifyTier('convention', 'Helpers live in src/util.', policy).tier).toBe(2);
    expect(classifyTier('lesson', 'Tests need Postgres running.', policy).tier).toBe(2);
    expect(classifyTier('gotcha', 'Never force-push to main.', policy)).toEqual({ tier: 3, why: 'it forbids or requires an action' });
    expect(classifyTier('gotcha', 'You must run migrations first.', policy).tier).toBe(3);
    expect(classifyTier('gotcha', 'The staging API key is in 1Password.', policy)).toEqual({ tier: 3, why: 'it names credentials' });
    expect(classifyTier('discovery', 'The prod database is read-only on Fridays.', policy)).toEqual({ tier: 3, why: 'it names production' });
    expect(classifyTier('rule', 'Helpers live in src/util.', policy).tier).toBe(3);
  });

  it('config.json tiers merge over the built-in table', () => {
    const policy = governancePolicy({ governance: { autopromote: true, tiers: { convention: 1 }, decay: {}, conflict_llm: 'auto', context_chars: 4000 } });
    expect(classifyTier('convention', 'Helpers live in src/util.', policy).tier).toBe(1);
    expect(classifyTier('gotcha', 'x y z', policy).tier).toBe(1);
  });
});

describe('admission', () => {
  const policy = governancePolicy();
  const on = { ...policy, autopromote: true };
  const tier = (value: 1 | 2 | 3) => ({ tier: value, why: `tier ${value}` });
  it("a person's add is active unless it contradicts; anything else needs tier 1 and autopromote; tier 3 always waits", () => {
    expect(admit({ learnedBy: 'user', tier: tier(3), conflicts: [], policy })).toMatchObject({ status: 'active' });
    expect(admit({ learnedBy: 'import', tier: tier(2), conflicts: [], policy })).toMatchObject({ status: 'active' });
    expect(admit({ learnedBy: 'user', tier: tier(1), conflicts: [{ other_id: 7 }], policy })).toMatchObject({ status: 'pending', reason: expect.stringContaining('#7') });
    for (const learnedBy of ['agent', 'harvest', 'sync'] as const) {
      expect(admit({ learnedBy, tier: tier(1), conflicts: [], policy })).toMatchObject({ status: 'pending', reason: 'tier 1, but autopromote is off: waits for review' });
      expect(admit({ learnedBy, tier: tier(1), conflicts: [], policy: on })).toMatchObject({ status: 'active', autopromoted: true });
      expect(admit({ learnedBy, tier: tier(2), conflicts: [], policy: on })).toMatchObject({ status: 'pending' });
      expect(admit({ learnedBy, tier: tier(3), conflicts: [], policy: on })).toMatchObject({ status: 'pending', reason: expect.stringContaining('always reviewed') });
      expect(admit({ learnedBy, tier: tier(1), conflicts: [{ other_id: 2 }], policy: on })).toMatchObject({ status: 'pending' });
    }
  });

  it('autopromote from config.json lets a tier-1 agent save be active at once', () => {
    const store = tempStore();
    const on = governancePolicy({ governance: { autopromote: true, tiers: {}, decay: {}, conflict_llm: 'auto', context_chars: 4000 } });
    const agent = { by: 'agent', via: 'mcp' } as const;
    expect(addEngram(store, { text: 'vitest needs --pool=forks with native addons.', kind: 'gotcha' }, { actor: agent, policy: on }).engram).toMatchObject({ status: 'active', learned_by: 'agent', tier: 1, confirmed_at: null });
    expect(addEngram(store, { text: 'Helpers are written by hand in src/util.', kind: 'convention' }, { actor: agent, policy: on }).engram).toMatchObject({ status: 'pending', tier: 2 });
  });
});

describe('freshness', () => {
  it('decays per kind from the later of the last confirmation and the last match', () => {
    const policy = governancePolicy();
    const at = (day: string) => freshness(policy, new Date(day));
    const lesson = { kind: 'lesson', confirmed_at: '2026-01-01T00:00:00.000Z', last_matched_at: null, created_at: '2025-12-01T00:00:00.000Z' };
    expect(staleAfter(lesson, at('2026-06-01'))?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(isStale(lesson, at('2026-12-31'))).toBe(false);
    expect(isStale(lesson, at('2027-01-02'))).toBe(true);
    expect(isStale({ ...lesson, last_matched_at: '2026-12-01T00:00:00.000Z' }, at('2027-01-02'))).toBe(false);
    expect(isStale({ ...lesson, kind: 'gotcha' }, at('2026-07-01'))).toBe(true); // 180 days
    expect(isStale({ ...lesson, confirmed_at: null }, at('2026-12-15'))).toBe(true); // from creation
  });

  it('config.json decay merges over the defaults; `never` never stales; bad values are refused with the key', () => {
    const home = tempDir();
    writeFileSync(join(home, 'config.json'), JSON.stringify({ governance: { decay: { lesson: 'never', convention: '2w' } } }));
    const policy = governancePolicy(loadSettings(readEnv({ HOME: home, ENGRAM_HOME: home })).config);
    const now = freshness(policy, new Date('2040-01-01'));
    expect(isStale({ kind: 'lesson', confirmed_at: '2026-01-01T00:00:00.000Z', last_matched_at: null, created_at: '2026-01-01T00:00:00.000Z' }, now)).toBe(false);
    expect(staleAfter({ kind: 'convention', confirmed_at: '2026-01-01T00:00:00.000Z', last_matched_at: null, created_at: '2026-01-01T00:00:00.000Z' }, now)?.toISOString()).toBe('2026-01-15T00:00:00.000Z');
    writeFileSync(join(home, 'config.json'), JSON.stringify({ governance: { decay: { lesson: 'soon' } } }));
    expect(thrown(() => loadSettings(readEnv({ HOME: home, ENGRAM_HOME: home })))?.message).toContain('governance.decay.lesson');
    writeFileSync(join(home, 'config.json'), JSON.stringify({ governance: { autopromot: true } }));
    expect(thrown(() => loadSettings(readEnv({ HOME: home, ENGRAM_HOME: home })))?.code).toBe('CONFIG_INVALID');
  });
});
