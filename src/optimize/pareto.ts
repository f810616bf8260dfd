/**
 * Pareto dominance, non-dominated sorting and crowding distance. Every point here is a vector to
 * MINIMIZE (objectives.ts turns maximized objectives into their negatives before they arrive).
 */
export type Point = readonly number[];

/**
 * a dominates b: no worse in every objective and strictly better in at least one. A NaN on either side
 * (a figure one of them lacks) makes them incomparable: without this, [NaN, 100] "dominated" [-5, 200]
 * on the second objective alone, since no comparison with NaN says it is worse.
 */
export function dominates(a: Point, b: Point): boolean {
  let strictly = false;
  for (let i = 0; i < a.length; i++) {
    const ai = a[i] ?? 0;
    const bi = b[i] ?? 0;
    if (Number.isNaN(ai) || Number.isNaN(bi)) return false;
    if (ai > bi) return false;
    if (ai < bi) strictly = true;
  }
  return strictly;
}

/**
 * Fast non-dominated sort (Deb et al., NSGA-II): fronts of indices, front 0 being the Pareto set.
 * O(M·N²), fine for the hundreds of measured trials and thousands of candidates it sees.
 */
export function nonDominatedSort(points: readonly Point[]): number[][] {
  const n = points.length;
  const dominatedBy = new Int32Array(n);
  const dominatesList: number[][] = Array.from({ length: n }, () => []);
  const fronts: number[][] = [[]];
  for (let p = 0; p < n; p++) {
    const pp = points[p] ?? [];
    for (let q = p + 1; q < n; q++) {
      const qq = points[q] ?? [];
      if (dominates(pp, qq)) {
        dominatesList[p]?.push(q);
        dominatedBy[q] = (dominatedBy[q] ?? 0) + 1;
      } else if (dominates(qq, pp)) {
        dominatesList[q]?.push(p);
        dominatedBy[p] = (dominatedBy[p] ?? 0) + 1;
      }
    }
  }
  for (let p = 0; p < n; p++) if (dominatedBy[p] === 0) fronts[0]?.push(p);
  let i = 0;
  for (;;) {
    const next: number[] = [];
    for (const p of fronts[i] ?? []) {
      for (const q of dominatesList[p] ?? []) {
        dominatedBy[q] = (dominatedBy[q] ?? 0) - 1;
        if (dominatedBy[q] === 0) next.push(q);
      }
    }
    if (next.length === 0) break;
    fronts.push(next);
    i++;
  }
  return n === 0 ? [] : fronts;
}

/** A point with a NaN coordinate (a figure the run lacks) cannot be compared, so it is on no front. */
const placeable = (p: Point): boolean => !p.some((v) => Number.isNaN(v));

/**
 * Indices of the non-dominated points (duplicates of a front point are all kept). A point with a NaN
 * coordinate is left out: no point dominates it (every comparison with NaN is false), so it would
 * otherwise sit on every front whatever its other figures.
 */
export function paretoFront(points: readonly Point[]): number[] {
  const front: number[] = [];
  for (let i = 0; i < points.length; i++) {
    const pi = points[i] ?? [];
    if (!placeable(pi)) continue;
    let dominated = false;
    for (let j = 0; j < points.length && !dominated; j++) dominated = j !== i && dominates(points[j] ?? [], pi);
    if (!dominated) front.push(i);
  }
  return front;
}

/** NSGA-II crowding distance within one front; boundary points get +Infinity. */
export function crowdingDistance(points: readonly Point[]): number[] {
  const n = points.length;
  const dist = new Array<number>(n).fill(0);
  if (n <= 2) return dist.fill(Number.POSITIVE_INFINITY);
  const m = points[0]?.length ?? 0;
  for (let k = 0; k < m; k++) {
    const order = [...points.keys()].sort((a, b) => (points[a]?.[k] ?? 0) - (points[b]?.[k] ?? 0));
    const first = order[0] ?? 0;
    const last = order[n - 1] ?? 0;
    const lo = points[first]?.[k] ?? 0;
    const hi = points[last]?.[k] ?? 0;
    dist[first] = Number.POSITIVE_INFINITY;
    dist[last] = Number.POSITIVE_INFINITY;
    if (hi === lo) continue;
    for (let i = 1; i < n - 1; i++) {
      const idx = order[i] ?? 0;
      const gap = (points[order[i + 1] ?? 0]?.[k] ?? 0) - (points[order[i - 1] ?? 0]?.[k] ?? 0);
      dist[idx] = (dist[idx] ?? 0) + gap / (hi - lo);
    }
  }
  return dist;
}
