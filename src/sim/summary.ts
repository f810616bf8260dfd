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
}

function stats(xsMs: number[]): LatencyStats {
  const sorted = Float64Array.from(xsMs).sort();
  return { mean: mean(sorted), median: percentileSorted(sorted, 50), p90: percentileSorted(sorted, 90), p99: percentileSorted(sorted, 99) };
}

export function summarizeDes(des: DesOutput, itl: WeightedSample): SimSummary {
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
  };
}
