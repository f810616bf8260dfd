import type { Rng } from '../util/rng.js';
import type { BoundSpace } from './bound.js';
import type { RuleKind } from './schema.js';

/**
 * Counts what the rules remove from the discretised space without visiting every point.
 *
 * A depth-first walk binds the knobs rules read, in the order of the first rule reading them; a rule
 * is checked as soon as all its knobs are bound. Attribution is first-match in file order: a point
 * removed by several rules counts for the earliest. Once a subtree already breaks rule r and no rule
 * before r is left to check deeper, the whole subtree is counted for r at once. Knobs no rule reads
 * only multiply the counts. Each rule itself is evaluated once per combination of its own knobs.
 */

export interface RuleRemoval {
  readonly id: string;
  readonly kind: RuleKind;
  readonly source: string;
  readonly require: string;
  /** Points whose first broken rule (file order) is this one. */
  readonly removed: number;
}

export interface PruneCounts {
  readonly pointsBefore: number;
  readonly pointsAfter: number;
  readonly rules: readonly RuleRemoval[];
  /** CEL evaluations this prune cost (cached per rule over the knobs it reads). */
  readonly evaluations: number;
  /** Counted point by point (exact), or estimated from `samples` uniform draws where counting would not end. */
  readonly method: 'exact' | 'estimate';
  readonly samples: number | null;
  /** Why the counts are estimated: the rule whose knobs multiply to the most combinations. */
  readonly costliest: Costliest | null;
}

/** The rule whose table (combinations of the knobs it reads) is largest, with those knobs, largest grid first. */
export interface Costliest {
  readonly rule: string;
  readonly combinations: number;
  readonly knobs: readonly { readonly name: string; readonly points: number }[];
}

/**
 * What an exact count may cost before it gives way to an estimate: rule evaluations (each may run
 * the memory model) and walk steps. The shipped space on 8 GPUs costs about 8.5×10^5 evaluations
 * for a dense model and 3–6×10^6 for an MoE model (whose memory also reads DP and EP); a file with
 * fine steps on a dozen knobs would cost 10^12 and more (it never finished).
 */
export const EXACT_BUDGET = { evaluations: 8_000_000, steps: 100_000_000 } as const;
/** A rule table this many times the evaluation budget is not even tried (the walk cannot finish within it). */
const HOPELESS_FACTOR = 100;
/** Draws behind an estimate: a rule removing 1% of the grid is seen ~200 times. */
export const ESTIMATE_SAMPLES = 20_000;

class OverBudget extends Error {}

export function costliestRule(b: BoundSpace): Costliest | null {
  let best: Costliest | null = null;
  for (const t of b.tables) {
    const knobs = t.reads.map((p) => ({ name: b.def.knobs[p]?.knob.name ?? '', points: b.options[p]?.length ?? 1 }));
    const combinations = knobs.reduce((a, k) => a * k.points, 1);
    if (best === null || combinations > best.combinations) best = { rule: t.rule.id, combinations, knobs: [...knobs].sort((x, y) => y.points - x.points) };
  }
  return best;
}

/**
 * Exact counts where they fit the budget, else an estimate from uniform draws over the grid (the
 * point count itself stays exact: it needs no rule).
 */
export function pruneCountsOrEstimate(b: BoundSpace, rng: Rng, budget: { readonly evaluations: number; readonly steps: number } = EXACT_BUDGET): PruneCounts {
  const costliest = costliestRule(b);
  if ((costliest?.combinations ?? 0) <= budget.evaluations * HOPELESS_FACTOR) {
    try {
      return pruneCounts(b, budget);
    } catch (err) {
      if (!(err instanceof OverBudget)) throw err;
    }
  }
  return estimateCounts(b, ESTIMATE_SAMPLES, rng, costliest);
}

/**
 * Estimated removals per rule (first-match, as the exact count) from n points drawn uniformly from
 * the grid. A conditional knob's options are drawn where active and the draw weighted by their
 * number, so every point of the space, not every parent value, is equally likely.
 */
export function estimateCounts(b: BoundSpace, n: number, rng: Rng, costliest: Costliest | null = costliestRule(b)): PruneCounts {
  const start = b.evaluations;
  const R = b.tables.length;
  const weight = new Float64Array(R + 1);
  const point = new Array<number>(b.options.length).fill(0);
  for (let i = 0; i < n; i++) {
    let w = 1;
    for (let k = 0; k < point.length; k++) {
      const size = b.options[k]?.length ?? 1;
      if (b.conditional[k] !== true) point[k] = rng.int(size);
      else if (b.isActive(k, point)) {
        point[k] = 1 + rng.int(size - 1);
        w *= size - 1;
      } else point[k] = 0;
    }
    let first = R;
    for (let r = 0; r < R; r++) {
      const t = b.tables[r];
      if (t !== undefined && !b.passes(t, point)) {
        first = r;
        break;
      }
    }
    weight[first] = (weight[first] ?? 0) + w;
  }
  const total = weight.reduce((a, x) => a + x, 0);
  const before = spaceSize(b);
  const removed = Array.from(weight.subarray(0, R), (x) => (total > 0 ? Math.round((before * x) / total) : 0));
  const rules = b.tables.map((t, i) => ({ id: t.rule.id, kind: t.rule.kind, source: t.rule.source, require: t.rule.require, removed: removed[i] ?? 0 }));
  const after = Math.max(0, before - removed.reduce((a, x) => a + x, 0));
  return { pointsBefore: before, pointsAfter: after, rules, evaluations: b.evaluations - start, method: 'estimate', samples: n, costliest };
}

interface Plan {
  readonly order: readonly number[];
  /** Rules (indices into tables) checkable right after binding order[d]; index 0 = before any knob. */
  readonly rulesAt: readonly (readonly number[])[];
  readonly minDeeper: readonly number[];
  /** Product of the sizes of knobs outside the walk. */
  readonly freeProduct: number;
}

function plan(b: BoundSpace): Plan {
  const n = b.def.knobs.length;
  const names = b.def.knobs.map((k) => k.knob.name);
  const firstRule = new Array<number>(n).fill(Number.POSITIVE_INFINITY);
  b.tables.forEach((t, ri) => {
    for (const p of t.reads) firstRule[p] = Math.min(firstRule[p] ?? Number.POSITIVE_INFINITY, ri);
  });
  const parents = b.def.knobs.map((k) => (k.when?.reads ?? []).map((r) => names.indexOf(r)));
  // Knobs in the walk: those a rule reads, conditional knobs and their parents (their counts depend on each other).
  const inWalk = new Set<number>();
  for (let k = 0; k < n; k++) {
    if (Number.isFinite(firstRule[k] ?? Infinity) || b.conditional[k] === true) inWalk.add(k);
    if (b.conditional[k] === true) for (const p of parents[k] ?? []) inWalk.add(p);
  }
  const order = [...inWalk].sort((x, y) => (firstRule[x] ?? 0) - (firstRule[y] ?? 0) || x - y);
  // A conditional knob goes after its parents.
  for (let k = 0; k < n; k++) {
    if (b.conditional[k] !== true) continue;
    const at = order.indexOf(k);
    const last = Math.max(...(parents[k] ?? []).map((p) => order.indexOf(p)));
    if (last > at) {
      order.splice(at, 1);
      order.splice(last, 0, k);
    }
  }
  const depthOf = new Map(order.map((k, d) => [k, d + 1]));
  const rulesAt: number[][] = Array.from({ length: order.length + 1 }, () => []);
  b.tables.forEach((t, ri) => {
    const d = Math.max(0, ...t.reads.map((p) => depthOf.get(p) ?? 0));
    rulesAt[d]?.push(ri);
  });
  const minDeeper = rulesAt.map((_, d) => Math.min(Number.POSITIVE_INFINITY, ...rulesAt.slice(d + 1).flat()));
  let freeProduct = 1;
  for (let k = 0; k < n; k++) if (!inWalk.has(k)) freeProduct *= b.options[k]?.length ?? 1;
  return { order, rulesAt, minDeeper, freeProduct };
}

/** Options of knob k at a partial point: a conditional knob is inactive (0) or one of its grid values. */
function range(b: BoundSpace, k: number, point: readonly number[]): [number, number] {
  const size = b.options[k]?.length ?? 1;
  if (b.conditional[k] !== true) return [0, size];
  return b.isActive(k, point) ? [1, size] : [0, 1];
}

/** Exact counts; throws OverBudget past the budget (see pruneCountsOrEstimate). */
export function pruneCounts(b: BoundSpace, budget: { readonly evaluations: number; readonly steps: number } = { evaluations: Infinity, steps: Infinity }): PruneCounts {
  const p = plan(b);
  const start = b.evaluations;
  let steps = 0;
  const point = new Array<number>(b.def.knobs.length).fill(0);
  const L = p.order.length;
  const restMemo = new Map<string, number>();

  // Points below depth d given the bound prefix. Only conditional knobs and their parents need
  // enumerating (activity depends on them); every other remaining knob just multiplies.
  const parentsOf = b.def.knobs.map((k) => (k.when?.reads ?? []).map((r) => b.def.knobs.findIndex((x) => x.knob.name === r)));
  const restPlans = Array.from({ length: L + 1 }, (_, d) => {
    const remaining = p.order.slice(d);
    const involved = new Set<number>();
    for (const k of remaining) {
      if (b.conditional[k] !== true) continue;
      involved.add(k);
      for (const q of parentsOf[k] ?? []) if (remaining.includes(q)) involved.add(q);
    }
    let plain = 1;
    for (const k of remaining) if (!involved.has(k)) plain *= b.options[k]?.length ?? 1;
    const boundParents = [...new Set(remaining.flatMap((k) => (b.conditional[k] === true ? (parentsOf[k] ?? []) : [])))].filter((q) => !remaining.includes(q));
    return { involved: remaining.filter((k) => involved.has(k)), plain, boundParents };
  });
  const rest = (d: number): number => {
    const rp = restPlans[d];
    if (rp === undefined) return 1;
    if (rp.involved.length === 0) return rp.plain;
    const key = `${d}|${rp.boundParents.map((q) => point[q]).join(',')}`;
    const hit = restMemo.get(key);
    if (hit !== undefined) return hit;
    const saved = rp.involved.map((k) => point[k] ?? 0);
    const enumerate = (i: number): number => {
      const k = rp.involved[i];
      if (k === undefined) return 1;
      const [lo, hi] = range(b, k, point);
      let total = 0;
      for (let o = lo; o < hi; o++) {
        point[k] = o;
        total += enumerate(i + 1);
      }
      return total;
    };
    const total = rp.plain * enumerate(0);
    rp.involved.forEach((k, i) => (point[k] = saved[i] ?? 0));
    restMemo.set(key, total);
    return total;
  };

  // Subtree counts depend only on the bound knobs deeper rules (or deeper conditions) still read, and
  // on the earliest rule already broken; a knob no deeper rule reads (data_parallel_size after C1,
  // enable_chunked_prefill after C7) then multiplies a cached result instead of a repeated walk.
  const R = b.tables.length;
  const INF = Number.POSITIVE_INFINITY;
  const relevant = Array.from({ length: L + 1 }, (_, d) => {
    const bound = p.order.slice(0, d);
    const deeperRules = p.rulesAt.slice(d + 1).flat();
    const need = new Set<number>();
    for (const ri of deeperRules) for (const q of b.tables[ri]?.reads ?? []) need.add(q);
    for (const k of p.order.slice(d)) if (b.conditional[k] === true) for (const q of parentsOf[k] ?? []) need.add(q);
    const rel = bound.filter((k) => need.has(k));
    return { rel, irrelevant: bound.length - rel.length, memo: false };
  });
  // Memoise only where a knob has just become irrelevant: deeper levels would pay for keys without hits.
  for (let d = 1; d <= L; d++) {
    const r = relevant[d];
    if (r !== undefined && r.irrelevant > (relevant[d - 1]?.irrelevant ?? 0)) r.memo = true;
  }
  const walkMemo = new Map<string, Float64Array>();

  const walk = (d: number, first: number, acc: Float64Array, mult: number): void => {
    if (d === L) {
      acc[first === INF ? R : first] = (acc[first === INF ? R : first] ?? 0) + mult;
      return;
    }
    const rv = relevant[d];
    if (rv?.memo === true) {
      const key = `${d}|${first}|${rv.rel.map((q) => point[q]).join(',')}`;
      let sub = walkMemo.get(key);
      if (sub === undefined) {
        sub = new Float64Array(R + 1);
        expand(d, first, sub, 1);
        if (walkMemo.size < 2_000_000) walkMemo.set(key, sub);
      }
      for (let i = 0; i <= R; i++) acc[i] = (acc[i] ?? 0) + (sub[i] ?? 0) * mult;
      return;
    }
    expand(d, first, acc, mult);
  };

  const expand = (d: number, first: number, acc: Float64Array, mult: number): void => {
    const k = p.order[d] ?? 0;
    const [lo, hi] = range(b, k, point);
    const checks = p.rulesAt[d + 1] ?? [];
    const deeper = p.minDeeper[d + 1] ?? INF;
    const saved = point[k] ?? 0;
    for (let o = lo; o < hi; o++) {
      if (++steps > budget.steps || b.evaluations - start > budget.evaluations) throw new OverBudget();
      point[k] = o;
      let f = first;
      for (const ri of checks) {
        if (ri >= f) break;
        const t = b.tables[ri];
        if (t !== undefined && !b.passes(t, point)) f = ri;
      }
      if (f !== INF && deeper > f) acc[f] = (acc[f] ?? 0) + mult * rest(d + 1);
      else walk(d + 1, f, acc, mult);
    }
    point[k] = saved;
  };

  const acc = new Float64Array(R + 1);
  let first = INF;
  for (const ri of p.rulesAt[0] ?? []) {
    const t = b.tables[ri];
    if (t !== undefined && !b.passes(t, point)) {
      first = ri;
      break;
    }
  }
  if (first !== INF && (p.minDeeper[0] ?? INF) > first) acc[first] = rest(0);
  else walk(0, first, acc, 1);
  const removed = Array.from(acc.subarray(0, R), (x) => x * p.freeProduct);
  const kept = (acc[R] ?? 0) * p.freeProduct;

  const rules = b.tables.map((t, i) => ({ id: t.rule.id, kind: t.rule.kind, source: t.rule.source, require: t.rule.require, removed: removed[i] ?? 0 }));
  return { pointsBefore: kept + removed.reduce((a, x) => a + x, 0), pointsAfter: kept, rules, evaluations: b.evaluations - start, method: 'exact', samples: null, costliest: null };
}

/** Number of points of the discretised space (conditional knobs counted only where active). */
export function spaceSize(b: BoundSpace): number {
  const n = b.def.knobs.length;
  const names = b.def.knobs.map((k) => k.knob.name);
  // Only conditional knobs and their parents need enumerating; every other knob multiplies.
  const involved = new Set<number>();
  for (let k = 0; k < n; k++) {
    if (b.conditional[k] !== true) continue;
    involved.add(k);
    for (const r of b.def.knobs[k]?.when?.reads ?? []) involved.add(names.indexOf(r));
  }
  let plain = 1;
  for (let k = 0; k < n; k++) if (!involved.has(k)) plain *= b.options[k]?.length ?? 1;
  const list = [...involved].sort((x, y) => x - y); // `when` reads only earlier knobs
  const point = new Array<number>(n).fill(0);
  const rec = (i: number): number => {
    const k = list[i];
    if (k === undefined) return 1;
    const [lo, hi] = range(b, k, point);
    let total = 0;
    for (let o = lo; o < hi; o++) {
      point[k] = o;
      total += rec(i + 1);
    }
    point[k] = 0;
    return total;
  };
  return plain * rec(0);
}

/**
 * The feasible points in enumeration order (knobs in file order, last fastest), skipping a whole
 * subtree as soon as a rule whose knobs are all bound fails: a grid sampler over the pruned space.
 */
export function* feasiblePoints(b: BoundSpace): Generator<number[]> {
  const n = b.def.knobs.length;
  const checkAt: number[][] = Array.from({ length: n }, () => []);
  const always: number[] = [];
  b.tables.forEach((t, ri) => {
    if (t.reads.length === 0) always.push(ri);
    else checkAt[Math.max(...t.reads)]?.push(ri);
  });
  const point = new Array<number>(n).fill(0);
  for (const ri of always) {
    const t = b.tables[ri];
    if (t !== undefined && !b.passes(t, point)) return;
  }
  function* rec(k: number): Generator<number[]> {
    if (k === n) {
      yield [...point];
      return;
    }
    const [lo, hi] = range(b, k, point);
    outer: for (let o = lo; o < hi; o++) {
      point[k] = o;
      for (const ri of checkAt[k] ?? []) {
        const t = b.tables[ri];
        if (t !== undefined && !b.passes(t, point)) continue outer;
      }
      yield* rec(k + 1);
    }
    point[k] = 0;
  }
  yield* rec(0);
}
