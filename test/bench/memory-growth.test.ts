import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain ESM bench helper without types
import { growth } from '../../bench/memory-growth.mjs';

interface Figure {
  pct: number;
}
interface Growth {
  raw: Figure;
  medians: Figure;
  trend: Figure & { per_min: number };
}
/** 20 minutes of samples every 15 s. */
const series = (value: (t: number) => number) => Array.from({ length: 81 }, (_, i) => ({ t_s: i * 15, value: value(i * 15) }));

describe('bench/memory-growth (the soak RSS figure)', () => {
  it('shows a steady leak in full: 150 MB rising 1 MB a minute is +13 % over 20 minutes', () => {
    const g = growth(series((t) => 150 + t / 60)) as Growth;
    expect(g.trend.pct).toBeCloseTo(13.3, 1);
    expect(g.medians.pct).toBeGreaterThan(10);
    expect(g.raw.pct).toBeCloseTo(13.3, 1);
  });

  it('is not fooled by a collection at the window start: flat at 155 MB with a 130 MB dip in the first 2 minutes', () => {
    const g = growth(series((t) => (t < 120 ? 130 : 155))) as Growth;
    expect(g.raw.pct).toBeGreaterThan(15);
    expect(Math.abs(g.trend.pct)).toBeLessThan(1);
  });

  it('still sees a leak that starts after a dip', () => {
    const g = growth(series((t) => (t < 60 ? 120 : 150 + t / 60))) as Growth;
    expect(g.trend.pct).toBeGreaterThan(10);
  });

  it('a sawtooth (heap between collections) with no drift reads flat', () => {
    const g = growth(series((t) => 60 + ((t / 15) % 8) * 3)) as Growth;
    expect(Math.abs(g.trend.pct)).toBeLessThan(2);
  });
});
