/**
 * A full garbage collection of the server's heap between calls, at most once a minute and at most 0.1 % of the
 * time. Under steady hook traffic V8 lets its old space fill with promoted garbage up to its allocation limit (the live
 * heap plus at least 8 MB) before it collects, and gives nothing back meanwhile: main's server's old space went 17 → 26
 * MB committed over its first 16 minutes of the soak with 15–22 MB in use (PERFORMANCE.md, "Soak (wave 8)"). A
 * collection a minute keeps it near what is live. It runs only when no call is in flight and none started or ended for
 * `quietMs` (agents' hooks come in bursts), only if a call came since the last one (an idle server is left to V8's
 * memory reducer), and never while the server is stopping.
 * @module
 */

export interface QuietCollectionOptions {
  /** The collection itself (`globalThis.gc`, present with `--expose-gc`). */
  collect: () => void;
  /** Calls in flight: read, being answered, or their after-answer work still running. */
  busy: () => number;
  /** When a call last started or ended (ms since the epoch). */
  lastActivity: () => number;
  /** Calls received so far: no collection unless one came since the last. */
  calls: () => number;
  /** Whether the server is stopping. */
  stopping?: () => boolean;
  /** The shortest time between two collections. @default 60_000 */
  everyMs?: number;
  /** The most of the server's time collections may take: one that blocked for `ms` waits `ms / share` for the next
   * (a big store's heap takes longer to collect). @default 0.001 */
  share?: number;
  /** How long the server must have been between calls. @default 250 */
  quietMs?: number;
  /** How often the conditions are checked. @default 1_000 */
  checkEveryMs?: number;
  /** The clock of `lastActivity` (ms); also times the collection. @default Date.now */
  now?: () => number;
  /** After each collection: how long it blocked the process (ms). */
  onCollected?: (ms: number) => void;
  onError?: (error: unknown) => void;
}

/** Checks the conditions once; returns whether it collected. Exposed for the timer and the tests. */
export function quietCollector(options: QuietCollectionOptions): () => boolean {
  const now = options.now ?? Date.now;
  const everyMs = options.everyMs ?? 60_000;
  const quietMs = options.quietMs ?? 250;
  const share = options.share ?? 0.001;
  let lastAt = now();
  let waitMs = everyMs;
  let callsAtLast = options.calls();
  return () => {
    const at = now();
    if (at - lastAt < waitMs) return false;
    if (options.stopping?.() || options.busy() > 0 || at - options.lastActivity() < quietMs) return false;
    const calls = options.calls();
    if (calls === callsAtLast) return false;
    try {
      options.collect();
    } catch (error) {
      options.onError?.(error);
    }
    lastAt = now();
    const took = lastAt - at;
    options.onCollected?.(took);
    waitMs = Math.max(everyMs, took / share);
    callsAtLast = calls;
    return true;
  };
}

/** Starts the checks on a timer that does not keep the process alive; returns a function that stops them. */
export function startQuietCollection(options: QuietCollectionOptions): () => void {
  const check = quietCollector(options);
  const timer = setInterval(check, options.checkEveryMs ?? 1_000);
  timer.unref();
  return () => clearInterval(timer);
}
