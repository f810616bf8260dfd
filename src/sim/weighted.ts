import type { Summary } from '../metrics/index.js';

/**
 * A sample kept as (value, count) pairs: the pooled inter-token gaps of a run without one array
 * entry per token. A decode step of R requests adds one pair (its duration, R), so a run of millions
 * of tokens keeps one pair per step. Percentiles interpolate linearly over the expanded sample, exactly
 * as numpy's over the plain list would.
 */
export class WeightedSample {
  private values: number[] = [];
  private counts: number[] = [];
  private total = 0;
  private sum = 0;

  add(value: number, count = 1): void {
    if (count <= 0) return;
    this.values.push(value);
    this.counts.push(count);
    this.total += count;
    this.sum += value * count;
  }

  get size(): number {
    return this.total;
  }

  mean(): number {
    return this.total === 0 ? 0 : this.sum / this.total;
  }

  /**
   * metrics/stats.ts `summarize(expanded, scale)` bit for bit, without expanding: the values scaled and
   * taken in ascending order, the mean and the population deviation summed one element at a time in that
   * order (so the rounding is the plain list's), the percentiles read at the same ranks. Time is linear
   * in the sample's size, memory in its pairs.
   */
  summary(scale = 1): Summary {
    const n = this.total;
    if (n === 0) return { mean: 0, median: 0, std: 0, p50: 0, p90: 0, p95: 0, p99: 0 };
    const order = Float64Array.from(this.values.keys()).sort((a, b) => (this.values[a] as number) - (this.values[b] as number));
    const scaled = Float64Array.from(order, (i) => (this.values[i] as number) * scale);
    const counts = Float64Array.from(order, (i) => this.counts[i] as number);
    let sum = 0;
    for (let i = 0; i < scaled.length; i++) {
      const x = scaled[i] as number;
      for (let c = counts[i] as number; c > 0; c--) sum += x;
    }
    const mean = sum / n;
    let squares = 0;
    for (let i = 0; i < scaled.length; i++) {
      const d = (scaled[i] as number) - mean;
      for (let c = counts[i] as number; c > 0; c--) squares += d * d;
    }
    // The element at each 0-based rank of the expanded, sorted sample, ranks asked in ascending order.
    const at = (rank: number): number => {
      let seen = 0;
      for (let i = 0; i < scaled.length; i++) {
        seen += counts[i] as number;
        if (rank < seen) return scaled[i] as number;
      }
      return scaled[scaled.length - 1] as number;
    };
    const pct = (p: number): number => {
      if (n === 1) return scaled[0] as number;
      const rank = (p / 100) * (n - 1);
      const lo = Math.floor(rank);
      const a = at(lo);
      const b = at(Math.min(lo + 1, n - 1));
      return a + (b - a) * (rank - lo);
    };
    const median = pct(50);
    return { mean, median, std: Math.sqrt(squares / n), p50: median, p90: pct(90), p95: pct(95), p99: pct(99) };
  }

  /** Percentiles p in [0, 100] (np.percentile's linear rule), several at once (one sort). */
  percentiles(ps: readonly number[]): number[] {
    if (this.total === 0) return ps.map(() => 0);
    const order = [...this.values.keys()].sort((a, b) => (this.values[a] as number) - (this.values[b] as number));
    const at = (rank: number): number => {
      // The value at 0-based position `rank` of the expanded, sorted sample.
      let seen = 0;
      for (const i of order) {
        seen += this.counts[i] as number;
        if (rank < seen) return this.values[i] as number;
      }
      return this.values[order[order.length - 1] as number] as number;
    };
    return ps.map((p) => {
      const rank = (p / 100) * (this.total - 1);
      const lo = Math.floor(rank);
      const a = at(lo);
      const b = lo + 1 <= this.total - 1 ? at(lo + 1) : a;
      return a + (b - a) * (rank - lo);
    });
  }
}
