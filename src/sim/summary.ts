import { mean, percentileSorted } from '../metrics/index.js';
import type { DesOutput } from './engine.js';
import type { WeightedSample } from './weighted.js';

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
  readonly window: { readonly durationS: number; readonly outputThroughput: number; readonly meanRunning: number } | null;
}

export interface WindowSpec {
  readonly startAfterFirstTokens: number;
  readonly endAfterFinished: number;
}

function stats(xsMs: number[]): LatencyStats {
  const sorted = Float64Array.from(xsMs).sort();
  return { mean: mean(sorted), median: percentileSorted(sorted, 50), p90: percentileSorted(sorted, 90), p99: percentileSorted(sorted, 99) };
}

function steadyWindow(des: DesOutput, spec: WindowSpec): SimSummary['window'] {
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
  return { durationS: t1 - t0, outputThroughput: tokens / (t1 - t0), meanRunning: busy / (t1 - t0) };
}

export function summarizeDes(des: DesOutput, itl: WeightedSample, window?: WindowSpec): SimSummary {
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
    window: window === undefined ? null : steadyWindow(des, window),
  };
}
