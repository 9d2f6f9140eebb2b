import { describe, expect, it } from 'vitest';
import { tempStore } from '../../_helpers.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('a prompt’s uid (made by SQLite in the INSERT)', () => {
  it('is a version 4 UUID, different for every prompt, from both ways a prompt is recorded', () => {
    const store = tempStore();
    try {
      const at = '2026-11-28T01:00:00.000Z';
      store.sessions.ensure('s-uid', { agent: 'claude', project: null, cwd: null, at });
      const added = Array.from({ length: 300 }, (_, i) => store.sessions.addPrompt({ session_id: 's-uid', content: `prompt ${i}`, project: null, at }));
      for (let i = 0; i < 300; i++) {
        expect(store.sessions.insertPrompt({ session_id: 's-uid', prompt_key: `k${i}`, content: `keyed ${i}`, project: 'p', at })).toBe(true);
      }
      // A prompt already recorded under its key is not recorded again (and takes no uid).
      expect(store.sessions.insertPrompt({ session_id: 's-uid', prompt_key: 'k0', content: 'keyed 0', project: 'p', at })).toBe(false);
      const uids = store.sessions.prompts('s-uid').map((prompt) => prompt.uid);
      expect(uids).toHaveLength(600);
      expect(uids.slice(0, 300)).toEqual(added.map((prompt) => prompt.uid));
      expect(uids.filter((uid) => !V4.test(uid))).toEqual([]);
      expect(new Set(uids).size).toBe(600);
      // The variant nibble takes all four values (8, 9, a, b), not a constant.
      expect(new Set(uids.map((uid) => uid[19])).size).toBe(4);
    } finally {
      store.close();
    }
  });
});
