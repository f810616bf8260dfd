/**
 * Statistics with numpy's conventions, as `vllm bench serve` uses them: mean, median, population
 * standard deviation (ddof = 0) and percentiles by linear interpolation (np.percentile's default).
 * An empty sample gives 0, never NaN (vLLM writes `xs or 0`).
 */

/** Linear-interpolated percentile of an ascending-sorted array, p in [0, 100]. */
export function percentileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  if (n === 1) return sorted[0] as number;
  const rank = (p / 100) * (n - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(lo + 1, n - 1);
  const frac = rank - lo;
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * frac;
}

export function mean(xs: ArrayLike<number>): number {
  if (xs.length === 0) return 0;
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i] as number;
  return s / xs.length;
}

export function populationStd(xs: ArrayLike<number>): number {
  if (xs.length === 0) return 0;
  const m = mean(xs);
  let s = 0;
  for (let i = 0; i < xs.length; i++) {
    const d = (xs[i] as number) - m;
    s += d * d;
  }
  return Math.sqrt(s / xs.length);
}

export interface Summary {
  readonly mean: number;
  readonly median: number;
  readonly std: number;
  readonly p50: number;
  readonly p90: number;
  readonly p95: number;
  readonly p99: number;
}

/** Summary of a sample; `scale` converts units (1000 for seconds → ms). */
export function summarize(xs: readonly number[], scale = 1): Summary {
  const sorted = Float64Array.from(xs, (x) => x * scale).sort();
  const med = percentileSorted(sorted, 50);
  return {
    mean: mean(sorted),
    median: med,
    std: populationStd(sorted),
    p50: med,
    p90: percentileSorted(sorted, 90),
    p95: percentileSorted(sorted, 95),
    p99: percentileSorted(sorted, 99),
  };
}

/** Slope, mean and residual standard deviation of y on x by ordinary least squares. */
export function leastSquares(x: Float64Array, y: Float64Array): { slope: number; mean: number; residualSd: number } {
  const n = x.length;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += (x[i] as number) / n;
    my += (y[i] as number) / n;
  }
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (x[i] as number) - mx;
    sxx += dx * dx;
    sxy += dx * ((y[i] as number) - my);
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  let rss = 0;
  for (let i = 0; i < n; i++) rss += ((y[i] as number) - my - slope * ((x[i] as number) - mx)) ** 2;
  return { slope, mean: my, residualSd: Math.sqrt(rss / Math.max(1, n - 2)) };
}
