// How much a memory figure grew over a window of samples, for bench/soak.mjs (issue 19: "RSS stable, no growth over
// the last 20 minutes beyond 10 %"). Three readings of the same samples:
//
//  - raw: the window's first sample → its last. What a person reading the series sees, but one collection (or a page
//    cache trimmed) at either end moves it by tens of percent.
//  - medians: the median of the window's first 3 minutes → the median of its last 3 minutes. Shrugs off one low or
//    high sample; a dip that lasts minutes still moves it.
//  - trend (judged): the Theil–Sen line through every sample of the window (the median of the slopes between all
//    pairs of samples), its rise over the window as a percentage of its value at the window's start. A steady leak
//    is a steady slope and shows in full; a collection is a few samples out of line, and up to ~29 % of the samples
//    can be out of line before the median slope moves. Not lenient: it grows with the growth, from any starting value.
//
// Samples: [{ t_s, value }] in time order. Returns null figures when there are fewer than 2 samples.

const median = (values) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** The Theil–Sen line: slope = median of pairwise slopes, intercept = median of (value − slope · t). */
export function theilSen(samples) {
  const slopes = [];
  for (let i = 0; i < samples.length; i++) {
    for (let j = i + 1; j < samples.length; j++) {
      const dt = samples[j].t_s - samples[i].t_s;
      if (dt > 0) slopes.push((samples[j].value - samples[i].value) / dt);
    }
  }
  if (slopes.length === 0) return null;
  const slope = median(slopes);
  return { slope, intercept: median(samples.map((s) => s.value - slope * s.t_s)) };
}

const pct = (from, to) => (from > 0 && to !== null ? ((to - from) / from) * 100 : null);

/**
 * @param samples [{ t_s, value }] in time order, all in the window
 * @param edgeS how long the medians' ends are (default 3 minutes)
 */
export function growth(samples, edgeS = 180) {
  if (samples.length < 2) return { n: samples.length, raw: null, medians: null, trend: null };
  const start = samples[0].t_s;
  const end = samples.at(-1).t_s;
  // A window shorter than 12 minutes (a short run) compares its first and last quarters.
  edgeS = Math.min(edgeS, (end - start) / 4);
  const head = median(samples.filter((s) => s.t_s <= start + edgeS).map((s) => s.value));
  const tail = median(samples.filter((s) => s.t_s >= end - edgeS).map((s) => s.value));
  const line = theilSen(samples);
  const fitStart = line.intercept + line.slope * start;
  const fitEnd = line.intercept + line.slope * end;
  return {
    n: samples.length,
    span_s: end - start,
    raw: { from: samples[0].value, to: samples.at(-1).value, pct: pct(samples[0].value, samples.at(-1).value) },
    medians: { edge_s: edgeS, from: head, to: tail, pct: pct(head, tail) },
    trend: { from: fitStart, to: fitEnd, per_min: line.slope * 60, pct: pct(fitStart, fitEnd) },
  };
}
