import { LmBenchError } from '../errors.js';
import type { Rng } from '../util/rng.js';
import { paretoFront, type Point } from './pareto.js';

/**
 * Hypervolume of the region dominated by a set of points (minimization) and bounded by a reference
 * point: exact for 2 and 3 objectives, Monte-Carlo (seeded) beyond. Points that do not strictly
 * dominate the reference contribute nothing.
 */
export interface HypervolumeOptions {
  /** Required for more than 3 objectives: the Monte-Carlo sampler's stream. */
  readonly rng?: Rng;
  /** Monte-Carlo samples (more than 3 objectives only). */
  readonly samples?: number;
}

function inside(p: Point, ref: Point): boolean {
  for (let i = 0; i < ref.length; i++) if (!((p[i] ?? 0) < (ref[i] ?? 0))) return false;
  return true;
}

/** Exact 2-D sweep: sort by the first objective, accumulate the staircase. O(n log n). */
export function hypervolume2d(points: readonly Point[], ref: Point): number {
  const rx = ref[0] ?? 0;
  const ry = ref[1] ?? 0;
  const pts = points.filter((p) => inside(p, ref)).sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0) || (a[1] ?? 0) - (b[1] ?? 0));
  let area = 0;
  let bestY = ry;
  for (let i = 0; i < pts.length; i++) {
    const p = pts[i] ?? [];
    const y = p[1] ?? 0;
    if (y >= bestY) continue;
    // Width until the next point that improves on y (or the reference).
    let j = i + 1;
    while (j < pts.length && (pts[j]?.[1] ?? 0) >= y) j++;
    const nextX = j < pts.length ? (pts[j]?.[0] ?? rx) : rx;
    area += (nextX - (p[0] ?? 0)) * (ry - y);
    bestY = y;
    i = j - 1;
  }
  return area;
}

/** Exact 3-D: slice along the third objective and sum 2-D areas. O(n² log n), for fronts of hundreds. */
export function hypervolume3d(points: readonly Point[], ref: Point): number {
  const pts = points.filter((p) => inside(p, ref)).sort((a, b) => (a[2] ?? 0) - (b[2] ?? 0));
  const ref2 = [ref[0] ?? 0, ref[1] ?? 0];
  let vol = 0;
  for (let i = 0; i < pts.length; i++) {
    const z = pts[i]?.[2] ?? 0;
    const zNext = i + 1 < pts.length ? (pts[i + 1]?.[2] ?? 0) : (ref[2] ?? 0);
    if (zNext <= z) continue;
    vol += hypervolume2d(pts.slice(0, i + 1), ref2) * (zNext - z);
  }
  return vol;
}

/** Monte-Carlo estimate in the box [ideal, ref]: fraction of uniform samples dominated by some point. */
export function hypervolumeMonteCarlo(points: readonly Point[], ref: Point, rng: Rng, samples = 100_000): number {
  const pts = points.filter((p) => inside(p, ref));
  if (pts.length === 0) return 0;
  const m = ref.length;
  const lo = Array.from({ length: m }, (_, k) => Math.min(...pts.map((p) => p[k] ?? 0)));
  let box = 1;
  for (let k = 0; k < m; k++) box *= (ref[k] ?? 0) - (lo[k] ?? 0);
  const u = new Float64Array(m);
  let hits = 0;
  for (let s = 0; s < samples; s++) {
    for (let k = 0; k < m; k++) u[k] = (lo[k] ?? 0) + rng.next() * ((ref[k] ?? 0) - (lo[k] ?? 0));
    for (const p of pts) {
      let dom = true;
      for (let k = 0; k < m && dom; k++) dom = (p[k] ?? 0) <= (u[k] ?? 0);
      if (dom) {
        hits++;
        break;
      }
    }
  }
  return (box * hits) / samples;
}

export function hypervolume(points: readonly Point[], ref: Point, opts: HypervolumeOptions = {}): number {
  const front = paretoFront(points).map((i) => points[i] ?? []);
  switch (ref.length) {
    case 1:
      return Math.max(0, (ref[0] ?? 0) - Math.min(ref[0] ?? 0, ...front.filter((p) => inside(p, ref)).map((p) => p[0] ?? 0)));
    case 2:
      return hypervolume2d(front, ref);
    case 3:
      return hypervolume3d(front, ref);
    default: {
      if (opts.rng === undefined) throw new LmBenchError('LMB_ERR_INTERNAL', 'hypervolume: more than 3 objectives need an rng for the Monte-Carlo estimate');
      return hypervolumeMonteCarlo(front, ref, opts.rng, opts.samples);
    }
  }
}

/**
 * A 2-D front prepared for many hypervolume-improvement queries: non-dominated, inside the reference,
 * sorted by the first objective (so the second is strictly decreasing).
 */
export interface Front2d {
  readonly xs: Float64Array;
  readonly ys: Float64Array;
  readonly ref: readonly [number, number];
}

export function prepareFront2d(points: readonly Point[], ref: Point): Front2d {
  const inRef = points.filter((p) => inside(p, ref));
  const front = paretoFront(inRef)
    .map((i) => inRef[i] ?? [])
    .sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0));
  const xs: number[] = [];
  const ys: number[] = [];
  for (const p of front) {
    const y = p[1] ?? 0;
    if (ys.length > 0 && y >= (ys[ys.length - 1] ?? 0)) continue; // duplicate
    xs.push(p[0] ?? 0);
    ys.push(y);
  }
  return { xs: Float64Array.from(xs), ys: Float64Array.from(ys), ref: [ref[0] ?? 0, ref[1] ?? 0] };
}

/**
 * Hypervolume improvement of adding (px, py) to a prepared 2-D front, in O(front size): the box the
 * point dominates minus the staircase of the front clipped to that box.
 */
export function hvImprovement2d(front: Front2d, px: number, py: number): number {
  const [rx, ry] = front.ref;
  if (!(px < rx && py < ry)) return 0;
  // Clipped to the point's box, the front stays a staircase (x non-decreasing, y non-increasing), so
  // the covered area is a sum of strips. Both coordinates stay inside the reference by construction.
  const { xs, ys } = front;
  let covered = 0;
  let prevX = 0;
  let prevY = 0;
  for (let i = 0; i < xs.length; i++) {
    const x = Math.max(xs[i] ?? 0, px);
    const y = Math.max(ys[i] ?? 0, py);
    if (i > 0) covered += (x - prevX) * (ry - prevY);
    prevX = x;
    prevY = y;
  }
  if (xs.length > 0) covered += (rx - prevX) * (ry - prevY);
  return (rx - px) * (ry - py) - covered;
}
