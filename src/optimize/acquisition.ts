import type { Objective } from '../domain/index.js';
import { normalCdf } from '../util/normal.js';
import { QUEUE_TARGETS, type TargetName } from '../surrogate/targets.js';
import { hvImprovement2d, hypervolume, prepareFront2d, type Front2d } from './hypervolume.js';
import { objectiveTarget, type Constraint } from './objectives.js';
import type { Point } from './pareto.js';

/**
 * Expected hypervolume improvement estimated from an ensemble's draws, weighted by the probability
 * of starting and of meeting the SLOs, and the believer step that turns it into a batch of q
 * distinct proposals. Pure: predictions in, indices out.
 *
 * Each of the S ensemble members is one draw of the response surface (members share their bootstrap
 * sample across targets, so a draw is a coherent guess at all targets at once). For a draw that meets
 * every SLO, the improvement is the hypervolume it adds to the current feasible front; for a draw that
 * breaks one, nothing. Averaging over draws gives EHVI × P(meets SLO) jointly, not as a product of
 * independent marginals.
 */
export interface CandidatePredictions {
  readonly count: number;
  readonly draws: number;
  /** Per target, count × draws values on the natural scale, candidate-major (i * draws + s). */
  readonly targets: Partial<Record<TargetName, Float64Array>>;
  /** Probability that each candidate starts (the feasibility classifier). */
  readonly pStart: Float64Array;
  /**
   * Probability that a started candidate keeps up with the workload's arrivals (the sustain
   * classifier); absent: 1. One that cannot meets no latency SLO, so it weighs every P(meets SLO).
   */
  readonly pSustain?: Float64Array;
}

export interface AcquisitionContext {
  readonly objectives: readonly Objective[];
  readonly constraints: readonly Constraint[];
  /** Observed feasible points (minimization space). */
  readonly front: readonly Point[];
  readonly ref: Point;
}

function drawVector(p: CandidatePredictions, objectives: readonly Objective[], i: number, s: number, out: number[]): void {
  for (let k = 0; k < objectives.length; k++) {
    const o = objectives[k];
    if (o === undefined) continue;
    const v = p.targets[objectiveTarget(o.name)]?.[i * p.draws + s] ?? Number.NaN;
    out[k] = o.direction === 'maximize' ? -v : v;
  }
}

/**
 * P(keeps up) where the question reads a queue's figure: an SLO to meet, or an objective on TTFT or E2E
 * latency (QUEUE_TARGETS), whose predictions were learned from runs that kept up only. Throughput alone
 * asks nothing of the queue.
 */
function sustains(p: CandidatePredictions, constraints: readonly Constraint[], i: number, objectives: readonly Objective[] = []): number {
  if (p.pSustain === undefined) return 1;
  if (constraints.length === 0 && !objectives.some((o) => QUEUE_TARGETS.includes(objectiveTarget(o.name)))) return 1;
  return p.pSustain[i] ?? 1;
}

/** P(keeps up) where no SLO carries it already (P(meets SLO) includes it wherever there are SLOs). */
const unconstrainedSustain = (p: CandidatePredictions, ctx: AcquisitionContext, i: number): number => (ctx.constraints.length > 0 ? 1 : sustains(p, [], i, ctx.objectives));

function drawMeets(p: CandidatePredictions, constraints: readonly Constraint[], i: number, s: number): boolean {
  for (const c of constraints) {
    const v = p.targets[c.target]?.[i * p.draws + s];
    if (v === undefined || !(v <= c.limitMs)) return false;
  }
  return true;
}

/** P(meets every SLO) per candidate: the fraction of draws that do, for one that keeps up with the load. */
export function probabilityMeetsSlo(p: CandidatePredictions, constraints: readonly Constraint[], indices?: readonly number[]): Float64Array {
  const out = new Float64Array(p.count);
  const idx = indices ?? [...Array(p.count).keys()];
  for (const i of idx) {
    let ok = 0;
    for (let s = 0; s < p.draws; s++) if (drawMeets(p, constraints, i, s)) ok++;
    out[i] = (sustains(p, constraints, i) * ok) / p.draws;
  }
  return out;
}

/** The members' mean and sample standard deviation of log(figure) for candidate `i` (k draws each; 0 spread for one). */
export function logMeanSd(draws: Float64Array, i: number, k: number): { mu: number; sd: number } {
  let mu = 0;
  for (let m = 0; m < k; m++) mu += Math.log(draws[i * k + m] ?? Number.NaN) / k;
  let v = 0;
  for (let m = 0; m < k; m++) v += (Math.log(draws[i * k + m] ?? Number.NaN) - mu) ** 2;
  return { mu, sd: k > 1 ? Math.sqrt(v / (k - 1)) : 0 };
}

/**
 * P(meets every SLO) per candidate as an answer states it beside its intervals: each SLO's figure
 * log-normal about the members' mean, its spread the members' widened by the validation's interval
 * scale (`scaleOf`, what makes the printed ±2σ cover ~95% of held-out values), the SLOs taken as
 * independent (a floor where the figures rise together), times P(keeps up). The members' own fraction
 * (`probabilityMeetsSlo`) knows nothing of the widening: three members under an SLO said 100% beside
 * an interval reaching 35 times past it. The search's acquisition keeps the draws (their joint
 * spread ranks candidates; it states no probability).
 */
export function probabilityMeetsSloWidened(p: CandidatePredictions, constraints: readonly Constraint[], scaleOf: (t: TargetName) => number): Float64Array {
  const out = new Float64Array(p.count);
  const k = p.draws;
  // SLOs on one predicted figure (ttft_p90 and ttft_p99 both read ttft_p99_ms) are one event: its tightest limit.
  const tightest = new Map<TargetName, number>();
  for (const c of constraints) tightest.set(c.target, Math.min(c.limitMs, tightest.get(c.target) ?? Number.POSITIVE_INFINITY));
  for (let i = 0; i < p.count; i++) {
    let prob = sustains(p, constraints, i);
    for (const [target, limitMs] of tightest) {
      const d = p.targets[target];
      if (d === undefined) {
        prob = 0;
        break;
      }
      const { mu, sd: memberSd } = logMeanSd(d, i, k);
      const sd = memberSd * scaleOf(target);
      const margin = Math.log(limitMs) - mu;
      // A NaN figure (a member with none) meets nothing; agreeing members decide by their mean alone.
      prob *= Number.isNaN(margin) ? 0 : sd > 0 ? normalCdf(margin / sd) : margin >= 0 ? 1 : 0;
    }
    out[i] = prob;
  }
  return out;
}

/**
 * Constrained EHVI per candidate (0 for candidates not in `indices` when given). Two objectives use
 * the O(front) improvement formula; three or more recompute the hypervolume exactly (or by
 * Monte-Carlo past three), so pass a short `indices` list there.
 */
export function constrainedEhvi(p: CandidatePredictions, ctx: AcquisitionContext, indices?: readonly number[]): Float64Array {
  const out = new Float64Array(p.count);
  const m = ctx.objectives.length;
  const idx = indices ?? [...Array(p.count).keys()];
  const v: number[] = new Array<number>(m).fill(0);
  const front2: Front2d | null = m === 2 ? prepareFront2d(ctx.front, ctx.ref) : null;
  const baseHv = m === 2 ? 0 : hypervolume(ctx.front, ctx.ref);
  for (const i of idx) {
    let sum = 0;
    for (let s = 0; s < p.draws; s++) {
      if (!drawMeets(p, ctx.constraints, i, s)) continue;
      drawVector(p, ctx.objectives, i, s, v);
      if (v.some((x) => !Number.isFinite(x))) continue;
      if (front2 !== null) sum += hvImprovement2d(front2, v[0] ?? 0, v[1] ?? 0);
      else if (m === 1) sum += Math.max(0, Math.min(ctx.ref[0] ?? 0, ...ctx.front.map((f) => f[0] ?? 0)) - (v[0] ?? 0));
      else sum += Math.max(0, hypervolume([...ctx.front, [...v]], ctx.ref) - baseHv);
    }
    out[i] = ((p.pStart[i] ?? 0) * sustains(p, ctx.constraints, i, ctx.objectives) * sum) / p.draws;
  }
  return out;
}

/** The ensemble mean of every objective for one candidate (the "believed" outcome). */
export function meanVector(p: CandidatePredictions, objectives: readonly Objective[], i: number): number[] {
  const v = new Array<number>(objectives.length).fill(0);
  const tmp = new Array<number>(objectives.length).fill(0);
  for (let s = 0; s < p.draws; s++) {
    drawVector(p, objectives, i, s, tmp);
    for (let k = 0; k < v.length; k++) v[k] = (v[k] ?? 0) + (tmp[k] ?? 0) / p.draws;
  }
  return v;
}

export interface BatchOptions {
  readonly q: number;
  /** Candidates rescored after each believer step (the best by the first pass). */
  readonly poolSize: number;
  /** Encoded candidate vectors (count × dims) for the near-duplicate rule. */
  readonly encoded: Float32Array;
  readonly dims: number;
  /** Candidates closer than this (Euclidean, encoded space) to a chosen one are skipped. */
  readonly minDistance: number;
  /**
   * Rank fallback candidates by their predicted nearness to the SLOs (default true). False where the
   * predictions cannot tell candidates apart on it: the simulator prior prices every candidate by its
   * physics baseline times one shared offset, and that baseline misranks p99 TTFT (configurations it
   * prices alike measured 211 and 570 ms), so the candidates' own order (local moves around the runs
   * nearest the SLOs) serves better until trees are fitted.
   */
  readonly nearness?: boolean;
}

export interface BatchPick {
  readonly index: number;
  readonly ehvi: number;
  readonly pMeetsSlo: number;
  readonly pStart: number;
  /** true when no candidate had any expected improvement and the pick fell back (`fallbackOrder`: feasibility × spread, then nearness to the SLOs). */
  readonly fallback: boolean;
}

function distance2(e: Float32Array, dims: number, a: number, b: number): number {
  let d = 0;
  for (let j = 0; j < dims; j++) {
    const x = (e[a * dims + j] ?? 0) - (e[b * dims + j] ?? 0);
    d += x * x;
  }
  return d;
}

/** Spread of a candidate's draws on the first objective (log ratio): an exploration signal. */
function spread(p: CandidatePredictions, objectives: readonly Objective[], i: number): number {
  const o = objectives[0];
  if (o === undefined) return 0;
  const arr = p.targets[objectiveTarget(o.name)];
  if (arr === undefined) return 0;
  let lo = Number.POSITIVE_INFINITY;
  let hi = 0;
  for (let s = 0; s < p.draws; s++) {
    const x = arr[i * p.draws + s] ?? 0;
    lo = Math.min(lo, x);
    hi = Math.max(hi, x);
  }
  return lo > 0 ? Math.log(hi / lo) : 0;
}

/**
 * How near a candidate is believed to come to the SLOs it breaks: for each SLO's figure, the members'
 * mean log-ratio of the figure to its limit less one members' spread (the optimistic side: a candidate
 * the ensemble is unsure of may be nearer than its mean says, and measuring it teaches the most), the
 * worst SLO's taken, negated (0 at the limit, higher is nearer), plus log(P(start) × P(keeps up)), which
 * counts a candidate half as likely to start or keep up as one twice as far off. SLOs on one figure are
 * one event at its tightest limit, as `probabilityMeetsSloWidened` reads them. A figure the members
 * cannot give (NaN) is infinitely far. Without SLOs every candidate is at 0 plus its log-probabilities.
 */
export function sloNearness(p: CandidatePredictions, constraints: readonly Constraint[], i: number, objectives: readonly Objective[] = []): number {
  const tightest = new Map<TargetName, number>();
  for (const c of constraints) tightest.set(c.target, Math.min(c.limitMs, tightest.get(c.target) ?? Number.POSITIVE_INFINITY));
  let worst = Number.NEGATIVE_INFINITY;
  for (const [target, limitMs] of tightest) {
    const d = p.targets[target];
    if (d === undefined) return Number.NEGATIVE_INFINITY;
    const { mu, sd } = logMeanSd(d, i, p.draws);
    const gap = mu - sd - Math.log(limitMs);
    if (Number.isNaN(gap)) return Number.NEGATIVE_INFINITY;
    worst = Math.max(worst, gap);
  }
  const chance = (p.pStart[i] ?? 0) * sustains(p, constraints, i, objectives);
  return (tightest.size > 0 ? -worst : 0) + Math.log(chance);
}

/**
 * The order a batch falls back to when no candidate has any expected improvement (every draw breaks an
 * SLO, say): P(start) × P(meets SLO) × P(keeps up) × (1 + spread) first; where that is 0 (no draw of
 * the candidate meets the SLOs), nearness to the SLOs (`sloNearness`, unless `nearness` is off); then P(start) × P(keeps up), then
 * P(start), then the candidates' own order (local moves around the measured runs nearest the SLOs
 * first, surrogate-sampler.ts). Ranked by the products alone, SLOs nothing can meet tied every
 * candidate at 0 but for P(start), and the candidates' own order decided whatever the model predicted.
 * A trial that cannot start costs a real GPU a server launch and teaches the front nothing, so a
 * candidate believed never to start (P(start) = 0) is left out while any can start. All candidates are
 * ranked, not the EHVI pool, which is arbitrary when EHVI is 0 everywhere; the batch's distance rule
 * keeps the picks apart.
 */
function fallbackOrder(p: CandidatePredictions, ctx: AcquisitionContext, pSlo: Float64Array, nearness = true): number[] {
  const keys: number[][] = [];
  let order: number[] = [];
  for (let i = 0; i < p.count; i++) {
    const start = p.pStart[i] ?? 0;
    const keep = sustains(p, ctx.constraints, i, ctx.objectives);
    const slo = start * (pSlo[i] ?? 0) * unconstrainedSustain(p, ctx, i) * (1 + spread(p, ctx.objectives, i));
    // Nearness counts only where no draw meets the SLOs (the first key is 0): otherwise it is the first key's.
    const near = nearness && start > 0 && slo === 0 ? sloNearness(p, ctx.constraints, i, ctx.objectives) : Number.NEGATIVE_INFINITY;
    keys.push([slo, near, start * keep, start]);
    if (start > 0) order.push(i);
  }
  // Where nothing is believed to start (a feasibility model fitted on failures alone is 0 everywhere), the
  // order is the candidates' own: a trial then is how the model learns, and stopping would end the study.
  if (order.length === 0) order = [...Array(p.count).keys()];
  // Descending; equal keys (two infinities among them) compare as 0, not NaN, so the order stays total.
  const byKeys = (a: number, b: number): number => {
    const ka = keys[a] ?? [];
    const kb = keys[b] ?? [];
    for (let k = 0; k < ka.length; k++) {
      const x = ka[k] ?? 0;
      const y = kb[k] ?? 0;
      if (x !== y) return y - x;
    }
    return a - b;
  };
  return order.sort(byKeys);
}

/**
 * q proposals by greedy constrained EHVI with a kriging-believer step: after each pick its mean
 * prediction joins the front as if measured (when believed to meet the SLOs), the pool is rescored,
 * and candidates within `minDistance` of a pick are skipped, so the q are not near-duplicates. With
 * no expected improvement left, the rest come from `fallbackOrder`; fewer than q come back when only
 * candidates believed never to start are left beside ones that can.
 */
export function selectBatch(p: CandidatePredictions, ctx: AcquisitionContext, opts: BatchOptions): BatchPick[] {
  const first = ctx.objectives.length === 2 ? constrainedEhvi(p, ctx) : null;
  const pSlo = probabilityMeetsSlo(p, ctx.constraints);
  // First pass ranks everything cheaply when there are 3+ objectives: feasibility × optimism on objective 0.
  const rank = new Float64Array(p.count);
  for (let i = 0; i < p.count; i++) {
    rank[i] = first !== null ? (first[i] ?? 0) : (p.pStart[i] ?? 0) * (pSlo[i] ?? 0) * unconstrainedSustain(p, ctx, i) * (1 + spread(p, ctx.objectives, i));
  }
  const order = [...Array(p.count).keys()].sort((a, b) => (rank[b] ?? 0) - (rank[a] ?? 0));
  const pool = order.slice(0, Math.max(opts.poolSize, opts.q));
  const picks: BatchPick[] = [];
  const front = [...ctx.front];
  const minD2 = opts.minDistance * opts.minDistance;
  const excluded = (i: number): boolean => picks.some((k) => k.index === i || distance2(opts.encoded, opts.dims, i, k.index) < minD2);
  let fallbacks: number[] | null = null;
  for (let round = 0; round < opts.q; round++) {
    const scores = constrainedEhvi(p, { ...ctx, front }, pool);
    let best = -1;
    let bestScore = 0;
    for (const i of pool) {
      if (excluded(i)) continue;
      const sc = scores[i] ?? 0;
      if (sc > bestScore) {
        bestScore = sc;
        best = i;
      }
    }
    const fallback = best < 0;
    if (fallback) fallbacks ??= fallbackOrder(p, ctx, pSlo, opts.nearness !== false);
    const index = fallback ? (fallbacks?.find((i) => !excluded(i)) ?? -1) : best;
    if (index < 0) break;
    picks.push({ index, ehvi: fallback ? 0 : bestScore, pMeetsSlo: pSlo[index] ?? 0, pStart: p.pStart[index] ?? 0, fallback });
    if ((pSlo[index] ?? 0) >= 0.5) front.push(meanVector(p, ctx.objectives, index));
  }
  return picks;
}
