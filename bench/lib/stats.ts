/** Small statistics for benchmarks: medians and an exact one-sided Mann–Whitney U test. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return Number.NaN;
  return n % 2 === 1 ? (s[(n - 1) / 2] as number) : ((s[n / 2 - 1] as number) + (s[n / 2] as number)) / 2;
}

/** U statistic of a over b: pairs where a > b count 1, ties 0.5. */
export function uStatistic(a: readonly number[], b: readonly number[]): number {
  let u = 0;
  for (const x of a) for (const y of b) u += x > y ? 1 : x === y ? 0.5 : 0;
  return u;
}

/**
 * Exact one-sided p-value that `a` is stochastically larger than `b`: the share of all ways to split
 * the pooled values into groups of |a| and |b| whose U is at least the observed one (small n only).
 */
export function mannWhitneyGreater(a: readonly number[], b: readonly number[]): number {
  const pooled = [...a, ...b];
  const n = pooled.length;
  const k = a.length;
  const observed = uStatistic(a, b);
  let total = 0;
  let extreme = 0;
  const pick: number[] = [];
  const rec = (start: number): void => {
    if (pick.length === k) {
      const inA = new Set(pick);
      const ga = pick.map((i) => pooled[i] as number);
      const gb = pooled.filter((_, i) => !inA.has(i));
      total++;
      if (uStatistic(ga, gb) >= observed - 1e-12) extreme++;
      return;
    }
    for (let i = start; i <= n - (k - pick.length); i++) {
      pick.push(i);
      rec(i + 1);
      pick.pop();
    }
  };
  rec(0);
  return extreme / total;
}

/** The q-quantile (0 ≤ q ≤ 1) by linear interpolation between order statistics. */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return (s[lo] as number) + ((s[hi] as number) - (s[lo] as number)) * (pos - lo);
}
