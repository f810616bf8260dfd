import { checkSlo, type Arrival, type BenchmarkResult, type Slo } from '../domain/index.js';
import { saturationText } from '../diagnose/text.js';

/**
 * The headroom of one replica: the highest traffic it serves within the SLOs, found with a handful of
 * simulated load runs (the same bisection as `tune --objective max-rate`, src/tune/max-rate.ts, but on
 * the simulator and sized for a planner that asks it for several GPU types and sizes). Pure: the
 * simulation is passed in.
 */
export interface Probe {
  /** The run's result, or null when the configuration did not start or crashed (`failure` says why). */
  readonly result: BenchmarkResult | null;
  readonly failure: string | null;
}
export type ProbeFn = (arrival: Arrival, numPrompts: number) => Probe;

export type Headroom =
  /** `atCap`: every probe up to the search's cap passed, so `value` is a lower bound, not a measured limit. */
  | { readonly ok: true; readonly value: number; readonly probes: number; readonly atCap: boolean }
  | { readonly ok: false; readonly reason: string; readonly probes: number };

/** Bisection steps after the bracket is found: the answer is within T/2⁶ of the true headroom. */
const STEPS = 6;
/** The lightest load tried, as a fraction of the saturated throughput: below it, a SLO miss is the size, not the load. */
const LIGHT = 1 / 16;
/** Requests per probe: about 40 s of traffic, within [150, 600] (enough for a p99 of 150 values or more). */
export const promptsFor = (rateRps: number): number => Math.min(600, Math.max(150, Math.round(rateRps * 40)));

/**
 * "TTFT p99 312 ms > 300 ms" for each SLO a result misses; first, a run whose queue grew without bound
 * (it cannot sustain the load: its percentiles measure the run's length, and no SLO holds however they
 * compare) and failed requests.
 */
export function missed(slo: Slo, r: BenchmarkResult): string[] {
  const saturated = saturationText(r.saturation);
  const lost = r.failed > 0 ? [`${r.failed} of ${r.completed + r.failed} requests failed`] : [];
  return [
    ...(saturated === null ? [] : [saturated]),
    ...lost,
    ...checkSlo(slo, r)
      .filter((c) => !c.ok)
      .map((c) => `${c.key.replace(/_ms$/, '')} ${Number.isFinite(c.valueMs) ? c.valueMs.toFixed(0) : '∞'} ms > ${c.limitMs} ms`),
  ];
}

const meets = (slo: Slo, r: BenchmarkResult): boolean => r.completed > 0 && missed(slo, r).length === 0;

/** Doublings of the bracket's top past the burst's rate at most (16× the burst's throughput). */
const MAX_DOUBLINGS = 4;

/**
 * The highest Poisson rate (req/s) one replica sustains within the SLOs. `extraPrompts` lengthens every
 * Poisson probe (the plan gives twice the requests the replica runs at once): a probe too short for its
 * batch to fill and turn over looks like it keeps up at any rate (an 8B on one H100, 1,024 slots, met an
 * 80 ms p99 ITL at 60 req/s over 600 requests and missed it, 98 ms, over 2,648).
 */
export function headroomRate(probe: ProbeFn, slo: Slo, extraPrompts = 0): Headroom {
  let probes = 1;
  const burst = probe({ kind: 'burst' }, 400);
  if (burst.result === null) return { ok: false, reason: burst.failure ?? 'did not start', probes };
  const saturated = burst.result.request_throughput;
  if (!(saturated > 0)) return { ok: false, reason: 'no request completed', probes };
  const at = (rate: number, extra = extraPrompts): Probe => {
    probes++;
    return probe({ kind: 'poisson', rate_rps: rate }, promptsFor(rate) + extra);
  };
  const passes = (rate: number): boolean => {
    const p = at(rate);
    return p.result !== null && meets(slo, p.result);
  };
  let lo = saturated * LIGHT;
  // A sixteenth of the burst's rate fills no batch: the light probe asks only whether the size meets
  // the SLOs at all, which needs no longer run.
  const light = at(lo, 0);
  if (light.result === null) return { ok: false, reason: light.failure ?? 'crashed under load', probes };
  if (!meets(slo, light.result)) {
    return { ok: false, reason: `misses the SLOs even at ${lo.toFixed(2)} req/s per replica (${missed(slo, light.result).join('; ')})`, probes };
  }
  // The burst's throughput is a scale, not a ceiling: a burst of a few hundred requests drains a batch
  // that never fills (400 of an H100's 1,024 slots: 33.5 req/s, where Poisson arrivals at 50 req/s met
  // the SLOs), so the top of the bracket is raised until a probe misses, as headroomUsers doubles.
  let hi = saturated;
  for (let k = 0; passes(hi); k++) {
    lo = hi;
    if (k === MAX_DOUBLINGS) return { ok: true, value: lo, probes, atCap: true };
    hi *= 2;
  }
  for (let k = 0; k < STEPS; k++) {
    const mid = (lo + hi) / 2;
    if (passes(mid)) lo = mid;
    else hi = mid;
  }
  return { ok: true, value: lo, probes, atCap: false };
}

/** Requests per closed-loop probe of `users`: four each, within [150, 600]. */
export const promptsForUsers = (users: number): number => Math.min(600, Math.max(150, users * 4));

/**
 * The most users (closed-loop concurrency) one replica serves within the SLOs. `extraPrompts(users)`
 * lengthens every probe past the first (the plan gives twice the users the replica runs at once, as its
 * run at the target traffic has): without it a probe of more users than its 600 requests is a burst of
 * 600, never that many users at once, and passes (two H100s, an 8B chat within a 5 s p99 TTFT: 2,048
 * users passed over 600 requests, 2.6 s, and missed over 2,648, 14 s; the plan printed the 2,048 cap
 * as each replica's headroom).
 */
export function headroomUsers(probe: ProbeFn, slo: Slo, maxUsers: number, extraPrompts: (users: number) => number = () => 0): Headroom {
  let probes = 0;
  const at = (users: number): boolean => {
    probes++;
    const p = probe({ kind: 'closed', concurrency: users }, promptsForUsers(users) + extraPrompts(users));
    return p.result !== null && meets(slo, p.result);
  };
  probes++;
  const one = probe({ kind: 'closed', concurrency: 1 }, 150);
  if (one.result === null) return { ok: false, reason: one.failure ?? 'did not start', probes };
  if (!meets(slo, one.result)) return { ok: false, reason: `misses the SLOs even with one user (${missed(slo, one.result).join('; ')})`, probes };
  // Double until a miss (or the cap), then bisect between the last pass and the miss.
  let lo = 1;
  let hi = 2;
  while (hi <= maxUsers && at(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi > maxUsers) return { ok: true, value: lo, probes, atCap: true };
  while (hi - lo > Math.max(1, lo / 32)) {
    const mid = Math.floor((lo + hi) / 2);
    if (at(mid)) lo = mid;
    else hi = mid;
  }
  return { ok: true, value: lo, probes, atCap: false };
}
