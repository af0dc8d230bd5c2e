/**
 * Keeping plot data small: a plot carries its data inline (a reader opens the `.vl.json` as is), so
 * every series is cut to a bounded number of points however long the run — a CDF to evenly spaced
 * ranks, a time series to buckets that keep their extreme sample (a queue's peak, a clock's worst
 * error stay visible).
 */

/** Points per CDF line: enough for a smooth curve at the plot's width. */
export const CDF_POINTS = 200;
/** Points per time-series line: about one per pixel column of the plot. */
export const SERIES_POINTS = 500;

/** The empirical CDF of `values` as at most `max` (value, fraction ≤ value) points, the extremes kept. */
export function cdf(values: ArrayLike<number>, max = CDF_POINTS): Array<{ x: number; p: number }> {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0) return [];
  const k = Math.min(n, max);
  const out: Array<{ x: number; p: number }> = [];
  for (let j = 0; j < k; j++) {
    // ranks spread over 1..n, the smallest and the largest included
    const rank = k === 1 ? n : 1 + Math.round((j * (n - 1)) / (k - 1));
    out.push({ x: sorted[rank - 1], p: rank / n });
  }
  return out;
}

/**
 * Indices of at most `max` samples of a series, one per bucket of consecutive samples: the one of
 * largest |value| (ties: the first). Every index is kept when the series is short enough.
 */
export function thin(v: ArrayLike<number>, max = SERIES_POINTS): number[] {
  const n = v.length;
  if (n <= max) return Array.from({ length: n }, (_, i) => i);
  const out: number[] = [];
  for (let b = 0; b < max; b++) {
    const lo = Math.floor((b * n) / max);
    const hi = Math.floor(((b + 1) * n) / max);
    let best = lo;
    for (let i = lo + 1; i < hi; i++) if (Math.abs(v[i]) > Math.abs(v[best])) best = i;
    out.push(best);
  }
  return out;
}

/** A time unit that keeps axis labels short for a span of `spanNs`: µs up to 2 ms, ms beyond. */
export function timeUnit(spanNs: number): { div: number; label: string } {
  return spanNs > 2_000_000 ? { div: 1e6, label: 'ms' } : { div: 1e3, label: 'µs' };
}
