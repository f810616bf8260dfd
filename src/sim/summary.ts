import { mean, percentileSorted } from '../metrics/index.js';
import type { DesOutput } from './engine.js';
import type { WeightedSample } from './weighted.js';
import { windowEnergy, type EnergyTrace, type WindowEnergy } from './energy.js';
import { detectSaturation, type SimSaturation } from './saturation.js';

/**
 * The headline figures of a simulated run, with `vllm bench serve`'s definitions (TTFT = first token −
 * send, TPOT = (E2EL − TTFT)/(n − 1) for n > 1, ITL = every gap pooled, duration = last token − first
 * send), from the DES's per-request first and last token times and its pooled gaps.
 */
export interface LatencyStats {
  readonly mean: number;
  readonly median: number;
  readonly p90: number;
  readonly p99: number;
}

export interface SimSummary {
  readonly completed: number;
  readonly rejected: number;
  readonly durationS: number;
  readonly outputTokens: number;
  readonly inputTokens: number;
  readonly outputThroughput: number;
  readonly requestThroughput: number;
  readonly ttftMs: LatencyStats;
  readonly tpotMs: LatencyStats;
  readonly itlMs: LatencyStats;
  readonly e2elMs: LatencyStats;
  readonly preemptions: number;
  readonly steps: number;
  /**
   * ML.ENERGY's steady-state window, when asked for: from the instant `startAfterFirstTokens` requests
   * have their first token to the instant `endAfterFinished` have finished; tokens emitted inside it
   * (each request's tokens taken as evenly spread between its first and last) per second, and the mean
   * number of requests between their first and last token.
   */
  readonly window: { readonly startS: number; readonly endS: number; readonly durationS: number; readonly outputThroughput: number; readonly meanRunning: number } | null;
  /**
   * The GPUs' power and energy (physics/power.ts) over the steady-state window when there is one, else
   * over the load window (first request sent to last token); null when the run had no power model.
   */
  readonly energy: SimEnergy | null;
  /**
   * Whether an open-loop run kept up with its arrivals (saturation.ts): a saturated run's latencies grow
   * with its length and are no steady state. Null for a closed loop, a burst or too few requests.
   */
  readonly saturation: SimSaturation | null;
}

/** Energy over a window, with the output tokens generated in it. */
export interface SimEnergy extends WindowEnergy {
  /** `steady-state`: ML.ENERGY's window; `load`: first request sent to last token. */
  readonly rule: 'steady-state' | 'load';
  readonly outputTokens: number;
  /** Joules per output token over the window; null when none was generated in it. */
  readonly energyPerOutputTokenJ: number | null;
}

export interface WindowSpec {
  readonly startAfterFirstTokens: number;
  readonly endAfterFinished: number;
}

function stats(xsMs: number[]): LatencyStats {
  const sorted = Float64Array.from(xsMs).sort();
  return { mean: mean(sorted), median: percentileSorted(sorted, 50), p90: percentileSorted(sorted, 90), p99: percentileSorted(sorted, 99) };
}

export function steadyWindow(des: DesOutput, spec: WindowSpec): SimSummary['window'] {
  const live = des.requests.map((r) => r.sim).filter((s): s is NonNullable<typeof s> => s !== null && s.numOutput > 0);
  const firsts = live.map((s) => s.firstTokenS).sort((a, b) => a - b);
  const lasts = live.map((s) => s.lastTokenS).sort((a, b) => a - b);
  const t0 = firsts[Math.min(firsts.length, spec.startAfterFirstTokens) - 1];
  const t1 = lasts[Math.min(lasts.length, spec.endAfterFinished) - 1];
  if (t0 === undefined || t1 === undefined || !(t1 > t0)) return null;
  let tokens = 0;
  let busy = 0;
  for (const s of live) {
    const lo = Math.max(t0, s.firstTokenS);
    const hi = Math.min(t1, s.lastTokenS);
    if (hi < lo) continue;
    busy += hi - lo;
    const span = s.lastTokenS - s.firstTokenS;
    tokens += span > 0 ? ((hi - lo) / span) * (s.numOutput - 1) : 0;
  }
  return { startS: t0, endS: t1, durationS: t1 - t0, outputThroughput: tokens / (t1 - t0), meanRunning: busy / (t1 - t0) };
}

/**
 * The run's energy: over the steady-state window when it was reached (its tokens as the window counts
 * them), else over the load window with every output token. Null without a power model.
 */
export function runEnergy(des: DesOutput, window: SimSummary['window'], load: { startS: number; endS: number; outputTokens: number }, idleGpus = 0): SimEnergy | null {
  const traces = des.replicas.map((r) => r.energy).filter((e): e is EnergyTrace => e !== null);
  if (traces.length === 0) return null;
  const rule = window === null ? 'load' : 'steady-state';
  const span = window === null ? load : { startS: window.startS, endS: window.endS, outputTokens: window.outputThroughput * window.durationS };
  const e = windowEnergy(traces, span.startS, span.endS, idleGpus);
  if (e === null) return null;
  return { ...e, rule, outputTokens: span.outputTokens, energyPerOutputTokenJ: span.outputTokens > 0 ? e.energyJ / span.outputTokens : null };
}

/**
 * ML.ENERGY's steady-state window for a run (github.com/ml-energy/benchmark; arXiv 2505.06371): from when as many
 * requests as can run at once have their first token to when all but that many and one have finished.
 * "As many as can run at once" is max_num_seqs × DP replicas, or the client's concurrency cap when it is
 * lower (a closed loop of 64 users never fills 256 slots); ML.ENERGY's own runs send everything at t = 0,
 * where the two agree.
 */
export function steadyStateSpec(completed: number, maxRunning: number): WindowSpec {
  const k = Math.max(1, Math.min(completed, maxRunning));
  return { startAfterFirstTokens: k, endAfterFinished: completed - k - 1 };
}

/** `stageSpans`: the workload's rate stages in run seconds (saturation.ts `stageSpansS`), judged one by one. */
export function summarizeDes(des: DesOutput, itl: WeightedSample, window?: WindowSpec, stageSpans: readonly (readonly [number, number])[] = [], idleGpus = 0): SimSummary {
  const ttft: number[] = [];
  const tpot: number[] = [];
  const e2el: number[] = [];
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  let outputTokens = 0;
  let inputTokens = 0;
  let rejected = 0;
  for (const r of des.requests) {
    start = Math.min(start, r.sendS);
    const sim = r.sim;
    if (r.rejected || sim === null || sim.numOutput === 0) {
      rejected++;
      continue;
    }
    const t = sim.firstTokenS - r.sendS;
    const e = sim.lastTokenS - r.sendS;
    ttft.push(t * 1000);
    e2el.push(e * 1000);
    if (sim.numOutput > 1) tpot.push(((e - t) / (sim.numOutput - 1)) * 1000);
    end = Math.max(end, sim.lastTokenS);
    outputTokens += sim.numOutput;
    inputTokens += sim.promptTokens;
  }
  const completed = ttft.length;
  const durationS = completed === 0 ? 0 : Math.max(0, end - start);
  const [p50, p90, p99] = itl.percentiles([50, 90, 99]);
  const steady = window === undefined ? null : steadyWindow(des, window);
  return {
    completed,
    rejected,
    durationS,
    outputTokens,
    inputTokens,
    outputThroughput: durationS > 0 ? outputTokens / durationS : 0,
    requestThroughput: durationS > 0 ? completed / durationS : 0,
    ttftMs: stats(ttft),
    tpotMs: stats(tpot),
    itlMs: { mean: itl.mean() * 1000, median: (p50 ?? 0) * 1000, p90: (p90 ?? 0) * 1000, p99: (p99 ?? 0) * 1000 },
    e2elMs: stats(e2el),
    preemptions: des.replicas.reduce((s, rep) => s + rep.preemptions, 0),
    steps: des.replicas.reduce((s, rep) => s + rep.steps, 0),
    window: steady,
    energy: runEnergy(des, steady, { startS: start, endS: end, outputTokens }, idleGpus),
    saturation: detectSaturation(des, stageSpans),
  };
}
