import type { Arrival, LengthDist, SharedPrefix } from '../domain/index.js';
import type { TraceRequest } from './request.js';
import { normalCdf } from '../util/normal.js';
import { clockTickMs, spreadOverTick } from '../util/clock-tick.js';
import { extentOf } from '../util/extent.js';
import { createRng } from '../util/rng.js';

/**
 * The distributions a workload file can hold, fitted to a trace: lengths as a lognormal clipped to
 * the trace's [min, max] whose clipped mean equals the trace's mean (the spread from the logs'
 * standard deviation); arrivals as a gamma process (vLLM's burstiness is its shape) at the trace's mean
 * rate, the shape fitted to the inter-arrival gaps by maximum likelihood; shared blocks as shared prefixes.
 */

/** E[min(max(X, lo), hi)] for X lognormal(mu, sigma). */
export function clippedLognormalMean(mu: number, sigma: number, lo: number, hi: number): number {
  const a = (Math.log(lo) - mu) / sigma;
  const b = (Math.log(hi) - mu) / sigma;
  const inside = Math.exp(mu + (sigma * sigma) / 2) * (normalCdf(b - sigma) - normalCdf(a - sigma));
  return lo * normalCdf(a) + inside + hi * (1 - normalCdf(b));
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
const sig4 = (x: number): number => Number(x.toPrecision(4));

function meanOf(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

function stdOf(xs: readonly number[], m: number): number {
  let s = 0;
  for (const x of xs) s += (x - m) * (x - m);
  return Math.sqrt(s / xs.length);
}

/**
 * Positive lengths → a LengthDist: `fixed` when they are all equal, else a lognormal on [min, max]
 * with σ of the logs, and μ solved (bisection; the clipped mean rises with μ) so that the clipped
 * mean is the sample's. `maxBound` widens max when the caller needs a safe upper bound.
 */
export function fitLength(xs: readonly number[], maxBound?: number): LengthDist {
  const extent = extentOf(xs);
  const min = Math.max(1, extent.min);
  const max = Math.max(min, maxBound ?? 0, extent.max);
  if (min === max) return { dist: 'fixed', value: min };
  const logs = xs.map((x) => Math.log(Math.max(1, x)));
  const sigma = Math.max(stdOf(logs, meanOf(logs)), 1e-3);
  const target = meanOf(xs);
  let lo = Math.log(min) - 10 * sigma;
  let hi = Math.log(max) + 10 * sigma;
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (clippedLognormalMean(mid, sigma, min, max) < target) lo = mid;
    else hi = mid;
  }
  const mu = (lo + hi) / 2;
  const mean = Math.exp(mu + (sigma * sigma) / 2);
  const std = mean * Math.sqrt(Math.expm1(sigma * sigma));
  return { dist: 'lognormal', mean: round1(mean), std: Math.max(0.1, round1(std)), min, max };
}

export interface ArrivalFit {
  readonly arrival: Arrival;
  /** Mean rate over the trace (after speed), req/s; null for a single instant. */
  readonly rateRps: number | null;
  /** Coefficient of variation of the inter-arrival gaps (times spread over their clock tick); null with fewer than two gaps. */
  readonly cv: number | null;
  /** Seconds from the first arrival to the last, after speed. */
  readonly spanS: number;
}

/** Times in the known traces are given to the ms at best. */
const TIME_RESOLUTION_S = 0.001;

/** A CV below this is a clock, not a process: constant arrivals. */
const CONSTANT_CV = 1e-3;

/** Any fixed seed: the spread of times over their clock tick only has to be the same on every fit. */
const SPREAD_SEED = 0x7a11;

/** Times cut to a tick, spread over it (seeded, so the fit is the same every time). */
function spreadOverTicks(arrivalMs: readonly number[], tickMs: number): number[] {
  const rng = createRng(SPREAD_SEED);
  return spreadOverTick(arrivalMs, tickMs, () => rng.next());
}

/**
 * `spreadTicks`: the format's times are known to be cut to a clock tick (BurstGPT's whole seconds),
 * so times on a tick coarser than the ms are spread over it; a format whose times are exact as
 * written (lm-bench's own JSONL, where whole seconds may be meant) is fitted as it is.
 */
export function fitArrival(arrivalMs: readonly number[], speed: number, spreadTicks = false): ArrivalFit {
  const n = arrivalMs.length;
  const spanS = n === 0 ? 0 : (arrivalMs[n - 1] as number) / 1000 / speed;
  if (n < 2 || spanS <= 0) return { arrival: { kind: 'burst' }, rateRps: null, cv: null, spanS };
  // n − 1 gaps over the span: the gamma process's mean gap is 1/rate.
  const rate = (n - 1) / spanS;
  const gapsOf = (ms: readonly number[]): number[] => {
    const out: number[] = [];
    for (let i = 1; i < ms.length; i++) out.push(((ms[i] as number) - (ms[i - 1] as number)) / 1000 / speed);
    return out;
  };
  const raw = gapsOf(arrivalMs);
  const rawCv = stdOf(raw, meanOf(raw)) / meanOf(raw);
  // A clock before the spread: requests exactly a tick apart are constant arrivals, not jittered ones.
  if (raw.length < 2 || rawCv < CONSTANT_CV) return { arrival: { kind: 'constant', rate_rps: sig4(rate) }, rateRps: rate, cv: raw.length < 2 ? null : rawCv, spanS };
  const tick = spreadTicks ? clockTickMs(arrivalMs) : null;
  if (tick === null) {
    // Times are given to the ms at best: a gap of 0 (requests of one instant) counts as half of that.
    const shape = gammaShapeMle(raw, TIME_RESOLUTION_S / 2 / speed);
    return { arrival: { kind: 'gamma', rate_rps: sig4(rate), burstiness: sig4(shape) }, rateRps: rate, cv: rawCv, spanS };
  }
  const gaps = gapsOf(spreadOverTicks(arrivalMs, tick));
  const cv = stdOf(gaps, meanOf(gaps)) / meanOf(gaps);
  // Spread gaps are 0 only by a tie of two draws: a millionth of a tick stands in for it.
  const shape = gammaShapeMle(gaps, (tick * 1e-6) / 1000 / speed);
  return { arrival: { kind: 'gamma', rate_rps: sig4(rate), burstiness: sig4(shape) }, rateRps: rate, cv, spanS };
}

export interface PrefixFit {
  readonly sharedPrefix: SharedPrefix | undefined;
  /** Per request, prompt tokens in leading blocks that another request of the trace also holds. */
  readonly sharedTokens: readonly number[];
  /** Share of all prompt tokens that sit in such shared blocks. */
  readonly sharedTokenFraction: number;
  /** Share of all prompt tokens a request finds already seen (an unbounded prefix cache's hit rate). */
  readonly reusedTokenFraction: number;
}

/**
 * Shared blocks → the Workload's shared-prefix form: `fraction` of requests start with one of `groups`
 * prefixes of `length` tokens. The length is the mean shared run of the requests that have one (so the
 * shared tokens per request match the trace's); the groups are as many as make the first uses of each
 * prefix cost what the trace's first uses of its shared blocks cost (shared − reused tokens).
 */
export function fitSharedPrefix(requests: readonly TraceRequest[], blockTokens: number | null): PrefixFit {
  const zero = requests.map(() => 0);
  if (blockTokens === null) return { sharedPrefix: undefined, sharedTokens: zero, sharedTokenFraction: 0, reusedTokenFraction: 0 };
  const uses = new Map<number, number>();
  for (const r of requests) for (const id of r.hashIds ?? []) uses.set(id, (uses.get(id) ?? 0) + 1);
  const seen = new Set<number>();
  const shared: number[] = [];
  let sharedSum = 0;
  let reusedSum = 0;
  let promptSum = 0;
  let sharing = 0;
  for (const r of requests) {
    const ids = r.hashIds ?? [];
    let k = 0;
    while (k < ids.length && (uses.get(ids[k] as number) ?? 0) >= 2) k++;
    let h = 0;
    while (h < ids.length && seen.has(ids[h] as number)) h++;
    for (const id of ids) seen.add(id);
    const s = Math.min(r.inputTokens, k * blockTokens);
    shared.push(s);
    sharedSum += s;
    reusedSum += Math.min(r.inputTokens, h * blockTokens);
    promptSum += r.inputTokens;
    if (s > 0) sharing++;
  }
  if (sharing === 0) return { sharedPrefix: undefined, sharedTokens: shared, sharedTokenFraction: 0, reusedTokenFraction: 0 };
  const length = Math.max(1, Math.round(sharedSum / sharing));
  const groups = Math.max(1, Math.round((sharedSum - reusedSum) / length));
  return {
    sharedPrefix: { groups, length, fraction: sig4(sharing / requests.length) },
    sharedTokens: shared,
    sharedTokenFraction: sharedSum / promptSum,
    reusedTokenFraction: reusedSum / promptSum,
  };
}

/**
 * The maximum-likelihood shape of a gamma fitted to the gaps (Minka's closed form from
 * s = ln(mean) − mean(ln x), within 1.5% of the exact root). Not 1/CV²: one outage-long gap makes
 * the CV huge and the fitted process a few giant bursts (the Azure code trace: CV 11.7, shape 0.007,
 * four times the trace's simulated TTFT), where the likelihood weighs every gap alike.
 */
export function gammaShapeMle(gaps: readonly number[], floorS: number): number {
  const xs = gaps.map((g) => Math.max(g, floorS));
  const m = meanOf(xs);
  const sLog = Math.max(Math.log(m) - meanOf(xs.map(Math.log)), 1e-9);
  return (3 - sLog + Math.sqrt((sLog - 3) ** 2 + 24 * sLog)) / (12 * sLog);
}
