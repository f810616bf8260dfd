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
