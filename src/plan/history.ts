import type { BenchmarkResult } from '../domain/index.js';

/**
 * What a user's own runs say about the simulator on their GPU and model: each stored run is simulated
 * again with its own configuration and workload, and the ratios of its decode speed (mean TPOT) and p99
 * latencies are kept. Their geometric means scale the planner's headroom and latencies for that GPU
 * (`source: measured`), and their spread (with the count) replaces the simulator's published error as
 * the uncertainty. A handful of runs on one GPU says nothing of another: each GPU has its own.
 */
export interface HistoryCorrection {
  readonly runs: number;
  /**
   * simulated ÷ measured mean TPOT (geometric mean): how fast the real server decodes against the
   * simulator's, and so how its capacity compares. Not the throughput ratio: below saturation an
   * open-loop run's throughput is the offered load, whatever the server's speed.
   */
  readonly speedFactor: number;
  /** measured ÷ simulated p99 TTFT and ITL, pooled (geometric mean). */
  readonly latencyFactor: number;
  /** σ of log(speed ratio), with a floor for few runs: the ±2σ the answer states. */
  readonly logSd: number;
}

/** Fewer runs than this and the correction is not made: one run's luck is not the GPU's. */
export const MIN_RUNS = 2;
/** The spread assumed of a correction from a few runs (the σ of one ratio in a well-behaved history). */
const FLOOR_LOG_SD = 0.05;

export interface RunPair {
  readonly measured: BenchmarkResult;
  readonly simulated: BenchmarkResult;
}

const logRatio = (m: number, s: number): number | null => (m > 0 && s > 0 && Number.isFinite(m) && Number.isFinite(s) ? Math.log(m / s) : null);

export function historyCorrection(pairs: readonly RunPair[]): HistoryCorrection | null {
  const speed: number[] = [];
  const lat: number[] = [];
  for (const { measured: m, simulated: s } of pairs) {
    if (m.completed === 0 || s.completed === 0) continue;
    const t = logRatio(s.mean_tpot_ms, m.mean_tpot_ms);
    if (t !== null) speed.push(t);
    // A simulated run whose queue grew without bound has p99s that measure its length, not the server:
    // no latency ratio to learn from it (its decode speed is still the simulator's).
    if (s.saturation?.saturated === true) continue;
    for (const [a, b] of [
      [m.p99_ttft_ms, s.p99_ttft_ms],
      [m.p99_itl_ms, s.p99_itl_ms],
    ] as const) {
      const l = logRatio(a, b);
      if (l !== null) lat.push(l);
    }
  }
  if (speed.length < MIN_RUNS) return null;
  const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const ms = mean(speed);
  const sd = Math.sqrt(speed.reduce((a, x) => a + (x - ms) ** 2, 0) / (speed.length - 1));
  return {
    runs: speed.length,
    speedFactor: Math.exp(ms),
    latencyFactor: lat.length === 0 ? 1 : Math.exp(mean(lat)),
    // The mean of n ratios is known to σ/√n, but the next deployment is one more draw: σ, floored.
    logSd: Math.max(FLOOR_LOG_SD, sd),
  };
}
