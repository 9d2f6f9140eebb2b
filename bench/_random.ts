/**
 * The benches' seeded pseudo-random numbers in [0, 1): the same stream for the same seed on every run, so a bench
 * builds the same corpus, asks the same queries, and draws the same resamples each time.
 */
export function seededRandom(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
    return ((state >>> 0) % 1_000_000) / 1_000_000;
  };
}
