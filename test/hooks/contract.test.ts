/**
 * The hook contract's session id (hooks/contract.ts): UUID-like ids are accepted, one that looks like a secret is
 * refused, and the shortcut for plain lowercase-hex ids (no redaction scan) is exact: core/redact finds nothing in any
 * such string.
 */
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/core/index.js';
import { HookCommonSchema, PLAIN_HEX_ID } from '../../src/hooks/contract.js';

const payload = (session_id: string) => ({ session_id, cwd: '/tmp', hook_event_name: 'PreToolUse' });

describe('the hook contract’s session id', () => {
  it('accepts both agents’ ids', () => {
    for (const id of ['3f2c9a1e-7b4d-4c1a-9e2f-0a1b2c3d4e5f', '019a7c3e-5b2d-7f10-8a9b-1c2d3e4f5a6b', 'session.one:2', 'ABC-123']) {
      expect(HookCommonSchema.safeParse(payload(id)).success, id).toBe(true);
    }
  });

  it('refuses one that looks like a secret, and one with unexpected characters', () => {
    const secret = HookCommonSchema.safeParse(payload(`sk-ant-${'a1B2c3D4'.repeat(4)}`));
    expect(secret.success).toBe(false);
    expect(secret.error?.issues[0]?.message).toBe('session_id looks like a secret');
    expect(HookCommonSchema.safeParse(payload('AKIA0123456789ABCDEF')).success).toBe(false);
    expect(HookCommonSchema.safeParse(payload('a b')).success).toBe(false);
  });

  it('skips the scan only where it could find nothing: no lowercase-hex-and-dash string holds a secret', () => {
    let seed = 7;
    const next = (n: number): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    const alphabet = '0123456789abcdef-';
    const samples = ['-----', 'acca0123456789abcdef', 'deadbeef'.repeat(32), '-'.repeat(256)];
    for (let i = 0; i < 2_000; i++) samples.push(Array.from({ length: 1 + next(256) }, () => alphabet[next(alphabet.length)]).join(''));
    for (const sample of samples) {
      expect(PLAIN_HEX_ID.test(sample)).toBe(true);
      expect(redact(sample).kinds, sample).toEqual([]);
    }
    // What the shortcut must not cover: uppercase hex can be an AWS key id (ACCA…), other letters other tokens.
    for (const id of ['ACCA0123456789ABCDEF', 'sk-ant-0123456789abcdef0123', 'ghp_0']) expect(PLAIN_HEX_ID.test(id)).toBe(false);
  });
});
