import type { Rng } from '../util/rng.js';
import type { BoundSpace } from './bound.js';

/**
 * Seeded space-filling sampling inside the feasible region, and local moves for the optimizer.
 *
 * Latin hypercube over the grid: each knob's [0, 1) is cut into m strata, every stratum used once
 * per batch, and the columns permuted independently; a coordinate picks the grid option it falls
 * on (a conditional knob only where active). Infeasible and repeated points are dropped and further
 * batches drawn, sized by the acceptance seen so far, until n feasible points are found.
 */

function shuffle(a: number[], rng: Rng): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = a[i] ?? 0;
    a[i] = a[j] ?? 0;
    a[j] = t;
  }
}

/** m points of a Latin hypercube in [0, 1)^dims. */
export function latinHypercube(m: number, dims: number, rng: Rng): Float64Array[] {
  const cols: number[][] = [];
  for (let d = 0; d < dims; d++) {
    const perm = Array.from({ length: m }, (_, i) => i);
    shuffle(perm, rng);
    cols.push(perm);
  }
  const out: Float64Array[] = [];
  for (let i = 0; i < m; i++) {
    const u = new Float64Array(dims);
    for (let d = 0; d < dims; d++) u[d] = ((cols[d]?.[i] ?? 0) + rng.next()) / m;
    out.push(u);
  }
  return out;
}

/** The grid point a unit-cube coordinate falls on. */
export function pointAt(b: BoundSpace, u: ArrayLike<number>): number[] {
  const point: number[] = [];
  for (let k = 0; k < b.options.length; k++) {
    const size = b.options[k]?.length ?? 1;
    const x = Math.min(0.999999999, Math.max(0, u[k] ?? 0));
    if (b.conditional[k] === true) point.push(b.isActive(k, point) ? 1 + Math.floor(x * (size - 1)) : 0);
    else point.push(Math.floor(x * size));
  }
  return point;
}

export interface SampleResult {
  readonly points: number[][];
  /** Candidates drawn (feasible or not). */
  readonly drawn: number;
}

export function sampleFeasible(b: BoundSpace, n: number, rng: Rng, maxDraws = Math.max(20_000, 200 * n)): SampleResult {
  const points: number[][] = [];
  const seen = new Set<string>();
  let drawn = 0;
  let accepted = 0;
  while (points.length < n && drawn < maxDraws) {
    const need = n - points.length;
    const rate = drawn === 0 ? 0.5 : Math.max(accepted / drawn, 0.001);
    const m = Math.min(maxDraws - drawn, Math.max(need, Math.ceil((need / rate) * 1.2)));
    for (const u of latinHypercube(m, b.options.length, rng)) {
      drawn++;
      const point = pointAt(b, u);
      const key = point.join(',');
      if (seen.has(key)) continue;
      seen.add(key);
      if (!b.checkPoint(point).ok) continue;
      accepted++;
      if (points.length < n) points.push(point);
    }
  }
  return { points, drawn };
}

/**
 * A neighbouring feasible point: one knob (sometimes two) moved one grid step, a categorical or a
 * boolean switched. Conditional knobs follow their parents: they appear at the grid option nearest
 * the knob's default (option 1 if none) when activated and vanish when deactivated. Returns null if
 * no feasible neighbour turns up in `tries` attempts.
 */
export function neighbour(b: BoundSpace, from: readonly number[], rng: Rng, defaults: readonly number[], tries = 64): number[] | null {
  const n = b.options.length;
  for (let t = 0; t < tries; t++) {
    const point = [...from];
    const moves = rng.next() < 0.25 ? 2 : 1;
    let changed = false;
    for (let m = 0; m < moves; m++) {
      const k = rng.int(n);
      const size = b.options[k]?.length ?? 1;
      const cur = point[k] ?? 0;
      if (b.conditional[k] === true && cur === 0) continue; // inactive: moved through its parent
      const lo = b.conditional[k] === true ? 1 : 0;
      if (size - lo < 2) continue;
      const knob = b.def.knobs[k]?.knob;
      let next: number;
      if (knob?.type === 'categorical') {
        next = lo + rng.int(size - lo - 1);
        if (next >= cur) next++;
      } else {
        next = cur + (rng.next() < 0.5 ? -1 : 1);
        if (next < lo) next = lo + 1;
        if (next >= size) next = size - 2;
      }
      point[k] = next;
      changed = true;
    }
    if (!changed) continue;
    // Re-derive the activity of conditional knobs from their (possibly moved) parents.
    for (let k = 0; k < n; k++) {
      if (b.conditional[k] !== true) continue;
      const active = b.isActive(k, point);
      if (!active) point[k] = 0;
      else if (point[k] === 0) point[k] = Math.max(1, defaults[k] ?? 1);
    }
    if (point.every((v, i) => v === from[i])) continue;
    if (b.checkPoint(point).ok) return point;
  }
  return null;
}

/**
 * Every feasible point one knob one grid step from `from` (a categorical knob: each other value), in
 * knob order: the coordinate neighbourhood a local search walks. Conditional knobs follow their parents
 * as in `neighbour`.
 */
export function neighbours(b: BoundSpace, from: readonly number[], defaults: readonly number[]): number[][] {
  const n = b.options.length;
  const out: number[][] = [];
  const seen = new Set<string>([from.join(',')]);
  for (let k = 0; k < n; k++) {
    const size = b.options[k]?.length ?? 1;
    const cur = from[k] ?? 0;
    if (b.conditional[k] === true && cur === 0) continue;
    const lo = b.conditional[k] === true ? 1 : 0;
    const knob = b.def.knobs[k]?.knob;
    const moves = knob?.type === 'categorical' ? [...Array(size).keys()].filter((v) => v >= lo && v !== cur) : [cur - 1, cur + 1].filter((v) => v >= lo && v < size);
    for (const next of moves) {
      const point = [...from];
      point[k] = next;
      for (let j = 0; j < n; j++) {
        if (b.conditional[j] !== true) continue;
        if (!b.isActive(j, point)) point[j] = 0;
        else if (point[j] === 0) point[j] = Math.max(1, defaults[j] ?? 1);
      }
      const key = point.join(',');
      if (seen.has(key)) continue;
      seen.add(key);
      if (b.checkPoint(point).ok) out.push(point);
    }
  }
  return out;
}
