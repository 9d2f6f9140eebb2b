/**
 * The full collection between calls (server/quiet-collection.ts): it runs once a minute at most, only when no call is
 * in flight and none started or ended for the quiet time, only if calls came since the last one, never while the
 * server stops. A clock and counters driven by the test stand for the server's; the collection is counted, and in the
 * last test it is V8's real one (`gc` from `--expose-gc`, set for this process with v8.setFlagsFromString).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { quietCollector, startQuietCollection } from '../../src/server/quiet-collection.js';

function server() {
  const state = { now: 1_000_000, busy: 0, lastActivity: 1_000_000, calls: 0, stopping: false, collected: 0 };
  const check = quietCollector({
    collect: () => state.collected++,
    busy: () => state.busy,
    lastActivity: () => state.lastActivity,
    calls: () => state.calls,
    stopping: () => state.stopping,
    everyMs: 60_000,
    quietMs: 250,
    now: () => state.now,
  });
  /** A call that starts at `at` and ends `ms` later. */
  const call = (at: number, ms = 5): void => {
    state.calls++;
    state.lastActivity = at + ms;
  };
  return { state, check, call };
}

describe('a full collection between calls', () => {
  it('runs once a minute when the server is between calls', () => {
    const { state, check, call } = server();
    call(state.now + 1_000);
    state.now += 30_000;
    expect(check()).toBe(false); // not a minute yet
    state.now += 30_000;
    expect(check()).toBe(true);
    expect(state.collected).toBe(1);
    call(state.now + 100);
    state.now += 1_000;
    expect(check()).toBe(false); // the next one a minute later
    state.now += 59_000;
    expect(check()).toBe(true);
    expect(state.collected).toBe(2);
  });

  it('never while a call is in flight, nor right after one started or ended', () => {
    const { state, check, call } = server();
    call(state.now + 59_000);
    state.now += 61_000;
    state.busy = 1; // a call waits for its answer
    expect(check()).toBe(false);
    state.busy = 0;
    state.lastActivity = state.now - 100; // the last call ended 100 ms ago: hooks come in bursts
    expect(check()).toBe(false);
    state.now += 150;
    expect(check()).toBe(true); // 250 ms between calls
    expect(state.collected).toBe(1);
  });

  it('never on a server that received no call since the last collection, nor on one that is stopping', () => {
    const { state, check, call } = server();
    state.now += 120_000;
    state.lastActivity = state.now - 60_000;
    expect(check()).toBe(false); // idle since it started: nothing was allocated by calls
    call(state.now - 10_000);
    state.stopping = true;
    expect(check()).toBe(false);
    state.stopping = false;
    expect(check()).toBe(true);
    state.now += 600_000; // idle for 10 minutes after that
    expect(check()).toBe(false);
    expect(state.collected).toBe(1);
  });

  it('waits longer after a long collection: at most 0.1 % of the time', () => {
    let now = 0;
    let calls = 0;
    const took: number[] = [];
    const check = quietCollector({
      collect: () => {
        now += 150; // a big heap: 150 ms
      },
      busy: () => 0,
      lastActivity: () => now - 1_000,
      calls: () => ++calls,
      now: () => now,
      onCollected: (ms) => took.push(ms),
    });
    now = 60_000;
    expect(check()).toBe(true);
    expect(took).toEqual([150]);
    now += 60_000;
    expect(check()).toBe(false); // 150 ms at 0.1 %: the next one 150 s later
    now += 90_000;
    expect(check()).toBe(true);
  });

  it('reports how long a collection took, and an error it threw, and goes on', () => {
    const errors: unknown[] = [];
    const took: number[] = [];
    let calls = 1;
    let now = 0;
    const check = quietCollector({
      collect: () => {
        throw new Error('no gc');
      },
      busy: () => 0,
      lastActivity: () => 0,
      calls: () => calls,
      now: () => now,
      everyMs: 10,
      onCollected: (ms) => took.push(ms),
      onError: (error) => errors.push(error),
    });
    calls++;
    now = 1_000;
    expect(check()).toBe(true);
    expect(errors).toHaveLength(1);
    expect(took).toHaveLength(1);
  });

  it('collects with V8 on its timer, and stops', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let calls = 0;
    const took: number[] = [];
    const stop = startQuietCollection({
      collect: gc,
      busy: () => 0,
      lastActivity: () => 0,
      calls: () => ++calls, // a call came before every check
      everyMs: 20,
      share: 1, // whatever a collection of this process's heap takes
      quietMs: 0,
      checkEveryMs: 10,
      onCollected: (ms) => took.push(ms),
    });
    // A collection of this process's heap can take a while on a loaded machine: wait for two, however long they take.
    for (let waited = 0; took.length < 2 && waited < 20_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    stop();
    const count = took.length;
    expect(count).toBeGreaterThanOrEqual(2);
    expect(took.every((ms) => ms >= 0)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(took.length).toBe(count); // stopped
  }, 30_000);
});
