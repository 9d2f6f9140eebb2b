import { describe, expect, it } from 'vitest';
import { counters, reserveIds, returnUnused, syncCounters } from '../../../src/services/knowledge/ids.js';
import { openState } from '../../../src/services/knowledge/state.js';
import { acquireRunLock } from '../../../src/services/knowledge/_lock.js';
import { tempDir, thrown } from '../../_helpers.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

describe('reserveIds', () => {
  it('hands out sequential ids per category and never the same one twice, across connections', () => {
    const root = tempDir();
    const a = openState(root);
    const b = openState(root);
    try {
      expect(reserveIds(a, { C: 2, E: 1 })).toEqual(['C001', 'C002', 'E001']);
      expect(reserveIds(b, { C: 1, W: 2 })).toEqual(['C003', 'W001', 'W002']);
      expect(counters(a)).toEqual({ C: 4, E: 2, W: 3 });
    } finally {
      a.close();
      b.close();
    }
  });

  it('moves past ids a person wrote into the docs by hand', () => {
    const state = openState(tempDir());
    try {
      expect(reserveIds(state, { C: 1 }, ['C041', 'E007'])).toEqual(['C042']);
      expect(syncCounters(state, ['W012'])).toEqual({ C: 43, E: 8, W: 13 });
    } finally {
      state.close();
    }
  });

  it('gives back only the unused tail of the latest reservation, never an id the docs use', () => {
    const state = openState(tempDir());
    try {
      const first = reserveIds(state, { C: 5 });
      reserveIds(state, { E: 1 });
      returnUnused(state, first, new Set(['C001', 'C003']));
      expect(counters(state).C).toBe(4); // C004, C005 unused and nothing reserved after them
      const second = reserveIds(state, { C: 3 });
      expect(second).toEqual(['C004', 'C005', 'C006']);
      reserveIds(state, { C: 1 }); // C007 reserved after: the tail of `second` is not the tail any more
      returnUnused(state, second, new Set());
      expect(counters(state).C).toBe(8);
    } finally {
      state.close();
    }
  });
});

describe('acquireRunLock', () => {
  it('lets one writer in and names the holder to the next', () => {
    const root = tempDir();
    mkdirSync(join(root, '.engram'));
    const lock = acquireRunLock(root, 'engram run');
    const error = thrown(() => acquireRunLock(root, 'engram fold'));
    expect(error?.code).toBe('STORE_LOCKED');
    expect(error?.message).toContain(`engram run, pid ${process.pid}`);
    lock.release();
    acquireRunLock(root, 'engram fold').release();
  });

  it('takes over the lock of a process that is gone', () => {
    const root = tempDir();
    mkdirSync(join(root, '.engram'));
    writeFileSync(join(root, '.engram', 'run.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, what: 'engram run' }));
    acquireRunLock(root, 'engram run').release();
  });
});
